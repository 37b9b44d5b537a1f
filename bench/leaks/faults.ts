/**
 * Fault sequences, each repeated N times against one mcpvisor with every toolset, with a census of
 * processes, fds, cgroups, temp entries and sockets before and after: a count that grows with N
 * is a leak of one per fault. `npx tsx bench/leaks/faults.ts [N] [scenario,...]`
 */
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { SERP } from '../web/util';
import { request, createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { histogramGrowth, Inspector } from '../soak/inspect';
import { census, diff, getClosing, type Census } from './census';
import { soakDescription, startUpstream } from '../soak/servers';

const ROOT = path.resolve(__dirname, '..', '..');
const argv = process.argv.slice(2);
const N = Number(argv[0] ?? 20);
const only = argv[1]?.split(',');
const withHistogram = argv.includes('--histogram');
const quietS = Number(argv.find((a) => a.startsWith('--quiet-s='))?.slice(10) ?? 6);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (message: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** A server for the odd upstreams: resets, hangs, trickles, and a result page that never ends. */
async function startOdd(): Promise<{ origin: string }> {
  const serp = readFileSync(path.join(SERP, 'duckduckgo-1.html'));
  const sockets = new Set<Socket>();
  const server = createServer((req, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname.startsWith('/ddg/html')) {
      const q = url.searchParams.get('q') ?? '';
      const send = () => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(serp);
      if (q.includes('never')) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.write('<html><body><p>loading');
        const timer = setInterval(() => res.write('.'), 300);
        res.on('close', () => clearInterval(timer));
        return;
      }
      if (q.includes('slow')) {
        const timer = setTimeout(send, 3000);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      return send();
    }
    if (url.pathname.includes('/reset')) return req.socket.destroy();
    if (url.pathname.includes('/hang')) return;
    if (url.pathname.includes('/trickle')) {
      res.writeHead(200, { 'content-type': 'text/html' });
      const timer = setInterval(() => res.write('<p>x</p>'), 200);
      res.on('close', () => clearInterval(timer));
      return;
    }
    res.writeHead(404).end();
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function main(): Promise<void> {
  const root = mkdtempSync(path.join(tmpdir(), 'mlk-'));
  const tmp = path.join(root, 't');
  const workspace = path.join(root, 'ws');
  const xdg = path.join(root, 'x');
  for (const dir of [tmp, workspace, xdg]) mkdirSync(dir);
  const upstream = await startUpstream();
  const odd = await startOdd();
  const specPath = path.join(root, 'openapi.json');
  const description = soakDescription() as { paths: Record<string, unknown> };
  for (const what of ['reset', 'hang', 'trickle']) description.paths[`/${what}`] = { get: { operationId: `${what}One`, summary: `SOAK:${what}`, responses: { '200': { description: 'ok' } } } };
  writeFileSync(specPath, JSON.stringify(description));
  const configPath = path.join(root, 'config.json');
  writeFileSync(configPath, JSON.stringify({
    http: { heartbeatIntervalMs: 2_000, sessionIdleTimeoutMs: 2_000, connectedSessionIdleTimeoutMs: 4_000 },
    pools: { livenessIntervalMs: 500, livenessTimeoutMs: 2_000, cancelGraceMs: 500, restart: { maxRestarts: 1000, windowMs: 1000, backoffBaseMs: 50, backoffMaxMs: 200 } },
    shell: { sandbox: !argv.includes('--unconfined'), ...(argv.includes('--no-cgroups') ? { commandCgroups: false } : {}), workspace, commandTimeoutMs: 4_000, workers: 2, commandMaxMemoryBytes: 64 * 1024 * 1024 },
    web: {
      search: { engineUrl: `${odd.origin}/ddg`, rateLimit: 100, rateLimitIntervalMs: 1_000, timeoutMs: 4_000 },
      fetch: { allowPrivateNetwork: true, rateLimit: 1000, rateLimitIntervalMs: 1_000, timeoutMs: 2_000 },
    },
    // The odd server answers /reset, /hang and /trickle under the API's base too: same origin needed, so a second API.
    apis: [
      { apiBaseUrl: upstream.origin, openApiSpec: specPath, specInputMethod: 'file', namespace: 'soak', requestTimeoutMs: 1_500 },
      { apiBaseUrl: odd.origin, openApiSpec: specPath, specInputMethod: 'file', namespace: 'odd', requestTimeoutMs: 1_500 },
    ],
  }, null, 2));
  const marker = `LEAK_RUN=${path.basename(root)}`;
  const server = spawn(process.execPath, ['--inspect=127.0.0.1:0', path.join(ROOT, 'dist', 'supervisor', 'cli', 'mcpvisor.js'), '--config', configPath, '--transport', 'http', '--host', '127.0.0.1', '--port', '0'], {
    env: { ...process.env, TMPDIR: tmp, XDG_CACHE_HOME: xdg, LEAK_RUN: path.basename(root) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines: string[] = [];
  let inspectorUrl: string | undefined;
  const mcpUrl = await new Promise<string>((resolve, reject) => {
    createInterface({ input: server.stderr! }).on('line', (line) => {
      lines.push(line);
      appendFileSync(path.join(root, 'server.log'), `${line}\n`);
      inspectorUrl ??= /Debugger listening on (ws:\S+)/.exec(line)?.[1];
      try {
        const entry = JSON.parse(line) as { msg: string; url?: string };
        if (entry.msg === 'listening' && entry.url) resolve(entry.url);
      } catch {
        // not pino
      }
    });
    server.once('exit', (code) => reject(new Error(`exited ${code}: ${lines.slice(-20).join('\n')}`)));
    server.once('exit', (code, signal) => log(`SERVER EXITED ${code ?? signal}`));
  });
  const baseUrl = new URL(mcpUrl).origin;
  writeFileSync(path.join(root, 'url'), mcpUrl);
  const target = { rootPid: server.pid!, marker, dirs: { TMPDIR: tmp, XDG: xdg, workspace }, baseUrl };
  log(`server ${server.pid} ${mcpUrl} in ${root}`);
  // Never leave the server behind when this driver fails.
  process.on('exit', () => server.kill('SIGKILL'));
  process.on('uncaughtException', (error) => {
    log(`driver failed: ${error.stack}`);
    process.exit(1);
  });

  const connect = async () => {
    const client = new Client({ name: 'leaks', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
    return client;
  };
  const main = await connect();
  const { tools } = await main.listTools();
  const tool = (what: string, ns = 'soak') => tools.find((t) => t.name.startsWith(ns) && t.description?.includes(`SOAK:${what}`))?.name ?? `${ns}-${what}`;
  const call = (client: Client, name: string, args: Record<string, unknown>, signal?: AbortSignal) =>
    client.callTool({ name, arguments: args }, undefined, { signal, timeout: 30_000 }).then(
      (r) => r as { isError?: boolean; content: Array<{ text?: string }> },
      (e: Error) => ({ isError: true, content: [{ text: `thrown: ${e.message}` }] }),
    );
  const inFlight = async () => (JSON.parse(await getClosing(`${baseUrl}/health`)) as { inFlightCalls: number }).inFlightCalls;
  const untilRunning = async () => {
    for (let i = 0; i < 500 && (await inFlight()) === 0; i++) await sleep(10);
  };
  const quiet = async () => {
    for (let i = 0; i < 300 && (await inFlight()) > 0; i++) await sleep(50);
    // Long enough for abandoned sessions to idle out; the main one is kept busy meanwhile.
    for (let i = 0; i < quietS; i++) await Promise.all([main.ping().catch(() => undefined), sleep(1000)]);
  };
  const inspector = await Inspector.connect(inspectorUrl!);
  const treeOf = async () => {
    const c = await census(target);
    c['supervisor heap KB after GC'] = Math.round((await inspector.heapUsedAfterGc()) * 1000);
    return c;
  };
  const pidsOf = (pattern: RegExp): number[] => {
    const { execFileSync } = require('node:child_process') as typeof import('node:child_process');
    const out = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' });
    const rows = out.trim().split('\n').map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l)!).map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
    const tree = new Set([server.pid!]);
    for (let changed = true; changed; ) {
      changed = false;
      for (const r of rows) if (!tree.has(r.pid) && tree.has(r.ppid)) tree.add(r.pid), (changed = true);
    }
    return rows.filter((r) => tree.has(r.pid) && pattern.test(r.args)).map((r) => r.pid);
  };
  /** The shell worker running a command: an ancestor of a `sleep 300`. */
  const busyShellWorker = async (): Promise<number | undefined> => {
    const { execFileSync } = require('node:child_process') as typeof import('node:child_process');
    for (let i = 0; i < 200; i++) {
      const out = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' });
      const rows = new Map(out.trim().split('\n').map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l)!).map((m) => [Number(m[1]), { ppid: Number(m[2]), args: m[3] }]));
      for (const [pid, row] of rows) {
        if (row.args !== 'sleep 300') continue;
        for (let p = rows.get(pid)?.ppid, hops = 0; p && hops < 10; p = rows.get(p)?.ppid, hops++) if (/workers\/shell\//.test(rows.get(p)?.args ?? '')) return p;
      }
      await sleep(20);
    }
    log('no busy shell worker found');
    return undefined;
  };

  const scenarios: Record<string, (i: number) => Promise<unknown>> = {
    async 'kill-api-worker'() {
      const pending = call(main, tool('slow'), { ms: 5000 });
      await untilRunning();
      for (const pid of pidsOf(/workers\/openapi\//)) process.kill(pid, 'SIGKILL');
      return pending;
    },
    async 'stop-api-worker'() {
      const pending = call(main, tool('slow'), { ms: 5000 });
      await untilRunning();
      const pids = pidsOf(/workers\/openapi\//);
      for (const pid of pids) process.kill(pid, 'SIGSTOP');
      const r = await pending;
      for (const pid of pids) try { process.kill(pid, 'SIGCONT'); } catch { /* gone */ }
      return r;
    },
    async 'kill-shell-worker'() {
      const pending = call(main, 'exec', { command: "setsid sh -c 'sleep 301' & (sleep 302 &) ; nohup sleep 303 >/dev/null 2>&1 & echo LEAKMARK; sleep 300" });
      await untilRunning();
      const pid = await busyShellWorker();
      if (pid) process.kill(pid, 'SIGKILL');
      return pending;
    },
    async 'stop-shell-worker'() {
      const pending = call(main, 'exec', { command: "setsid sh -c 'sleep 301' & echo LEAKMARK; sleep 300" });
      await untilRunning();
      const pid = await busyShellWorker();
      if (pid) process.kill(pid, 'SIGSTOP');
      const r = await pending;
      if (pid) try { process.kill(pid, 'SIGCONT'); } catch { /* gone */ }
      return r;
    },
    async 'exec-timeout-daemons'() {
      return call(main, 'exec', { command: "setsid sh -c 'sleep 301' & (sleep 302 &); sleep 300" });
    },
    async 'exec-output-cap'() {
      return call(main, 'exec', { command: 'head -c 30000000 /dev/zero | tr "\\0" x' });
    },
    async 'exec-memory-limit'() {
      return call(main, 'exec', { command: 'perl -e \'$x = "x" x (200*1024*1024); print length $x\'' });
    },
    async 'cancel-random'(i) {
      const controller = new AbortController();
      const pending = call(main, 'exec', { command: 'sleep 2; echo done' }, controller.signal);
      await sleep((i * 37) % 150);
      controller.abort();
      await pending;
      const c2 = new AbortController();
      const p2 = call(main, tool('slow'), { ms: 1000 }, c2.signal);
      await sleep((i * 53) % 100);
      c2.abort();
      await p2;
      const c3 = new AbortController();
      const p3 = call(main, 'fetch_web_content', { url: `${odd.origin}/trickle` }, c3.signal);
      await sleep((i * 71) % 300);
      c3.abort();
      return p3;
    },
    async 'cancel-after-finish'() {
      const controller = new AbortController();
      const r = await call(main, 'exec', { command: 'echo hi' }, controller.signal);
      controller.abort();
      return r;
    },
    async 'http-reset-mid-call'() {
      const client = await connect();
      const sid = (client.transport as StreamableHTTPClientTransport).sessionId!;
      const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'exec', arguments: { command: 'sleep 300' } } });
      await new Promise<void>((resolve) => {
        const req = request(mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' } });
        req.on('error', () => resolve());
        req.end(body);
        void untilRunning().then(() => {
          req.destroy();
          resolve();
        });
      });
      await client.close();
    },
    async 'delete-mid-call'() {
      const client = await connect();
      const pending = call(client, 'exec', { command: 'sleep 300' });
      await untilRunning();
      await (client.transport as StreamableHTTPClientTransport).terminateSession();
      await pending;
      await client.close();
    },
    async 'sse-close-mid-call'() {
      const client = new Client({ name: 'leaks-sse', version: '1' });
      await client.connect(new SSEClientTransport(new URL('/sse', baseUrl)));
      const pending = call(client, tool('slow'), { ms: 5000 });
      await untilRunning();
      await client.close();
      await Promise.race([pending, sleep(100)]);
    },
    async 'session-abandoned'() {
      const client = await connect();
      await call(client, 'exec', { command: 'echo x' });
      // Neither DELETE nor close: the transport is dropped.
    },
    async 'upstream-odd'(i) {
      await call(main, tool('reset', 'odd'), {});
      await call(main, tool('hang', 'odd'), {});
      await call(main, tool('trickle', 'odd'), {});
      await call(main, 'fetch_web_content', { url: `${odd.origin}/reset/${i}` });
      await call(main, 'fetch_web_content', { url: `${odd.origin}/hang/${i}` });
      await call(main, 'fetch_web_content', { url: `${odd.origin}/trickle/${i}` });
      return call(main, 'fetch_web_content', { url: `http://no-such-host-${i}.invalid/` });
    },
    async 'search'() {
      return call(main, 'search', { query: 'x' });
    },
    async 'search-never-loads'() {
      return call(main, 'search', { query: 'never' });
    },
    async 'kill-chromium-mid-search'() {
      const pending = call(main, 'search', { query: 'slow' });
      await untilRunning();
      for (const pid of pidsOf(/chrom/).filter((pid) => !/--type=/.test(require('node:fs').readFileSync(`/proc/${pid}/cmdline`, 'utf8')))) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
      return pending;
    },
    async 'kill-browser-worker'() {
      const pending = call(main, 'search', { query: 'slow' });
      await untilRunning();
      for (const pid of pidsOf(/workers\/web\//)) process.kill(pid, 'SIGKILL');
      return pending;
    },
  };

  const names = only ?? Object.keys(scenarios);
  for (const name of names) {
    const run = scenarios[name];
    if (!run) throw new Error(`no scenario ${name}`);
    // Once to warm up what a first use builds, then the baseline.
    const first = await run(-1);
    log(`${name}: first answer ${JSON.stringify(first)?.slice(0, 200)}`);
    await quiet();
    const before: Census = await treeOf();
    const h0 = withHistogram ? await inspector.histogram() : undefined;
    for (let i = 0; i < N; i++) await run(i);
    await quiet();
    const after = await treeOf();
    if (h0) log(`${name} heap growth by kind:\n${histogramGrowth(h0, await inspector.histogram(), 25)}`);
    const changes = diff(before, after);
    log(`${name} x${N}: ${changes.length === 0 ? 'no change' : `\n    ${changes.join('\n    ')}`}`);
  }
  log(`final census:\n    ${Object.entries(await treeOf()).map(([k, v]) => `${k}=${v}`).join('\n    ')}`);
  await main.close();
  // With a debugger attached, Node waits for it to leave before it exits.
  inspector.close();
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  await sleep(1000);
  const left = await census({ ...target, baseUrl: undefined });
  log(`after SIGTERM: ${Object.entries(left).filter(([, v]) => v > 0).map(([k, v]) => `${k}=${v}`).join(', ')}`);
  process.exit(0);
}

void main();
