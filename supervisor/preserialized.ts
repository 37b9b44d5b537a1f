import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';

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

/** Strings of a result's content items from this length on are written into the bytes as they are. */
const LARGE_TEXT = 64 * 1024;
/** What JSON.stringify would escape in a string (lone surrogates aside: isWellFormed). */
const NEEDS_ESCAPE = /[\u0000-\u001f"\\]/;
/** Stands for a large text while the rest is serialised; no worker knows it. */
const PLACEHOLDER = `\u0000mcpvisor-${randomUUID()}:`;

/**
 * `prefix + serializeMessage(message) + suffix` as UTF-8 bytes, for a transport to write. Why:
 * a large answer (a shell command's output, an 8 MiB page) went through JSON.stringify, a string
 * joined to its framing (`${json}\n`, the HTTP headers, flattened into one more copy) and the
 * socket's own copy of what it could not write at once, ~3 copies of it beside the bytes
 * waiting for a slow client. The large texts of the result's content, when JSON needs no escape
 * in them (so their JSON is their text in quotes), are written straight into the one buffer the
 * socket then keeps; the rest is serialised as before.
 */
export function serializeMessageBytes(message: JSONRPCMessage, prefix = '', suffix = ''): Buffer {
  const large: string[] = [];
  const standIn = largeTextsOut(message, large);
  if (large.length === 0) return Buffer.from(`${prefix}${serializeMessage(message)}${suffix}`);
  const json = serializeMessage(standIn);
  const spots = large.map((text, i) => ({ text, token: JSON.stringify(`${PLACEHOLDER}${i}`), at: json.indexOf(JSON.stringify(`${PLACEHOLDER}${i}`)) }));
  if (spots.some((spot) => spot.at < 0)) return Buffer.from(`${prefix}${serializeMessage(message)}${suffix}`);
  spots.sort((a, b) => a.at - b.at);
  const parts: string[] = [prefix];
  let from = 0;
  for (const spot of spots) {
    parts.push(json.slice(from, spot.at), '"', spot.text, '"');
    from = spot.at + spot.token.length;
  }
  parts.push(json.slice(from), suffix);
  let size = 0;
  for (const part of parts) size += Buffer.byteLength(part);
  const bytes = Buffer.allocUnsafe(size);
  let offset = 0;
  for (const part of parts) offset += bytes.write(part, offset);
  return bytes;
}

/**
 * `message` with each large, escape-free text of `result.content` (an item's text or data, a
 * resource's text or blob) replaced by a placeholder, the texts pushed on `large` in order; the
 * message itself when it has none. Copies only the objects on the way to a replaced text.
 */
function largeTextsOut(message: JSONRPCMessage, large: string[]): JSONRPCMessage {
  const result = (message as { result?: { content?: unknown } }).result;
  const content = result?.content;
  if (!Array.isArray(content)) return message;
  const swap = (holder: Record<string, unknown>, keys: string[]): Record<string, unknown> => {
    // An object JSON writes by its toJSON is not looked into (a copy would lose it).
    if (typeof holder.toJSON === 'function') return holder;
    let copy: Record<string, unknown> | undefined;
    for (const key of keys) {
      const value = holder[key];
      // JSON writes own enumerable fields only.
      if (typeof value !== 'string' || !Object.prototype.propertyIsEnumerable.call(holder, key) || value.length < LARGE_TEXT || NEEDS_ESCAPE.test(value) || !(value as unknown as { isWellFormed(): boolean }).isWellFormed()) continue;
      copy ??= { ...holder };
      copy[key] = `${PLACEHOLDER}${large.length}`;
      large.push(value);
    }
    return copy ?? holder;
  };
  const items = content.map((item: unknown) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
    const swapped = swap(item as Record<string, unknown>, ['text', 'data']);
    const resource = (swapped as { resource?: unknown }).resource;
    if (resource === null || typeof resource !== 'object' || Array.isArray(resource)) return swapped;
    const inner = swap(resource as Record<string, unknown>, ['text', 'blob']);
    return inner === resource ? swapped : { ...swapped, resource: inner };
  });
  if (large.length === 0) return message;
  return { ...message, result: { ...result, content: items } } as JSONRPCMessage;
}
