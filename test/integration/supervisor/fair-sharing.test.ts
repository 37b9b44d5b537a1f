import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { errorCodeOf } from '../../../protocol/results';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { eventually } from '../../helpers/processes';

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean; _meta?: Record<string, unknown> };

/** A call that adds `<name> <its text, its error code, or cancelled>` to `order` as it ends. */
const caller = (order: string[]) => (client: Client, name: string, tool: string, args: Record<string, unknown>, signal?: AbortSignal) =>
  (client.callTool({ name: tool, arguments: args }, undefined, { signal }) as Promise<Result>).then(
    (result) => void order.push(`${name} ${result.isError ? errorCodeOf(result) : textOf(result)}`),
    () => void order.push(`${name} cancelled`),
  );

/**
 * Two sessions on one HTTP server share a pool of one slot: a noisy session queues its calls, a
 * quiet one comes later. The quiet session's call is served at the first freed slot, not after
 * every call the noisy one queued (one FIFO for every session did that). Order, not timings.
 */
describe('a pool shared by sessions', () => {
  let server: HttpServer;
  let noisy: Client;
  let quiet: Client;

  const queued = async (pool = 'test') => {
    const health = (await (await fetch(`${server.baseUrl}/health`)).json()) as { pools: Array<{ name: string; busy: number; queued: number }> };
    return health.pools.find((stats) => stats.name === pool)!;
  };

  beforeAll(async () => {
    server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: { concurrency: 1, callTimeoutMs: 30_000 }, process: { workers: 1, concurrency: 1, callTimeoutMs: 30_000 }, root: { pools: { maxQueue: 3, cancelGraceMs: 300 } } }))]);
    ({ client: noisy } = await connectHttp(server.mcpUrl, 'noisy'));
    ({ client: quiet } = await connectHttp(server.mcpUrl, 'quiet'));
  });
  afterAll(async () => {
    await noisy.close();
    await quiet.close();
    await server.stop();
  });

  it('serves the quiet session\'s call before the calls the noisy one queued earlier', async () => {
    const order: string[] = [];
    const call = caller(order);
    const holding = new AbortController();
    const calls = [call(noisy, 'noisy-1', 'sleep', { ms: 60_000 }, holding.signal)];
    expect(await eventually(async () => (await queued()).busy === 1)).toBe(true);
    // One at a time: two requests at once may reach the server in either order.
    for (const [n, text] of [[2, 'two'], [3, 'three']] as const) {
      calls.push(call(noisy, `noisy-${n}`, 'echo', { text }));
      expect(await eventually(async () => (await queued()).queued === n - 1)).toBe(true);
    }
    calls.push(call(quiet, 'quiet', 'echo', { text: 'quiet' }));
    expect(await eventually(async () => (await queued()).queued === 3)).toBe(true);
    // The slot frees when the worker confirms the cancel of the call holding it.
    holding.abort();
    await Promise.all(calls);
    expect(order).toEqual(['noisy-1 cancelled', 'quiet quiet', 'noisy-2 two', 'noisy-3 three']);
  });

  it('serves the quiet session\'s call first in a thread pool too', async () => {
    const order: string[] = [];
    const call = caller(order);
    const holding = new AbortController();
    const calls = [call(noisy, 'noisy-1', 'th-wait', { ms: 60_000 }, holding.signal)];
    expect(await eventually(async () => (await queued('threads')).busy === 1)).toBe(true);
    for (const [n, text] of [[2, 'two'], [3, 'three']] as const) {
      calls.push(call(noisy, `noisy-${n}`, 'th-echo', { text }));
      expect(await eventually(async () => (await queued('threads')).queued === n - 1)).toBe(true);
    }
    calls.push(call(quiet, 'quiet', 'th-echo', { text: 'quiet' }));
    expect(await eventually(async () => (await queued('threads')).queued === 3)).toBe(true);
    holding.abort();
    await Promise.all(calls);
    expect(order).toEqual(['noisy-1 cancelled', 'quiet quiet', 'noisy-2 two', 'noisy-3 three']);
  });

  it('answers BUSY to the noisy session\'s newest waiting call, not the quiet one, when the queue is full', async () => {
    const order: string[] = [];
    const call = caller(order);
    const holding = new AbortController();
    const calls = [call(noisy, 'noisy-1', 'sleep', { ms: 60_000 }, holding.signal)];
    expect(await eventually(async () => (await queued()).busy === 1)).toBe(true);
    for (const n of [2, 3, 4]) {
      calls.push(call(noisy, `noisy-${n}`, 'echo', { text: String(n) }));
      expect(await eventually(async () => (await queued()).queued === n - 1)).toBe(true);
    }
    calls.push(call(quiet, 'quiet', 'echo', { text: 'quiet' }));
    // The full queue (pools.maxQueue 3) refuses the noisy session's newest call and keeps the quiet one.
    expect(await eventually(() => order.length === 1)).toBe(true);
    expect(order).toEqual(['noisy-4 BUSY']);
    holding.abort();
    await Promise.all(calls);
    expect(order).toEqual(['noisy-4 BUSY', 'noisy-1 cancelled', 'quiet quiet', 'noisy-2 2', 'noisy-3 3']);
  });
});

/**
 * pools.reservedSlots (default 1): running calls are never taken back, so a session that fills a
 * pool's slots with slow calls kept another session's call waiting for one of them to end. The pool
 * keeps its last free slot for an open session holding none: the other session's call runs at
 * once, while every slow call still runs. Pools of 4 slots (a process worker of concurrency 4, 2
 * threads of concurrency 2). By state and order, not timings.
 */
describe('a pool keeping its last free slot for another session', () => {
  let server: HttpServer;
  let noisy: Client;
  let quiet: Client | undefined;
  let quietTransport: StreamableHTTPClientTransport | undefined;

  const stats = async (pool: string) => {
    const health = (await (await fetch(`${server.baseUrl}/health`)).json()) as { pools: Array<{ name: string; busy: number; queued: number }> };
    const { busy, queued } = health.pools.find((entry) => entry.name === pool)!;
    return `${busy} running, ${queued} waiting`;
  };
  /** `calls` slow calls of the noisy session, ended by aborting `holding`. */
  const slowCalls = (call: ReturnType<typeof caller>, tool: string, holding: AbortController) =>
    [1, 2, 3, 4].map((n) => call(noisy, `noisy-${n}`, tool, { ms: 60_000 }, holding.signal));

  beforeAll(async () => {
    const config = fixtureConfig({ process: { workers: 1, concurrency: 4, callTimeoutMs: 30_000 }, thread: { workers: 2, concurrency: 2, callTimeoutMs: 30_000 } });
    server = await startHttp('mcpvisor', ['--config', writeConfig(config)]);
    ({ client: noisy } = await connectHttp(server.mcpUrl, 'noisy'));
  });
  afterAll(async () => {
    await noisy.close();
    await quiet?.close();
    await server.stop();
  });

  it('lets a lone session take every slot: nothing is kept while no other session is open', async () => {
    const holding = new AbortController();
    const calls = slowCalls(caller([]), 'sleep', holding);
    expect(await eventually(async () => (await stats('test')) === '4 running, 0 waiting')).toBe(true);
    holding.abort();
    await Promise.all(calls);
    expect(await eventually(async () => (await stats('test')) === '0 running, 0 waiting')).toBe(true);
  });

  it.each([
    { kind: 'process', pool: 'test', slow: 'sleep', echo: 'echo' },
    { kind: 'thread', pool: 'threads', slow: 'th-wait', echo: 'th-echo' },
  ])('answers the other session\'s call while the first one\'s slow calls fill the rest ($kind pool)', async ({ pool, slow, echo }) => {
    if (!quiet) ({ client: quiet, transport: quietTransport } = await connectHttp(server.mcpUrl, 'quiet'));
    const order: string[] = [];
    const call = caller(order);
    const holding = new AbortController();
    const calls = slowCalls(call, slow, holding);
    // The noisy session holds 3 slots; its 4th call waits, the last slot kept for the quiet session.
    expect(await eventually(async () => (await stats(pool)) === '3 running, 1 waiting')).toBe(true);
    await call(quiet, 'quiet', echo, { text: 'quiet' });
    // Answered while all 3 slow calls still run, the 4th still waits.
    expect(order).toEqual(['quiet quiet']);
    expect(await stats(pool)).toBe('3 running, 1 waiting');
    holding.abort();
    await Promise.all(calls);
    expect(order.slice(1).sort()).toEqual(['noisy-1 cancelled', 'noisy-2 cancelled', 'noisy-3 cancelled', 'noisy-4 cancelled']);
    expect(await eventually(async () => (await stats(pool)) === '0 running, 0 waiting')).toBe(true);
  });

  it('gives the kept slot to the waiting call once the session it was kept for has closed', async () => {
    // The quiet session ends (DELETE): a client closed without it stays an open session.
    await quietTransport?.terminateSession();
    await quiet?.close();
    quiet = undefined;
    const leaving = await connectHttp(server.mcpUrl, 'leaving');
    const holding = new AbortController();
    const calls = slowCalls(caller([]), 'sleep', holding);
    expect(await eventually(async () => (await stats('test')) === '3 running, 1 waiting')).toBe(true);
    // It waited for one of the 60 s calls to end.
    await leaving.transport.terminateSession();
    await leaving.client.close();
    expect(await eventually(async () => (await stats('test')) === '4 running, 0 waiting')).toBe(true);
    holding.abort();
    await Promise.all(calls);
  });
});
