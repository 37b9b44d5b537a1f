import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isInitializeRequest,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { acceptedTypes } from './accept';
import { isJsonType } from './body';
import { sendJsonRpcError } from './guards';
import { startHeartbeat } from './heartbeat';
import { serializeMessage } from '../preserialized';
import { batchesAllowed, paramsRefusal, toJsonRpcMessage } from '../wire';

/** The SDK's limit on a JSON-RPC batch. */
const MAX_BATCH_SIZE = 100;

export interface SessionTransportOptions {
  sessionIdGenerator: () => string;
  onsessioninitialized: (sessionId: string) => void;
  /** An SSE stream silent this long gets heartbeat events (proxies cut silent streams). */
  heartbeatIntervalMs: number;
  maxStreamBufferBytes: number;
  /** The session's GET stream, if open: where messages unrelated to a request go. */
  standaloneStream: () => ServerResponse | undefined;
  /** The client closed a POST before `requestId` was answered. */
  onDropped: (requestId: RequestId) => void;
}

/** The response of one POST that carried requests: an SSE stream, written at once when possible. */
interface PostStream {
  res: ServerResponse;
  /** Requests of this POST not answered yet. */
  open: Set<RequestId>;
  /** Answers held until the last one (headers not sent yet). */
  held: JSONRPCMessage[];
  /** The POST carried a JSON array: the answers go back as one. */
  batch: boolean;
  /** What the client's Accept admits: `json` only never streams, `sse` only always does. */
  answer: 'json' | 'sse' | 'either';
  timer?: NodeJS.Timeout;
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/**
 * Server side of Streamable HTTP for one session, on Node's request and response objects. It
 * replaces the SDK's `StreamableHTTPServerTransport`, which converts every request and response
 * to web streams (Hono's adapter): that conversion cost more supervisor CPU per call than the
 * rest of the call's path. Same rules and status codes as the SDK's transport (406, 415, 400,
 * 404, 202), without resumability (we keep no event store). The difference that matters: a
 * POST's answer is held until its requests are all answered and then written with its headers
 * in one write, as `application/json` (the MCP specification lets the server choose); a
 * notification about a request (progress) or a call outlasting the heartbeat interval sends SSE
 * headers early and streams from there. A client whose Accept admits one of the two types (not
 * both, as MCP asks: accept.ts) gets that one: JSON only, the answer alone (no progress, no
 * heartbeats); SSE only, a stream from the start.
 */
export class SessionTransport implements Transport {
  sessionId?: string;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];

  #options: SessionTransportOptions;
  #initialized = false;
  #protocolVersion: string | undefined;
  #closed = false;
  #streams = new Map<RequestId, PostStream>();

  constructor(options: SessionTransportOptions) {
    this.#options = options;
  }

  async start(): Promise<void> {
    // Connections come per request (handlePost).
  }

  /** The revision initialize negotiated (mcp-session.ts tells it); batches depend on it. */
  setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
  }

  /** A POST to the endpoint, its body already parsed as JSON (body.ts). */
  handlePost(req: IncomingMessage, res: ServerResponse, body: unknown): void {
    const accepted = acceptedTypes(req.headers.accept);
    if (!accepted.json && !accepted.sse) {
      return sendJsonRpcError(res, 406, -32000, 'Not Acceptable: the client must accept application/json or text/event-stream (MCP clients list both)');
    }
    if (!isJsonType(req.headers['content-type'])) {
      return sendJsonRpcError(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    }
    if (body === undefined) return sendJsonRpcError(res, 400, -32700, 'Parse error: Invalid JSON');
    if (Array.isArray(body) && body.length === 0) return sendJsonRpcError(res, 400, -32600, 'Invalid Request: an empty batch');
    if (Array.isArray(body) && body.length > MAX_BATCH_SIZE) {
      return sendJsonRpcError(res, 400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
    }
    const messages: JSONRPCMessage[] = [];
    for (const raw of Array.isArray(body) ? body : [body]) {
      const message = toJsonRpcMessage(raw);
      const refused = message ? undefined : paramsRefusal(raw);
      if (refused) return sendJsonRpcError(res, 400, refused.code, refused.message, refused.id);
      // JSON-RPC 2.0: valid JSON that is not a Request object is -32600 (the SDK's transport says -32700).
      if (!message) return sendJsonRpcError(res, 400, -32600, 'Invalid Request: not a JSON-RPC 2.0 message');
      messages.push(message);
    }
    if (this.#closed) return sendJsonRpcError(res, 404, -32001, 'Session not found');

    // The method first: the SDK's guards are zod parses, and a failing one costs tens of µs.
    if (messages.some((message) => 'method' in message && message.method === 'initialize' && isInitializeRequest(message))) {
      if (this.#initialized) return sendJsonRpcError(res, 400, -32600, 'Invalid Request: Server already initialized');
      if (messages.length > 1) return sendJsonRpcError(res, 400, -32600, 'Invalid Request: Only one initialization request is allowed');
      this.sessionId = this.#options.sessionIdGenerator();
      this.#initialized = true;
      this.#options.onsessioninitialized(this.sessionId);
    } else {
      if (!this.#initialized) return sendJsonRpcError(res, 400, -32000, 'Bad Request: Server not initialized');
      const versionError = checkProtocolVersion(req);
      if (versionError) return sendJsonRpcError(res, 400, -32000, versionError);
      if (Array.isArray(body) && !batchesAllowed(this.#protocolVersion)) {
        return sendJsonRpcError(res, 400, -32600, `Invalid Request: JSON-RPC batches are not accepted under protocol revision ${this.#protocolVersion} (MCP has them in 2025-03-26 only); send one message per POST`);
      }
    }

    const extra = { requestInfo: { headers: req.headers } };
    // A valid message with both a method and an id is a request (the zod guard costs more).
    const requests = messages.filter((message): message is JSONRPCRequest => 'method' in message && 'id' in message);
    // An id still in flight would take over the other request's answer (MCP: ids are never reused in a session).
    const ids = new Set<RequestId>();
    for (const request of requests) {
      if (this.#streams.has(request.id) || ids.has(request.id)) {
        return sendJsonRpcError(res, 400, -32600, `Invalid Request: request id ${JSON.stringify(request.id)} is already in use in this session`);
      }
      ids.add(request.id);
    }
    if (requests.length === 0) {
      res.writeHead(202).end();
      for (const message of messages) this.onmessage?.(message, extra);
      return;
    }
    const answer = accepted.json && accepted.sse ? 'either' : accepted.json ? 'json' : 'sse';
    const stream: PostStream = { res, open: ids, held: [], batch: Array.isArray(body), answer };
    for (const id of stream.open) this.#streams.set(id, stream);
    if (answer === 'sse') {
      this.#flush(stream);
      startHeartbeat(res, this.#options.heartbeatIntervalMs, this.#options.maxStreamBufferBytes);
    } else if (answer === 'either') {
      // A call that runs long: send the headers and heartbeats so the client and proxies see life.
      stream.timer = setTimeout(() => {
        this.#flush(stream);
        startHeartbeat(res, this.#options.heartbeatIntervalMs, this.#options.maxStreamBufferBytes);
      }, this.#options.heartbeatIntervalMs);
      stream.timer.unref();
    }
    res.on('close', () => {
      const unanswered = res.writableFinished ? [] : [...stream.open];
      this.#forget(stream);
      for (const id of unanswered) this.#options.onDropped(id);
    });
    for (const message of messages) this.onmessage?.(message, extra);
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // Messages from the SDK's own Server: their shape is known, no schema needed to tell them apart.
    const isResponse = 'id' in message && ('result' in message || 'error' in message);
    const requestId = isResponse ? message.id : options?.relatedRequestId;
    if (requestId === undefined) {
      const standalone = this.#options.standaloneStream();
      if (standalone && !standalone.writableEnded) standalone.write(sseEvent(message));
      return;
    }
    const stream = this.#streams.get(requestId);
    // Its POST is gone (client dropped it, or the call was cancelled): nobody is listening.
    if (!stream) return;
    if (!isResponse) {
      // A client that takes JSON only gets the answer alone: a notification would need a stream.
      if (stream.answer === 'json') return;
      this.#flush(stream);
      stream.res.write(sseEvent(message));
      return;
    }
    this.#streams.delete(requestId);
    stream.open.delete(requestId);
    if (stream.open.size > 0) {
      if (stream.res.headersSent) stream.res.write(sseEvent(message));
      else stream.held.push(message);
      return;
    }
    clearTimeout(stream.timer);
    if (stream.res.headersSent) {
      stream.res.end(sseEvent(message));
      return;
    }
    // Nothing streamed: the answer as plain JSON, which costs both ends less than SSE framing.
    stream.held.push(message);
    const payload = stream.batch ? `[${stream.held.map(serializeMessage).join(',')}]` : serializeMessage(message);
    stream.res.writeHead(200, { ...this.#headers('application/json'), 'content-length': Buffer.byteLength(payload) });
    stream.res.end(payload);
  }

  /**
   * Drops `requestId` from its POST without an answer (the call was cancelled); the POST ends
   * once its other requests (a batch) are answered, their answers kept.
   */
  closeSSEStream(requestId: RequestId): void {
    const stream = this.#streams.get(requestId);
    if (!stream) return;
    this.#streams.delete(requestId);
    stream.open.delete(requestId);
    if (stream.open.size > 0) return;
    this.#forget(stream);
    if (stream.answer === 'json' && !stream.res.headersSent) {
      // A JSON-only client gets the batch's other answers, held until now; with none, it is
      // told there is no answer to read, as for a notification.
      if (stream.held.length > 0) {
        const payload = `[${stream.held.map(serializeMessage).join(',')}]`;
        stream.res.writeHead(200, { ...this.#headers('application/json'), 'content-length': Buffer.byteLength(payload) });
        stream.res.end(payload);
        return;
      }
      stream.res.writeHead(202, this.sessionId === undefined ? {} : { 'mcp-session-id': this.sessionId }).end();
      return;
    }
    this.#flush(stream);
    stream.res.end();
  }

  /**
   * Ends the session. A request still running gets a JSON-RPC error on its POST (ConnectionClosed,
   * -32000): a POST ended with no answer left an SDK client waiting for its own timeout.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const stream of new Set(this.#streams.values())) {
      const unanswered: JSONRPCMessage[] = [...stream.open].map((id) => ({ jsonrpc: '2.0', id, error: { code: -32000, message: 'the session was closed before this request was answered' } }));
      this.#forget(stream);
      if (stream.res.writableEnded) continue;
      if (stream.res.headersSent) {
        stream.res.end(unanswered.map(sseEvent).join(''));
        continue;
      }
      const all = [...stream.held, ...unanswered];
      const payload = stream.batch ? `[${all.map(serializeMessage).join(',')}]` : serializeMessage(all[0]);
      stream.res.writeHead(200, { ...this.#headers('application/json'), 'content-length': Buffer.byteLength(payload) });
      stream.res.end(payload);
    }
    this.onclose?.();
  }

  #headers(type?: 'application/json'): Record<string, string> {
    const headers = type ? { 'content-type': type } : SSE_HEADERS;
    return this.sessionId === undefined ? headers : { ...headers, 'mcp-session-id': this.sessionId };
  }

  /** Sends the headers and what was queued, so the stream can be written event by event. */
  #flush(stream: PostStream): void {
    if (stream.res.headersSent) return;
    stream.res.writeHead(200, this.#headers());
    stream.res.flushHeaders();
    if (stream.held.length > 0) stream.res.write(stream.held.map(sseEvent).join(''));
    stream.held = [];
  }

  #forget(stream: PostStream): void {
    clearTimeout(stream.timer);
    for (const id of stream.open) if (this.#streams.get(id) === stream) this.#streams.delete(id);
    stream.open.clear();
  }
}

function sseEvent(message: JSONRPCMessage): string {
  return `event: message\ndata: ${serializeMessage(message)}\n\n`;
}


/** An error message for an unsupported `MCP-Protocol-Version`; none when absent or supported. */
export function checkProtocolVersion(req: IncomingMessage): string | undefined {
  const version = req.headers['mcp-protocol-version'];
  if (typeof version !== 'string' || SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  return `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`;
}
