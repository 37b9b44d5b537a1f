/**
 * Faults injected while one mcpvisor serves every toolset under load (jest tests, defined by
 * `faultSuite` so the short form in test/integration/production and the long form in test/load
 * share them): kill -9 of a random worker of every process pool, Chromium killed mid-search, an
 * upstream that hangs or resets, and a full disk under writeFile (a 1 MB tmpfs, when this runs as
 * root and can mount one).
 *
 * Each fault has *affected* calls (running on what is broken: each must end with an isError
 * result whose error code says what happened) and *bystander* calls on other pools, made by
 * `loadClients` sessions in a loop while the fault happens: none of them may fail. Afterwards the
 * pool's workers are all alive again (GET /health) and a fresh call succeeds.
 *
 * Thread pools are not killed: a thread cannot be sent SIGKILL (their crash handling is covered
 * by test/integration/supervisor/pools.test.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorCodeOf } from '../../protocol/results';
import { fixtureConfig } from '../helpers/config';
import type { HttpServer } from '../helpers/mcp';
import { descendants, eventually } from '../helpers/processes';
import { startSerpSite } from '../fixtures/web/serp-site';
import type { LocalSite } from '../fixtures/web/local-site';
import { closeClient, health, LOAD_HTTP, openClient, startServer } from './harness';

type Result = { isError?: boolean; structuredContent?: Record<string, unknown>; _meta?: Record<string, unknown>; content?: unknown };
type Call = { name: string; arguments: Record<string, unknown> };

export interface FaultSuiteOptions {
  /** How many times each fault is injected. */
  rounds: number;
  /** Sessions making bystander calls during each fault. */
  loadClients: number;
}

/** Pids of a process pool's workers: descendants of the server whose command line names `module`. */
function workerPids(server: HttpServer, module: string): number[] {
  return descendants(server.server.child.pid!).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(module);
    } catch {
      return false;
    }
  });
}

/** Chromium's browser processes (not renderers) under the server. */
function chromiumPids(server: HttpServer): number[] {
  return descendants(server.server.child.pid!).filter((pid) => {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      return /chrom/i.test(cmdline.split('\0')[0]) && !cmdline.includes('--type=');
    } catch {
      return false;
    }
  });
}

/** Tries to mount a 1 MB tmpfs on `dir`; false when this is not root or mount is refused. */
function mountTmpfs(dir: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function faultSuite({ rounds, loadClients }: FaultSuiteOptions): void {
  let server: HttpServer;
  let serp: LocalSite;
  let upstream: Server;
  let upstreamOrigin: string;
  let bystanderSite: Server;
  let bystanderOrigin: string;
  let workspace: string;
  let mounted = false;
  const clients: Client[] = [];

  const call = async (client: Client, request: Call): Promise<Result> => (await client.callTool(request)) as Result;

  /**
   * Runs `fault` while `loadClients` sessions call `bystanders` in turn; returns the bystander
   * failures (each call is checked by `ok`).
   */
  async function underLoad(bystanders: Array<{ call: Call; ok: (result: Result) => boolean }>, fault: () => Promise<void>): Promise<{ calls: number; failures: string[] }> {
    let running = true;
    let calls = 0;
    const failures: string[] = [];
    const loops = clients.slice(0, loadClients).map(async (client, i) => {
      for (let n = 0; running && n < 10_000; n++) {
        const { call: request, ok } = bystanders[(i + n) % bystanders.length];
        try {
          const result = await call(client, request);
          calls++;
          if (!ok(result)) failures.push(`${request.name}: ${JSON.stringify(result).slice(0, 200)}`);
        } catch (error) {
          failures.push(`${request.name}: ${String(error).slice(0, 200)}`);
        }
      }
    });
    try {
      await fault();
    } finally {
      running = false;
      await Promise.all(loops);
    }
    return { calls, failures };
  }

  const echo = { call: { name: 'echo', arguments: { text: 'bystander' } }, ok: (r: Result) => !r.isError && r.structuredContent?.text === 'bystander' };
  const thEcho = { call: { name: 'th-echo', arguments: { text: 'bystander' } }, ok: (r: Result) => !r.isError };
  const listDir = { call: { name: 'listDir', arguments: { path: '.' } }, ok: (r: Result) => !r.isError };
  const fetchOk = () => ({ call: { name: 'fetch_web_content', arguments: { url: `${bystanderOrigin}/ok` } }, ok: (r: Result) => !r.isError && JSON.stringify(r.content).includes('Bystander page') });

  async function poolRecovered(name: string): Promise<boolean> {
    return eventually(async () => {
      const { body } = await health(server.baseUrl);
      const pool = body.pools?.find((entry) => entry.name === name) as { alive: number; workers: number; state: string } | undefined;
      return pool !== undefined && pool.alive === pool.workers && pool.state === 'ready';
    }, 30_000);
  }

  beforeAll(async () => {
    serp = await startSerpSite();
    // The faulty upstream (hangs, resets) and, apart from it, the site bystander fetches read.
    upstream = createServer((req) => {
      if (req.url === '/reset') req.socket.destroy();
      // Anything else hangs: never answered; the socket closes when the client goes.
    });
    bystanderSite = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>Bystander</title></head><body><main><h1>Bystander page</h1><p>Bystander page text, long enough to be an article for the reader. '.repeat(3) + '</p></main></body></html>');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    // Node's default 5 s keep-alive races undici's 4 s one when the fetch thread's timers run
    // late under load (a bystander then fails with UND_ERR_SOCKET "other side closed"; reported
    // against the web fetch). The site keeps connections longer so the client always closes first.
    bystanderSite.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => bystanderSite.listen(0, '127.0.0.1', resolve));
    upstreamOrigin = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
    bystanderOrigin = `http://127.0.0.1:${(bystanderSite.address() as { port: number }).port}`;
    workspace = mkdtempSync(path.join(os.tmpdir(), 'mcpvisor-faults-'));
    mounted = mountTmpfs(workspace);
    server = await startServer(
      fixtureConfig({
        process: { workers: 2, concurrency: 8, callTimeoutMs: 15_000 },
        thread: { workers: 2 },
        root: {
          http: LOAD_HTTP,
          // Every round kills a worker of each pool: allow that many restarts in the window.
          pools: { cancelGraceMs: 300, restart: { maxRestarts: 4 * rounds + 4, windowMs: 60_000, backoffBaseMs: 50, backoffMaxMs: 1000 } },
          shell: { enabled: true, workspace, workers: 2, concurrency: 8 },
          web: {
            enabled: true,
            search: { engineUrl: `${serp.origin}/router`, rateLimit: 1000, rateLimitIntervalMs: 1, timeoutMs: 6000, concurrency: 4 },
            fetch: { allowPrivateNetwork: true, rateLimit: 1000, rateLimitIntervalMs: 1, timeoutMs: 5000, threads: 2 },
          },
        },
      }),
    );
    for (let i = 0; i < loadClients + 1; i++) clients.push(await openClient(server.mcpUrl, `faults-${i}`));
  }, 90_000);

  afterAll(async () => {
    await Promise.all(clients.map(closeClient));
    await server?.server.stop(15_000);
    await serp?.close();
    upstream?.closeAllConnections();
    bystanderSite?.closeAllConnections();
    await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (bystanderSite ? bystanderSite.close(() => resolve()) : resolve()));
    if (mounted) execFileSync('umount', [workspace], { stdio: 'ignore' });
    rmSync(workspace, { recursive: true, force: true });
  }, 60_000);

  const probe = () => clients[clients.length - 1];

  const pools = [
    { pool: 'test', module: 'test-worker.js', affected: { name: 'sleep', arguments: { ms: 2500 } }, fresh: echo, bystanders: () => [thEcho, listDir, fetchOk()] },
    { pool: 'shell', module: path.join('workers', 'shell', 'worker.js'), affected: { name: 'exec', arguments: { command: 'sleep 2.5' } }, fresh: listDir, bystanders: () => [echo, thEcho, fetchOk()] },
    { pool: 'web-search', module: 'search-worker.js', affected: { name: 'search', arguments: { query: 'hang on' } }, fresh: { call: { name: 'search', arguments: { query: 'foo' } }, ok: (r: Result) => !r.isError }, bystanders: () => [echo, thEcho, listDir] },
  ];

  it.each(pools)('kill -9 of a random $pool worker fails only the calls it was running, with WORKER_CRASHED, and the pool recovers', async ({ pool, module, affected, fresh, bystanders }) => {
    for (let round = 0; round < rounds; round++) {
      const pids = workerPids(server, module);
      expect(pids.length).toBeGreaterThan(0);
      const victim = pids[Math.floor(Math.random() * pids.length)];
      const inFlight = Array.from({ length: 2 * pids.length }, () => call(probe(), affected as Call));
      const { calls, failures } = await underLoad(bystanders(), async () => {
        await new Promise((resolve) => setTimeout(resolve, 400));
        process.kill(victim, 'SIGKILL');
        const results = await Promise.all(inFlight);
        const codes = results.filter((result) => result.isError).map((result) => errorCodeOf(result));
        // The victim was running some of them; those, and only those, report the crash.
        expect(codes.length).toBeGreaterThan(0);
        expect(new Set(codes)).toEqual(new Set(['WORKER_CRASHED']));
        expect(await poolRecovered(pool)).toBe(true);
      });
      expect(failures).toEqual([]);
      expect(calls).toBeGreaterThan(0);
      expect(workerPids(server, module)).not.toContain(victim);
      const answer = await call(probe(), fresh.call);
      // Says what the fresh call answered when it fails, not only that it did.
      expect({ ok: fresh.ok(answer), answer: fresh.ok(answer) ? 'ok' : JSON.stringify(answer).slice(0, 600) }).toEqual({ ok: true, answer: 'ok' });
    }
  });

  it('a killed Chromium fails the searches it was running with a clear error, and searching works again', async () => {
    for (let round = 0; round < rounds; round++) {
      const browsers = chromiumPids(server);
      expect(browsers.length).toBeGreaterThan(0);
      const inFlight = [call(probe(), { name: 'search', arguments: { query: 'hang there' } }), call(probe(), { name: 'search', arguments: { query: 'hang here' } })];
      const { failures } = await underLoad([echo, thEcho, listDir, fetchOk()], async () => {
        await new Promise((resolve) => setTimeout(resolve, 400));
        for (const pid of browsers) process.kill(pid, 'SIGKILL');
        for (const result of await Promise.all(inFlight)) {
          expect(result.isError).toBe(true);
          expect(errorCodeOf(result)).toMatch(/^(WORKER_CRASHED|UPSTREAM_ERROR|NETWORK_ERROR|INTERNAL|TIMEOUT)$/);
        }
        expect(await poolRecovered('web-search')).toBe(true);
      });
      expect(failures).toEqual([]);
      expect(await eventually(async () => !(await call(probe(), { name: 'search', arguments: { query: 'foo' } })).isError, 30_000)).toBe(true);
    }
  });

  it('an upstream that hangs or resets fails its fetch with an error that says which, beside working calls', async () => {
    for (let round = 0; round < rounds; round++) {
      const { failures } = await underLoad([echo, thEcho, listDir, fetchOk()], async () => {
        const [hung, reset] = await Promise.all([
          call(probe(), { name: 'fetch_web_content', arguments: { url: `${upstreamOrigin}/hang` } }),
          call(probe(), { name: 'fetch_web_content', arguments: { url: `${upstreamOrigin}/reset` } }),
        ]);
        // The web toolset's own upstream timeout (web.fetch.timeoutMs) is a TIMEOUT that says
        // which, as the api worker's upstream timeout is; a reset is a NETWORK_ERROR.
        expect([hung.isError, errorCodeOf(hung)]).toEqual([true, 'TIMEOUT']);
        expect(JSON.stringify(hung.content)).toMatch(/did not answer within 5000 ms/);
        expect([reset.isError, errorCodeOf(reset)]).toEqual([true, 'NETWORK_ERROR']);
      });
      expect(failures).toEqual([]);
    }
  });

  it('a full disk fails writeFile with a clear error and leaves the old file whole (or, without a tmpfs, concurrent writes are never torn)', async () => {
    const v1 = 'version one\n'.repeat(100);
    expect((await call(probe(), { name: 'writeFile', arguments: { path: 'keep.txt', content: v1 } })).isError).toBeFalsy();
    const { failures } = await underLoad([echo, thEcho, fetchOk()], async () => {
      if (mounted) {
        for (let round = 0; round < rounds; round++) {
          const big = await call(probe(), { name: 'writeFile', arguments: { path: 'keep.txt', content: 'x'.repeat(2 * 1024 * 1024) } });
          expect([big.isError, errorCodeOf(big)]).toEqual([true, 'BAD_INPUT']);
          expect(JSON.stringify(big.content)).toMatch(/no space left/);
          const read = await call(probe(), { name: 'readFile', arguments: { path: 'keep.txt' } });
          expect(read.structuredContent?.content).toBe(v1);
          expect(readdirSync(workspace)).toEqual(['keep.txt']);
        }
      } else {
        const contents = Array.from({ length: 20 }, (_, i) => `${i}:`.padEnd(50_000, String.fromCharCode(97 + i)));
        const writes = await Promise.all(contents.map((content) => call(probe(), { name: 'writeFile', arguments: { path: 'same.txt', content } })));
        expect(writes.every((result) => !result.isError)).toBe(true);
        expect(contents).toContain(readFileSync(path.join(workspace, 'same.txt'), 'utf8'));
      }
    });
    expect(failures).toEqual([]);
    // Space is back once the failed write is gone.
    expect((await call(probe(), { name: 'writeFile', arguments: { path: 'after.txt', content: 'fine' } })).isError).toBeFalsy();
  });
}
