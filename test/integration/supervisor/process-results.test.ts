import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorCodeOf } from '../../../protocol/results';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';

/** A custom process tool that returns what is no tool result, or what JSON IPC cannot carry. */
type Result = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean; _meta?: Record<string, unknown> };

const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args }, undefined, { timeout: 15_000 }) as Promise<Result>;

let server: HttpServer;
let client: Client;

beforeAll(async () => {
  server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false }))]);
  ({ client } = await connectHttp(server.mcpUrl));
});
afterAll(async () => {
  await client.close();
  await server.stop();
});

const testPool = async () => {
  const health = (await (await fetch(`${server.baseUrl}/health`)).json()) as { pools: Array<{ name: string; restarts: number }> };
  return health.pools.find((pool) => pool.name === 'test')!;
};

it.each([
  ['a BigInt', 'bigint', /^INTERNAL \(tool return, toolset test\): the tool's result cannot be written as JSON: structuredContent\.n is a BigInt$/],
  ['a cycle', 'cycle', /^INTERNAL \(tool return, toolset test\): the tool's result cannot be written as JSON: structuredContent\.\w+ is an object that contains itself$/],
  ['a number', 'number', /^INTERNAL \(tool return\): the tool returned a result MCP clients refuse: a result must be an object with 'content', not a number$/],
  ['nothing', 'nothing', /^INTERNAL \(tool return\): the tool returned a result MCP clients refuse: a result must be an object with 'content', not missing$/],
  ['content that is no array', 'no-content', /^INTERNAL \(tool return\): the tool returned a result MCP clients refuse: 'content' must be an array of content items, not "text"$/],
  ['a thrown object without a message', 'null-proto', /^INTERNAL \(tool return, toolset test\): an object was thrown, not an Error: \{\}$/],
])('answers %s with INTERNAL, and the worker and its other call go on', async (_what, kind, message) => {
  const other = call(client, 'sleep', { ms: 300 });
  const result = await call(client, 'return', { kind });
  expect(result.isError).toBe(true);
  expect(errorCodeOf(result)).toBe('INTERNAL');
  expect(textOf(result)).toMatch(message);
  expect(textOf(await other)).toBe('slept 300 ms');
  expect((await testPool()).restarts).toBe(0);
});
