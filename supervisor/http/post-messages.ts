import { SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { IncomingMessage } from 'node:http';
import { acceptedTypes, type Accepted } from './accept';
import { isJsonType } from './body';
import { paramsRefusal, toJsonRpcMessage } from '../wire';

/** The SDK's limit on a JSON-RPC batch. */
const MAX_BATCH_SIZE = 100;

/** Why a POST is refused before any session state is looked at: its status, JSON-RPC code, message and id. */
export interface PostRefusal {
  status: number;
  code: number;
  message: string;
  id?: RequestId;
}

/**
 * The JSON-RPC messages of a Streamable HTTP POST and what its Accept admits, or why it is
 * refused, by the rules that need no session (the SDK transport's codes: 406, 415, 400): a type
 * the client accepts, a JSON body, a batch of 1 to 100, each a JSON-RPC 2.0 message (valid JSON
 * that is none is -32600; the SDK's transport said -32700).
 */
export function postMessages(req: IncomingMessage, body: unknown): { messages: JSONRPCMessage[]; accepted: Accepted } | { refused: PostRefusal } {
  const accepted = acceptedTypes(req.headers.accept);
  if (!accepted.json && !accepted.sse) {
    return { refused: { status: 406, code: -32000, message: 'Not Acceptable: the client must accept application/json or text/event-stream (MCP clients list both)' } };
  }
  if (!isJsonType(req.headers['content-type'])) return { refused: { status: 415, code: -32000, message: 'Unsupported Media Type: Content-Type must be application/json' } };
  if (body === undefined) return { refused: { status: 400, code: -32700, message: 'Parse error: Invalid JSON' } };
  if (Array.isArray(body) && body.length === 0) return { refused: { status: 400, code: -32600, message: 'Invalid Request: an empty batch' } };
  if (Array.isArray(body) && body.length > MAX_BATCH_SIZE) {
    return { refused: { status: 400, code: -32600, message: `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages` } };
  }
  const messages: JSONRPCMessage[] = [];
  for (const raw of Array.isArray(body) ? body : [body]) {
    const message = toJsonRpcMessage(raw);
    const refused = message ? undefined : paramsRefusal(raw);
    if (refused) return { refused: { status: 400, ...refused } };
    if (!message) return { refused: { status: 400, code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message' } };
    messages.push(message);
  }
  return { messages, accepted };
}

/** An error message for an unsupported `MCP-Protocol-Version`; none when absent or supported. */
export function checkProtocolVersion(req: IncomingMessage): string | undefined {
  const version = req.headers['mcp-protocol-version'];
  if (typeof version !== 'string' || SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  return `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`;
}
