import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorCodeOf } from '../../../protocol/results';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { eventually } from '../../helpers/processes';

/** A custom thread toolset whose tools misbehave: odd results, odd throws, calls given up in the queue. */
type Result = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean; _meta?: Record<string, unknown> };

const call = (client: Client, name: string, args: Record<string, unknown> = {}, options: { signal?: AbortSignal } = {}) =>
  client.callTool({ name, arguments: args }, undefined, { ...options, timeout: 15_000 }) as Promise<Result>;

describe('a custom thread tool that returns or throws what is no tool result', () => {
  let server: HttpServer;
  let client: Client;

  beforeAll(async () => {
    // Two calls a thread: a result that cannot cross to the supervisor must not end the other one.
    server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: { concurrency: 2, callTimeoutMs: 5000 } }))]);
    ({ client } = await connectHttp(server.mcpUrl));
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
  });

  const threadPool = async () => {
    const health = (await (await fetch(`${server.baseUrl}/health`)).json()) as { pools: Array<{ name: string; restarts: number }> };
    return health.pools.find((pool) => pool.name === 'threads')!;
  };

  it.each([
    ['a BigInt', 'bigint', /the tool return returned a result that cannot be written as JSON: \S+ is a BigInt$/],
    ['a cycle', 'cycle', /the tool return returned a result that cannot be written as JSON: \S+ is an object that contains itself$/],
    ['a number', 'number', /the tool returned a result MCP clients refuse: a result must be an object with 'content', not a number$/],
    ['nothing', 'nothing', /the tool returned a result MCP clients refuse: a result must be an object with 'content', not missing$/],
    ['content that is no array', 'no-content', /the tool returned a result MCP clients refuse: 'content' must be an array of content items, not "text"$/],
    ['a thrown object without a message', 'null-proto', /^INTERNAL \(tool th-return, toolset threads\): an object was thrown, not an Error: \{\}$/],
  ])('answers %s with INTERNAL naming the tool, and its thread goes on', async (_what, kind, message) => {
    const other = call(client, 'th-wait', { ms: 300 });
    const result = await call(client, 'th-return', { kind });
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('INTERNAL');
    expect(textOf(result)).toMatch(message);
    expect(textOf(await other)).toBe('waited');
    expect((await threadPool()).restarts).toBe(0);
  });

  it('drops a function from a result as JSON does, and answers the rest', async () => {
    const result = await call(client, 'th-return', { kind: 'function' });
    expect(result.isError).toBeUndefined();
    expect(textOf(result)).toBe('x');
    expect(result.structuredContent).toEqual({});
    expect((await threadPool()).restarts).toBe(0);
  });
});

describe('a call cancelled while it waits for a thread', () => {
  let server: HttpServer;
  let client: Client;

  beforeAll(async () => {
    // One thread, one call at a time: a second call waits in piscina's queue.
    server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: { concurrency: 1, callTimeoutMs: 5000 } }))]);
    ({ client } = await connectHttp(server.mcpUrl));
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
  });

  const threadPool = async () => {
    const health = (await (await fetch(`${server.baseUrl}/health`)).json()) as { pools: Array<{ name: string; busy: number; queued: number }> };
    return health.pools.find((pool) => pool.name === 'threads')!;
  };

  it('never starts, so a CPU-bound call cancelled in the queue does not take the thread after', async () => {
    const busy = call(client, 'th-wait', { ms: 1500 });
    expect(await eventually(async () => (await threadPool()).busy === 1)).toBe(true);
    const controller = new AbortController();
    const queued = call(client, 'th-spin', { ms: 60_000 }, { signal: controller.signal }).catch((error: Error) => error);
    expect(await eventually(async () => (await threadPool()).queued === 1)).toBe(true);
    controller.abort();
    expect(await queued).toBeInstanceOf(Error);
    expect(textOf(await busy)).toBe('waited');
    // The spin would hold the one thread for a minute: this call would wait past its deadline.
    expect(textOf(await call(client, 'th-started'))).toBe('wait,started');
    expect(await eventually(async () => {
      const pool = await threadPool();
      return pool.busy === 0 && pool.queued === 0;
    })).toBe(true);
  });
});
