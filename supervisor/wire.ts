import { JSONRPCMessageSchema, JSONRPCRequestSchema, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';

/**
 * JSON-RPC on our transports' wire (stdio, Streamable HTTP): incoming messages recognised.
 * Outgoing ones are serialised by preserialized.ts.
 */

/**
 * `raw` as a JSON-RPC message, or undefined when it is not one. A request or notification of the
 * common shape (only `jsonrpc`, `method`, an integer or string `id`, and `params` whose `_meta`,
 * if any, holds only a progress token) is recognised here: exactly what the SDK's schema accepts
 * unchanged, in ~0.05 µs where the zod parse takes ~0.5 µs (hot loop; more under load).
 * Everything else (responses, other `_meta`, anything malformed) is the SDK schema's to judge.
 * `params: null` and `params._meta: null` are taken as absent.
 */
export function toJsonRpcMessage(raw: unknown): JSONRPCMessage | undefined {
  if (isObject(raw) && (raw as { params?: unknown }).params === null) raw = withoutNullParams(raw as Record<string, unknown>);
  if (isPlainRequest(raw)) return raw as JSONRPCMessage;
  const params = isObject(raw) ? (raw as { params?: unknown }).params : undefined;
  if (isObject(params) && (params as { _meta?: unknown })._meta === null) return toJsonRpcMessage(withoutNullMeta(raw as { params: Record<string, unknown> }));
  // JSON.parse has rounded such an id: answering it would answer another request's id.
  if (hasUnsafeId(raw)) return undefined;
  const parsed = JSONRPCMessageSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/**
 * `message` without its `params: null`. JSON-RPC 2.0 has a present `params` be an object or an
 * array, but clients send null for "none" (Emacs' mcp.el on every `tools/list`, as `arguments:
 * null` is taken in mcp-session.ts), and the SDK's schema refused the whole message: such a
 * client never got its tools. Decision: null params are no params, as the Python SDK takes them.
 */
function withoutNullParams(message: Record<string, unknown>): Record<string, unknown> {
  const { params: _none, ...rest } = message;
  return rest;
}

/** `message` without its `params._meta: null`: no `_meta`, as null params are no params (withoutNullParams). */
function withoutNullMeta(message: { params: Record<string, unknown> }): Record<string, unknown> {
  const { _meta: _none, ...params } = message.params;
  return { ...message, params };
}

/**
 * The answer to `raw`, refused by toJsonRpcMessage, when it is a request whose params alone the
 * SDK's schema refuses (an array, `_meta` that is not an object, a progress token that is neither
 * a string nor an integer): invalid params (-32602) under the request's id, naming what is wrong. Such a
 * request was answered -32600 "not a JSON-RPC 2.0 message" (over HTTP with a null id; on legacy
 * SSE "a request needs a string or integer id", of a request whose id was 2). Undefined for
 * anything else, which is an invalid request.
 */
export function paramsRefusal(raw: unknown): { id: RequestId; code: number; message: string } | undefined {
  if (!isObject(raw)) return undefined;
  const message = raw as Record<string, unknown>;
  if (message.jsonrpc !== '2.0' || typeof message.method !== 'string') return undefined;
  if (!isObject(message.params) && !Array.isArray(message.params)) return undefined;
  if (typeof message.id !== 'string' && !Number.isSafeInteger(message.id)) return undefined;
  for (const key in message) if (key !== 'jsonrpc' && key !== 'method' && key !== 'id' && key !== 'params') return undefined;
  const parsed = JSONRPCRequestSchema.safeParse(raw);
  const issue = parsed.success ? undefined : parsed.error.issues[0];
  if (!issue || issue.path[0] !== 'params') return undefined;
  // JSON-RPC 2.0 has positional params too; MCP names every one.
  if (Array.isArray(message.params)) return { id: message.id as RequestId, code: -32602, message: 'Invalid params: params must be an object (MCP has no positional params)' };
  const path = issue.path.slice(1);
  // zod says only "Invalid input" of a union.
  const problem = path[path.length - 1] === 'progressToken' ? 'must be a string or an integer' : issue.message;
  return { id: message.id as RequestId, code: -32602, message: `Invalid params: ${path.length > 0 ? `${path.map(String).join('.')}: ` : ''}${problem}` };
}

/** An `id` that is a number but not an exactly representable integer (JSON.parse changed it, or a fraction). */
export function hasUnsafeId(raw: unknown): boolean {
  const id = isObject(raw) ? (raw as { id?: unknown }).id : undefined;
  return typeof id === 'number' && !Number.isSafeInteger(id);
}

/**
 * Whether JSON-RPC batches are taken under the negotiated protocol revision: MCP added them in
 * 2025-03-26 and removed them in 2025-06-18 ("MUST be a single JSON-RPC request, notification, or
 * response"). Earlier revisions are JSON-RPC 2.0, which has them. Not before initialize, which
 * may not be batched.
 */
export function batchesAllowed(protocolVersion: string | undefined): boolean {
  return protocolVersion !== undefined && protocolVersion <= '2025-03-26';
}

function isPlainRequest(raw: unknown): boolean {
  if (!isObject(raw)) return false;
  const message = raw as Record<string, unknown>;
  if (message.jsonrpc !== '2.0' || typeof message.method !== 'string') return false;
  for (const key in message) if (key !== 'jsonrpc' && key !== 'method' && key !== 'id' && key !== 'params') return false;
  if ('id' in message && typeof message.id !== 'string' && !Number.isSafeInteger(message.id)) return false;
  if (message.params === undefined) return true;
  return isObject(message.params) && (!('_meta' in (message.params as object)) || isPlainMeta((message.params as { _meta?: unknown })._meta));
}

/** A request's `_meta` holding only a progress token (a string or an integer), as MCP clients send it. */
export function isPlainMeta(meta: unknown): boolean {
  if (!isObject(meta)) return false;
  for (const key in meta as object) if (key !== 'progressToken') return false;
  const token = (meta as { progressToken?: unknown }).progressToken;
  return token === undefined || typeof token === 'string' || Number.isSafeInteger(token);
}

function isObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
