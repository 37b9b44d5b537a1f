/**
 * A call that ends its worker (process.exit in a tool, a thread out of memory) is that call's
 * failure: it answers WORKER_CRASHED, the worker is replaced at once and counted once in
 * `restarts`, and the pool stays `ready`, however many such calls come. Workers that die on their
 * own (idle) still count against the restart intensity and degrade the pool. Both kinds of custom
 * toolset, real modules of an operator's project, the built `mcpvisor` over HTTP, the SDK client.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorCodeOf } from '../../../protocol/results';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { eventually } from '../../helpers/processes';
import { ownProject, PROCESS_ENTRY, THREAD_ENTRY } from '../../helpers/own-project';

const TOOLS = `
const { runWorker, threadWorker, textResult } = require('mcpvisor');
// Jobs run by a timer of init's, outside any call's code: a thread's crash nobody's call caused.
const detached = [];
const init = async () => {
  setInterval(() => { for (const job of detached.splice(0)) job(); }, 20);
  return {
    tools: ['hello', 'exit', 'wait', 'oom', 'die-idle'].map((name) => ({ name, inputSchema: { type: 'object', properties: { ms: { type: 'number' } } } })),
    async handle(call) {
      if (call.tool === 'hello') return textResult('hello');
      if (call.tool === 'exit') process.exit(3);
      if (call.tool === 'wait') {
        await new Promise((resolve) => setTimeout(resolve, call.arguments.ms));
        return textResult('waited');
      }
      if (call.tool === 'oom') {
        const held = [];
        for (;;) held.push(new Array(1e6).fill(held.length));
      }
      // Answers, then the worker ends by itself while idle.
      if (process.env.KIND === 'thread') detached.push(() => { throw new Error('a timer of the module threw'); });
      else setTimeout(() => process.exit(4), 100);
      return textResult('dying');
    },
  };
};
if (process.env.KIND === 'thread') module.exports = threadWorker(init); else runWorker(init);
`;

type PoolHealth = { name: string; state: string; alive: number; restarts: number; lastError?: string };

let server: HttpServer;
let client: Client;

beforeAll(async () => {
  const dir = ownProject('crashing-calls-', { 'tools.cjs': TOOLS, 'thread.cjs': THREAD_ENTRY, 'process.cjs': PROCESS_ENTRY });
  writeFileSync(
    path.join(dir, 'config.yaml'),
    [
      'shell: { enabled: false }',
      'web: { enabled: false }',
      // Over 2 counted restarts in a minute the pool is degraded; the backoff would reach a minute.
      'pools: { threadMaxOldGenerationSizeMb: 32, restart: { maxRestarts: 2, windowMs: 60000, backoffBaseMs: 50, backoffMaxMs: 60000 } }',
      'customToolsets:',
      '  - { name: mine-proc, module: ./process.cjs, kind: process, namespace: p, concurrency: 3, callTimeoutMs: 20000 }',
      '  - { name: mine-thread, module: ./thread.cjs, kind: thread, namespace: t, concurrency: 3, callTimeoutMs: 20000 }',
      '',
    ].join('\n'),
  );
  server = await startHttp('mcpvisor', ['--config', path.join(dir, 'config.yaml')]);
  ({ client } = await connectHttp(server.mcpUrl));
}, 30_000);
afterAll(async () => {
  await client?.close();
  await server?.stop();
});

const call = (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args }, undefined, { timeout: 30_000 });
const health = async () => {
  const response = await fetch(`${server.baseUrl}/health`);
  return { httpStatus: response.status, ...((await response.json()) as { status: string; pools: PoolHealth[] }) };
};
const pool = async (name: string) => (await health()).pools.find((stats) => stats.name === name)!;

describe.each([
  ['process', 'p', 'mine-proc'],
  ['thread', 't', 'mine-thread'],
])('a %s toolset whose calls end their worker', (kind, prefix, name) => {
  it('answers each WORKER_CRASHED, serves the next call at once, and stays ready with /health 200 past maxRestarts', async () => {
    const before = (await pool(name)).restarts;
    for (let i = 0; i < 5; i++) {
      const result = await call(`${prefix}-exit`);
      expect(errorCodeOf(result)).toBe('WORKER_CRASHED');
      expect(textOf(result)).toContain(`(tool ${prefix}-exit, toolset ${name})`);
      // Before, the third crash put the pool over its intensity: degraded, and no worker for the backoff's minute.
      expect(textOf(await call(`${prefix}-hello`))).toBe('hello');
    }
    const now = await health();
    expect(now.pools.find((stats) => stats.name === name)).toMatchObject({ state: 'ready', restarts: before + 5, lastError: expect.stringMatching(/code:? 3/) });
    expect(now).toMatchObject({ httpStatus: 200, status: 'ok' });
  });

  it('counts one restart when a worker ends under three calls, each answered WORKER_CRASHED', async () => {
    const before = (await pool(name)).restarts;
    const waiting = [call(`${prefix}-wait`, { ms: 15_000 }), call(`${prefix}-wait`, { ms: 15_000 })];
    expect(await eventually(async () => (await health()).pools.find((stats) => stats.name === name)!.alive === 1 && ((await (await fetch(`${server.baseUrl}/health`)).json()) as { inFlightCalls: number }).inFlightCalls === 2)).toBe(true);
    const codes = (await Promise.all([call(`${prefix}-exit`), ...waiting])).map((result) => errorCodeOf(result));
    expect(codes).toEqual(['WORKER_CRASHED', 'WORKER_CRASHED', 'WORKER_CRASHED']);
    expect(textOf(await call(`${prefix}-hello`))).toBe('hello');
    // A thread counted one restart per call it held.
    expect((await pool(name)).restarts).toBe(before + 1);
    expect((await pool(name)).state).toBe('ready');
  });

  if (kind === 'thread') {
    it('answers a call that runs its thread out of memory WORKER_CRASHED saying so, and stays ready', async () => {
      const result = await call(`${prefix}-oom`);
      expect(errorCodeOf(result)).toBe('WORKER_CRASHED');
      expect(textOf(result)).toContain('ran out of memory (its 32 MB heap');
      expect(textOf(await call(`${prefix}-hello`))).toBe('hello');
      expect((await pool(name)).state).toBe('ready');
    });
  }

});

// After the others: the pools stay over their intensity for the window's minute.
describe.each([
  ['process', 'p', 'mine-proc'],
  ['thread', 't', 'mine-thread'],
])('a %s toolset whose workers end by themselves', (_kind, prefix, name) => {
  it('still turns degraded (/health 503) when they end idle more than maxRestarts times', async () => {
    for (let i = 0; i < 3; i++) {
      const restarts = (await pool(name)).restarts;
      expect(textOf(await call(`${prefix}-die-idle`))).toBe('dying');
      expect(await eventually(async () => (await pool(name)).restarts === restarts + 1)).toBe(true);
    }
    expect(await eventually(async () => (await pool(name)).alive === 1)).toBe(true);
    const now = await health();
    expect(now.pools.find((stats) => stats.name === name)).toMatchObject({ state: 'degraded', alive: 1 });
    expect(now).toMatchObject({ httpStatus: 503, status: 'degraded' });
  });
});
