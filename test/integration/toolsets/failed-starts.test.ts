/**
 * A process toolset whose replacement workers cannot start: its module removed after the start
 * (a redeploy half done), or no process can be forked (EAGAIN: the server's cgroup at pids.max).
 * Calls answer POOL_UNAVAILABLE at once naming the cause, /health says the pool is degraded with
 * no live worker and why, and the pool comes back by itself once the cause is gone, the retries'
 * delay doubling up to backoffMaxMs rather than jumping to it. A thread toolset whose new threads
 * cannot start (its module removed or ending its thread as it loads, its init throwing) likewise.
 * The built `mcpvisor` over HTTP, the SDK client, an operator's own module.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorCodeOf } from '../../../protocol/results';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { eventually } from '../../helpers/processes';
import { ownProject } from '../../helpers/own-project';

const TOOLS = `
const { existsSync } = require('node:fs');
// A redeploy's module that ends its thread as it loads, without an error.
if (process.env.KIND === 'thread' && existsSync(__dirname + '/exit-on-load')) process.exit(0);
const { runWorker, threadWorker, textResult } = require('mcpvisor');
const init = async () => {
  // A setting the operator broke after the start: each new worker's init throws.
  if (existsSync(__dirname + '/broken')) throw new Error('the settings in ./broken do not parse');
  // ... or never ends (a connection it waits for).
  if (existsSync(__dirname + '/hang')) await new Promise(() => {});
  return {
  tools: ['hello', 'exit', 'hold'].map((name) => ({ name, inputSchema: { type: 'object' } })),
  async handle(call) {
    if (call.tool === 'exit') process.exit(3);
    // Holds its worker until ./release exists, then ends it.
    if (call.tool === 'hold') {
      for (let i = 0; i < 3000 && !existsSync(__dirname + '/release'); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      process.exit(3);
    }
    return textResult('hello');
  },
  };
};
if (process.env.KIND === 'thread') module.exports = threadWorker(init); else runWorker(init);
`;

type Health = { status: string; pools: Array<{ name: string; state: string; alive: number; busy: number; queued: number; restarts: number; lastError?: string }> };

async function serve(restart: Record<string, number>, callTimeoutMs: number, kind = 'process', pools: Record<string, number> = {}): Promise<{ dir: string; server: HttpServer; client: Client }> {
  const dir = ownProject('failed-starts-', { 'tools.cjs': kind === 'thread' ? `process.env.KIND = 'thread';\n${TOOLS}` : TOOLS });
  writeFileSync(
    path.join(dir, 'config.yaml'),
    ['shell: { enabled: false }', 'web: { enabled: false }', `pools: ${JSON.stringify({ ...pools, restart })}`, 'customToolsets:', `  - { name: mine, module: ./tools.cjs, kind: ${kind}, callTimeoutMs: ${callTimeoutMs} }`, ''].join('\n'),
  );
  const server = await startHttp('mcpvisor', ['--config', path.join(dir, 'config.yaml')]);
  const { client } = await connectHttp(server.mcpUrl);
  return { dir, server, client };
}

const call = (client: Client, name: string) => client.callTool({ name, arguments: {} }, undefined, { timeout: 30_000 });
const health = async (server: HttpServer) => {
  const response = await fetch(`${server.baseUrl}/health`);
  return { httpStatus: response.status, ...((await response.json()) as Health) };
};

describe('a process toolset whose module was removed after the start', () => {
  it('answers POOL_UNAVAILABLE at once naming the cause, shows it in /health, and comes back after the next doubled delay once the module is back', async () => {
    // A call's budget (800 ms) shorter than the wait for the next try (1 s after the first failed start).
    const { dir, server, client } = await serve({ maxRestarts: 2, windowMs: 60_000, backoffBaseMs: 500, backoffMaxMs: 60_000 }, 800);
    try {
      renameSync(path.join(dir, 'tools.cjs'), path.join(dir, 'tools.moved'));
      expect(errorCodeOf(await call(client, 'exit'))).toBe('WORKER_CRASHED');
      expect(await eventually(async () => (await health(server)).pools[0].lastError?.includes('Cannot find module') === true)).toBe(true);
      // It waited in the queue for the next try, past its deadline: TIMEOUT, naming nothing.
      const refused = await call(client, 'hello');
      expect(errorCodeOf(refused)).toBe('POOL_UNAVAILABLE');
      expect(textOf(refused)).toMatch(/^POOL_UNAVAILABLE \(tool hello, toolset mine\): the mine pool has no live worker \(worker of mine exited with exit code 1 before it was ready: Error: Cannot find module '.*tools\.cjs'\); the next start is tried in \d+ ms/);
      const down = await health(server);
      expect(down).toMatchObject({ httpStatus: 503, status: 'degraded' });
      expect(down.pools[0]).toMatchObject({ state: 'degraded', alive: 0, lastError: expect.stringContaining('Cannot find module') });
      // Over the intensity (a third failed start): the next try came after backoffMaxMs (a minute), now 2 s.
      expect(await eventually(async () => (await health(server)).pools[0].restarts >= 3)).toBe(true);
      renameSync(path.join(dir, 'tools.moved'), path.join(dir, 'tools.cjs'));
      expect(await eventually(async () => textOf(await call(client, 'hello')) === 'hello', 15_000)).toBe(true);
      expect((await health(server)).pools[0]).toMatchObject({ alive: 1 });
    } finally {
      await client.close();
      await server.stop();
    }
  }, 40_000);
});

describe('a thread toolset whose new threads cannot start', () => {
  // Calls waited for a thread that piscina tried only when a call came, and rejected none it
  // queued: each answered TIMEOUT at its deadline (10 s here), naming nothing.
  const restart = { maxRestarts: 20, windowMs: 60_000, backoffBaseMs: 100, backoffMaxMs: 1000 };

  it('answers POOL_UNAVAILABLE at once naming the missing module, queued calls too, shows it in /health, and serves again by itself once the module is back', async () => {
    const { dir, server, client } = await serve(restart, 10_000, 'thread');
    try {
      renameSync(path.join(dir, 'tools.cjs'), path.join(dir, 'tools.moved'));
      // Two calls queued behind one that then ends the only thread: they wait for its replacement, which cannot load the module.
      const held = call(client, 'hold');
      expect(await eventually(async () => (await health(server)).pools[0].busy === 1)).toBe(true);
      const waiting = [call(client, 'hello'), call(client, 'hello')];
      expect(await eventually(async () => (await health(server)).pools[0].queued === 2)).toBe(true);
      writeFileSync(path.join(dir, 'release'), '');
      expect(errorCodeOf(await held)).toBe('WORKER_CRASHED');
      const queued = await Promise.all(waiting);
      const refused = await call(client, 'hello');
      for (const answer of [...queued, refused]) {
        expect(errorCodeOf(answer)).toBe('POOL_UNAVAILABLE');
        expect(textOf(answer)).toMatch(/^POOL_UNAVAILABLE \(tool hello, toolset mine\): the mine pool has no live thread \(no thread could start: Cannot find module '.*tools\.cjs'/);
      }
      expect(textOf(refused)).toMatch(/; (the next start is tried in \d+ ms|new threads are being started); try again shortly$/);
      const down = await health(server);
      expect(down).toMatchObject({ httpStatus: 503, status: 'degraded' });
      expect(down.pools[0]).toMatchObject({ state: 'degraded', alive: 0, lastError: expect.stringMatching(/^no thread could start: Cannot find module/) });
      // No server restart: new threads are tried with the backoff until the module loads.
      renameSync(path.join(dir, 'tools.moved'), path.join(dir, 'tools.cjs'));
      expect(await eventually(async () => textOf(await call(client, 'hello')) === 'hello', 15_000)).toBe(true);
      expect(await health(server)).toMatchObject({ httpStatus: 200, pools: [expect.objectContaining({ state: 'ready', alive: 1 })] });
    } finally {
      await client.close();
      await server.stop();
    }
  }, 60_000);

  // Each cause is a file the test's module looks for as a new thread loads or inits.
  it.each([
    // Before: the call waited on the new thread's init for its whole deadline, TIMEOUT. 3 s: a loaded machine took over 1 s to start the first thread.
    ['init never ends in a new thread', 'hang', 'the mine threads did not become ready within 3000 ms (pools.startTimeoutMs): its init has not finished', { startTimeoutMs: 3000 }],
    // Before: TIMEOUT; piscina raised no error.
    ["a new thread's module ends it as it loads, with no error", 'exit-on-load', /a new thread ended as it loaded .*tools\.cjs, with no error \(process\.exit in it\?\)/, {}],
    // Before: INTERNAL with init's message from the new thread, /health `ready`, and every later
    // call the same, init's failure kept by the thread after the settings were mended.
    ["init throws in a new thread (its error's words)", 'broken', 'the settings in ./broken do not parse', {}],
  ])('answers POOL_UNAVAILABLE naming why when %s, /health degraded, and serves again once the cause is gone', async (_what, cause, why, pools) => {
    const { dir, server, client } = await serve(restart, 10_000, 'thread', pools);
    try {
      writeFileSync(path.join(dir, cause), '');
      expect(errorCodeOf(await call(client, 'exit'))).toBe('WORKER_CRASHED');
      const refused = await call(client, 'hello');
      expect(errorCodeOf(refused)).toBe('POOL_UNAVAILABLE');
      const reason = typeof why === 'string' ? why.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : why.source;
      expect(textOf(refused)).toMatch(new RegExp(`the mine pool has no live thread \\(no thread could start: ${reason}\\)`));
      expect((await health(server)).pools[0]).toMatchObject({ state: 'degraded', lastError: expect.stringMatching(new RegExp(`^no thread could start: ${reason}`)) });
      rmSync(path.join(dir, cause));
      expect(await eventually(async () => textOf(await call(client, 'hello')) === 'hello', 15_000)).toBe(true);
      expect(await health(server)).toMatchObject({ httpStatus: 200, pools: [expect.objectContaining({ state: 'ready', alive: 1 })] });
    } finally {
      await client.close();
      await server.stop();
    }
  }, 60_000);
});

/** A pids cgroup of our own (v1 or v2): root on a writable cgroup file system. */
function pidsCgroup(): string {
  const v1 = '/sys/fs/cgroup/pids';
  const v2 = '/sys/fs/cgroup';
  const parent = existsSync(path.join(v1, 'tasks')) ? v1 : existsSync(path.join(v2, 'cgroup.controllers')) && readFileSync(path.join(v2, 'cgroup.subtree_control'), 'utf8').includes('pids') ? v2 : undefined;
  if (!parent) throw new Error('no pids cgroup controller to limit the server with (this test needs root and cgroups v1 or v2 with pids)');
  const dir = path.join(parent, `mcpvisor-test-${process.pid}`);
  try {
    mkdirSync(dir);
  } catch (error) {
    throw new Error(`cannot make a pids cgroup (this test needs root on a writable cgroup file system): ${(error as Error).message}`);
  }
  return dir;
}

describe('a process toolset whose worker cannot be forked (EAGAIN)', () => {
  it('answers POOL_UNAVAILABLE at once naming EAGAIN, and tries again until a fork works', async () => {
    const cgroup = pidsCgroup();
    const { server, client } = await serve({ maxRestarts: 5, windowMs: 60_000, backoffBaseMs: 50, backoffMaxMs: 1000 }, 20_000);
    try {
      // The supervisor alone in the cgroup (its worker stays where it was), at its limit: its next fork fails.
      writeFileSync(path.join(cgroup, 'cgroup.procs'), String(server.server.child.pid));
      writeFileSync(path.join(cgroup, 'pids.max'), readFileSync(path.join(cgroup, 'pids.current'), 'utf8').trim());
      expect(errorCodeOf(await call(client, 'exit'))).toBe('WORKER_CRASHED');
      expect(await eventually(async () => (await health(server)).pools[0].lastError?.includes('EAGAIN') === true)).toBe(true);
      const refused = await call(client, 'hello');
      expect(errorCodeOf(refused)).toBe('POOL_UNAVAILABLE');
      expect(textOf(refused)).toContain('EAGAIN: no process could be made, the machine, the user (ulimit -u) or the server\'s cgroup (pids.max) is at its limit of processes and threads');
      expect(await health(server)).toMatchObject({ httpStatus: 503, status: 'degraded', pools: [expect.objectContaining({ state: 'degraded', alive: 0 })] });
      // Before, a fork that failed this way was never tried again: the pool served nothing until a restart.
      writeFileSync(path.join(cgroup, 'pids.max'), 'max');
      expect(await eventually(async () => textOf(await call(client, 'hello')) === 'hello', 15_000)).toBe(true);
      expect(await health(server)).toMatchObject({ httpStatus: 200, status: 'ok' });
    } finally {
      writeFileSync(path.join(cgroup, 'pids.max'), 'max');
      await client.close();
      await server.stop();
      rmdirSync(cgroup);
    }
  }, 40_000);
});
