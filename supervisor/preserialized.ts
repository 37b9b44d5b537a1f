import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * Outgoing JSON-RPC messages serialised for our transports (stdio, Streamable HTTP). One value
 * comes already serialised: the tool list (catalogue.ts), 1.7 MB for GitHub's 1,226 tools, built
 * from the descriptor texts the workers announced (protocol/tool-text.ts). Serialising it per
 * `tools/list` would block the event loop 8–17 ms each time; written from its text it costs a
 * copy. A file apart from wire.ts, which needs the SDK's schemas (~15 ms to build): the catalogue
 * is loaded before the workers are started, the transports after.
 */
const kept = new WeakMap<object, string>();

/**
 * An array that our transports write as `json` (a JSON array's text) without building it. Anything
 * else that reads it (a test, an SDK transport) sees JSON.parse(json), parsed on its first read.
 */
export function preserialized<T>(json: string): T[] {
  let parsed: T[] | undefined;
  const array = () => (parsed ??= JSON.parse(json) as T[]);
  const proxy = new Proxy([] as T[], {
    get: (_target, key) => Reflect.get(array(), key),
    has: (_target, key) => Reflect.has(array(), key),
    ownKeys: () => Reflect.ownKeys(array()),
    getOwnPropertyDescriptor: (_target, key) => Reflect.getOwnPropertyDescriptor(array(), key),
  });
  kept.set(proxy, json);
  return proxy;
}

/** `JSON.stringify(message)`, with a preserialized `result.tools` written from its text. */
export function serializeMessage(message: JSONRPCMessage): string {
  const result = (message as { result?: Record<string, unknown> }).result;
  const tools = result?.tools;
  const toolsJson = tools !== null && typeof tools === 'object' ? kept.get(tools) : undefined;
  if (toolsJson === undefined) return JSON.stringify(message);
  const { tools: _tools, ...restOfResult } = result!;
  const { result: _result, ...envelope } = message as { result: unknown };
  const rest = JSON.stringify(restOfResult).slice(1, -1);
  // envelope is never empty: a response has `jsonrpc` and `id`.
  return `${JSON.stringify(envelope).slice(0, -1)},"result":{"tools":${toolsJson}${rest ? `,${rest}` : ''}}}`;
}
