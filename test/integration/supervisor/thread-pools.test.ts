import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorCodeOf } from '../../../protocol/results';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';

/** Thread pools (piscina) under the supervisor: several calls a thread, cancels, heap limits. */
type Result = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean; _meta?: Record<string, unknown> };

const call = (client: Client, name: string, args: Record<string, unknown> = {}, options: { signal?: AbortSignal; timeout?: number } = {}) =>
  client.callTool({ name, arguments: args }, undefined, options) as Promise<Result>;

describe('threads running several calls at once', () => {
  let server: HttpServer;
  let client: Client;

  beforeAll(async () => {
    // One thread, two calls at a time, a 3 s deadline and a 300 ms cancel grace.
    server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: { concurrency: 2, callTimeoutMs: 3000 } }))]);
    ({ client } = await connectHttp(server.mcpUrl));
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
  });

  const threadRestarts = async () => {
    const health = (await (await fetch(`${server.baseUrl}/health`)).json()) as { pools: Array<{ name: string; restarts: number }> };
    return health.pools.find((pool) => pool.name === 'threads')!.restarts;
  };

  it('stops a cancelled call in its thread and keeps the thread and its other call running', async () => {
    const long = call(client, 'th-wait', { ms: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // On the same thread; it ends (3.5 s) after the long call's deadline (3 s) and grace (3.3 s).
    const short = call(client, 'th-wait', { ms: 2500 });
    expect(errorCodeOf(await long)).toBe('TIMEOUT');
    expect(textOf(await short)).toBe('waited');
    expect(await threadRestarts()).toBe(0);
  });

  it('gives a call that waited for its thread only what is left of its budget', async () => {
    // Both places on the one thread taken for ~1.5 s: the echo waits in the queue meanwhile.
    const busy = [call(client, 'th-wait', { ms: 1500 }), call(client, 'th-wait', { ms: 1500 })];
    await new Promise((resolve) => setTimeout(resolve, 200));
    const queued = await call(client, 'th-echo', { text: 'queued' });
    await Promise.all(busy);
    expect(textOf(queued)).toBe('queued');
    const budget = (queued.structuredContent as { deadlineMs: number }).deadlineMs;
    expect(budget).toBeGreaterThan(0);
    expect(budget).toBeLessThan(3000 - 1000);
  });

  it('terminates a thread whose call ignores its cancel, and runs a call that had not started there on another thread', async () => {
    const spin = call(client, 'th-spin', { ms: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // Handed to the blocked thread (two calls per thread), where it cannot start; its own deadline
    // (4.5 s) is well after the termination (3 s + 300 ms grace).
    const other = call(client, 'th-echo', { text: 'ran elsewhere' });
    expect(errorCodeOf(await spin)).toBe('TIMEOUT');
    expect(textOf(await other)).toBe('ran elsewhere');
    // Replaced by piscina, and not counted as a crash.
    expect(textOf(await call(client, 'th-echo', { text: 'after' }))).toBe('after');
    expect(await threadRestarts()).toBe(0);
  });

  /** A call running on the thread, then a spin on it cancelled: the thread is terminated 300 ms later. */
  const runBesideCancelledSpin = async (tool: string) => {
    const running = call(client, tool, { ms: 1000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const abort = new AbortController();
    const spin = call(client, 'th-spin', { ms: 30_000 }, { signal: abort.signal }).catch((error: Error) => error);
    await new Promise((resolve) => setTimeout(resolve, 300));
    abort.abort();
    await spin;
    return running;
  };

  it('runs a read-only call again on another thread when its thread is terminated for another call', async () => {
    expect(textOf(await runBesideCancelledSpin('th-look'))).toBe('waited');
    expect(await threadRestarts()).toBe(0);
  });

  it('fails a running call whose tool is not declared safe to repeat with a clear reason when its thread is terminated', async () => {
    const result = await runBesideCancelledSpin('th-wait');
    expect(errorCodeOf(result)).toBe('WORKER_CRASHED');
    expect(textOf(result)).toMatch(/terminated because another call on it would not stop/);
    expect(textOf(await call(client, 'th-echo', { text: 'after' }))).toBe('after');
  });
});

describe('thread memory limit', () => {
  let server: HttpServer;
  let client: Client;

  beforeAll(async () => {
    const config = fixtureConfig({ thread: { callTimeoutMs: 30_000 } });
    server = await startHttp('mcpvisor', ['--config', writeConfig({ ...config, pools: { ...(config.pools as object), threadMaxOldGenerationSizeMb: 64 } })]);
    ({ client } = await connectHttp(server.mcpUrl));
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
  });

  it('fails a call that outgrows the thread heap with a clear WORKER_CRASHED, and the replaced thread serves the next call', async () => {
    expect(textOf(await call(client, 'th-hog', { mb: 8 }))).toBe('held 8 MB');
    const result = await call(client, 'th-hog', { mb: 256 });
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('WORKER_CRASHED');
    expect(textOf(result)).toMatch(/ran out of memory \(its 64 MB heap, pools\.threadMaxOldGenerationSizeMb\)/);
    expect(textOf(await call(client, 'th-echo', { text: 'after' }))).toBe('after');
  });
});
