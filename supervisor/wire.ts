import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * JSON text of outgoing messages, for our transports (stdio, Streamable HTTP). One value is
 * worth keeping serialised: the tool list, the same array until the catalogue changes, and large
 * (1.7 MB for GitHub's 1,226 tools, 8–17 ms to stringify here). Each session's `tools/list`
 * would otherwise block the event loop that long; with `serializeOnce` it costs a string copy.
 */
const kept = new WeakMap<object, string | undefined>();

/** Marks `value` (an array or object never changed afterwards) as serialised once, on first send. */
export function serializeOnce(value: object): void {
  if (!kept.has(value)) kept.set(value, undefined);
}

/** `JSON.stringify(message)`, with a marked `result.tools` written from its kept text. */
export function serializeMessage(message: JSONRPCMessage): string {
  const result = (message as { result?: Record<string, unknown> }).result;
  const tools = result?.tools;
  if (tools === null || typeof tools !== 'object' || !kept.has(tools)) return JSON.stringify(message);
  let toolsJson = kept.get(tools);
  if (toolsJson === undefined) {
    toolsJson = JSON.stringify(tools);
    kept.set(tools, toolsJson);
  }
  const { tools: _tools, ...restOfResult } = result!;
  const { result: _result, ...envelope } = message as { result: unknown };
  const rest = JSON.stringify(restOfResult).slice(1, -1);
  // envelope is never empty: a response has `jsonrpc` and `id`.
  return `${JSON.stringify(envelope).slice(0, -1)},"result":{"tools":${toolsJson}${rest ? `,${rest}` : ''}}}`;
}
