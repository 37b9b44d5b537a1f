import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { readdirSync } from 'node:fs';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { bin, eventually } from '../../helpers/processes';
import { call, initialize } from '../../helpers/raw-sessions';

/**
 * A supervisor at its open-files limit (`prlimit --nofile`): every connection holds a file
 * descriptor, so an operator with many clients reaches it. What must hold there: the process
 * lives on, a worker that must be forked again fails its start with a reason naming the limit,
 * the pool retries with backoff, and all is well again once connections close.
 */

const LIMIT = 128;
const hasPrlimit = spawnSync('prlimit', ['--version']).status === 0;

/** `mcpvisor` on a free loopback port under `prlimit --nofile=limit`; its stderr, port and process. */
async function startLimited(limit: number, config: Record<string, unknown>): Promise<{ server: ChildProcess; stderr: () => string; port: number }> {
  const server = spawn('prlimit', [`--nofile=${limit}:${limit}`, process.execPath, bin('mcpvisor'), '--config', writeConfig(config), '--transport', 'http', '--host', '127.0.0.1', '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  server.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const listening = await eventually(() => /"msg":"listening"/.test(stderr), 20_000);
  if (!listening) throw new Error(`no listening line; stderr:\n${stderr}`);
  return { server, stderr: () => stderr, port: Number(/127\.0\.0\.1:(\d+)/.exec(stderr)![1]) };
}

function textOf(body: string): string {
  const message = JSON.parse(body.slice(body.indexOf('{'))) as { result?: { content?: Array<{ text?: string }> } };
  return message.result?.content?.[0]?.text ?? body;
}

describe('a supervisor at its open-files limit', () => {
  let child: ChildProcess | undefined;
  const fillers: Socket[] = [];

  afterEach(() => {
    for (const socket of fillers.splice(0)) socket.destroy();
    child?.kill('SIGKILL');
  });

  // prlimit is util-linux's, on every Linux this runs on; a machine without it would fail here, not skip.
  it('lives on when a worker must be forked again with no descriptor left, says why, and recovers once connections close', async () => {
    expect(hasPrlimit).toBe(true);
    const config = fixtureConfig({
      thread: false,
      root: {
        // Idle filler connections stay until the test closes them.
        http: { rateLimit: { perIpRequestsPerSecond: 0, perSessionRequestsPerSecond: 0 }, headersTimeoutMs: 120_000, requestTimeoutMs: 120_000 },
        pools: { cancelGraceMs: 300, restart: { maxRestarts: 3, windowMs: 60_000, backoffBaseMs: 50, backoffMaxMs: 500 } },
      },
    });
    const started = await startLimited(LIMIT, config);
    const { server, port } = started;
    child = server;
    const baseUrl = `http://127.0.0.1:${port}`;
    const mcpUrl = `${baseUrl}/mcp`;

    // A session whose keep-alive connection is open before the descriptors run out.
    const sessionId = await initialize(mcpUrl);
    for (let i = 0; i < LIMIT + 32; i++) {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      fillers.push(socket);
    }
    const fds = () => readdirSync(`/proc/${server.pid}/fd`).length;
    expect(await eventually(() => fds() >= LIMIT - 2)).toBe(true);

    // The worker dies; its replacement cannot be forked (no descriptor for its pipes).
    expect(textOf((await call(mcpUrl, sessionId, 1, 'crash', {})).body)).toContain('WORKER_CRASHED');
    let answer = '';
    for (let id = 2; id < 200 && !answer.includes('EMFILE'); id++) {
      answer = textOf((await call(mcpUrl, sessionId, id, 'echo', { text: 'x' })).body);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(answer).toContain('POOL_UNAVAILABLE');
    expect(answer).toContain('EMFILE');
    expect(answer).toMatch(/limit of \d+ open file descriptors/);
    expect(server.exitCode).toBeNull();

    // Connections close: the pool's next retry forks its worker, and calls work again.
    for (const socket of fillers.splice(0)) socket.destroy();
    expect(await eventually(async () => (await fetch(`${baseUrl}/health`).catch(() => undefined))?.status === 200, 15_000)).toBe(true);
    const fresh = await initialize(mcpUrl);
    expect(textOf((await call(mcpUrl, fresh, 1, 'echo', { text: 'back' })).body)).toBe('back');
    expect(server.exitCode).toBeNull();
    // One error line per failed fork, not two.
    expect(started.stderr().split('\n').filter((line) => line.includes('worker process error'))).toHaveLength(0);
  });

  it('says at the start when the limit is below what http.maxSessions may need, and not when it is not', async () => {
    const warned = await startLimited(LIMIT, fixtureConfig({ thread: false }));
    child = warned.server;
    await eventually(() => warned.stderr().includes('open-files limit'), 2000);
    const line = warned.stderr().split('\n').find((entry) => entry.includes('open-files limit'));
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ level: 40 });
    expect(line).toContain(`open-files limit (${LIMIT}, ulimit -n`);
    expect(line).toContain('http.maxSessions (10000)');
    warned.server.kill('SIGKILL');

    const fits = await startLimited(1024, fixtureConfig({ thread: false, root: { http: { maxSessions: 500 } } }));
    child = fits.server;
    expect(fits.stderr()).not.toContain('open-files limit');
  });
});
