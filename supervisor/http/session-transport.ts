import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isInitializeRequest, type JSONRPCMessage, type JSONRPCRequest, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpConfig } from '../../config/schema';
import { sendJsonRpcError } from './guards';
import { startHeartbeat } from './heartbeat';
import type { SharedBudget } from './event-store';
import type { StreamBudget } from './stream-budget';
import { ResumableStreams, type NumberedStream } from './resumable-streams';
import { sseEvent } from './sse-frames';
import { serializeMessage, serializeMessageBytes } from '../preserialized';
import { batchesAllowed } from '../wire';
import { checkProtocolVersion, postMessages } from './post-messages';

export interface SessionTransportOptions {
  sessionIdGenerator: () => string;
  onsessioninitialized: (sessionId: string) => void;
  /** An SSE stream silent this long gets heartbeat events (proxies cut silent streams). */
  heartbeatIntervalMs: number;
  /** Bounds the output waiting on the session's SSE streams (shared by every session). */
  streamBudget: StreamBudget;
  /** The session's GET stream, if open: where messages unrelated to a request go. */
  standaloneStream: () => ServerResponse | undefined;
  /**
   * The client closed a POST before `requestId` was answered, and cannot resume it (no
   * resumability, no SSE stream yet, or not resumed within `resumeWindowMs`).
   */
  onDropped: (requestId: RequestId) => void;
  /** `http.resumability`: with `enabled`, SSE events carry ids and a GET with Last-Event-ID resumes. */
  resumability: HttpConfig['resumability'];
  /** The bytes every session's events hold together (`resumability.maxTotalBytes`). */
  resumeBudget?: SharedBudget;
}

/** The response of one POST that carried requests: an SSE stream, written at once when possible. */
interface PostStream extends NumberedStream {
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
  /** Its connection dropped with requests open: `res` is closed, events go to the store only. */
  detached: boolean;
  /** How long a detached stream waits for a resume before its calls are cancelled. */
  windowTimer?: NodeJS.Timeout;
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
 * 404, 202). The difference that matters: a
 * POST's answer is held until its requests are all answered and then written with its headers
 * in one write, as `application/json` (the MCP specification lets the server choose); a
 * notification about a request (progress) or a call outlasting the heartbeat interval sends SSE
 * headers early and streams from there. A client whose Accept admits one of the two types (not
 * both, as MCP asks: accept.ts) gets that one: JSON only, the answer alone (no progress, no
 * heartbeats); SSE only, a stream from the start.
 *
 * Resumability (MCP "Resumability and Redelivery"): once a POST's answer is a stream, its events
 * carry ids (sse-frames.ts) and are kept in the session's EventStore; a client whose stream was
 * cut sends a GET with `Last-Event-ID` (`resume`), gets what followed that event on that stream,
 * and the stream goes on there. A stream cut with requests open waits `resumeWindowMs` for that
 * (MCP: a disconnection is not a cancellation) before its calls are cancelled. A JSON answer
 * (nothing streamed yet) has nothing to resume: a client cut from it sees its request fail, and
 * the call is cancelled as before.
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
  /** Made on the session's first SSE stream: a session that never streams has none. */
  #resumable?: ResumableStreams<PostStream>;

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
    const read = postMessages(req, body);
    if ('refused' in read) return sendJsonRpcError(res, read.refused.status, read.refused.code, read.refused.message, read.refused.id);
    const { messages, accepted } = read;
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
    const stream: PostStream = { res, open: ids, held: [], batch: Array.isArray(body), answer, seq: 0, detached: false };
    for (const id of stream.open) this.#streams.set(id, stream);
    if (answer === 'sse') {
      this.#flush(stream);
      startHeartbeat(res, this.#options.heartbeatIntervalMs, this.#options.streamBudget);
    } else if (answer === 'either') {
      // A call that runs long: send the headers and heartbeats so the client and proxies see life.
      stream.timer = setTimeout(() => {
        this.#flush(stream);
        startHeartbeat(res, this.#options.heartbeatIntervalMs, this.#options.streamBudget);
      }, this.#options.heartbeatIntervalMs);
      stream.timer.unref();
    }
    this.#watch(stream, res);
    for (const message of messages) this.onmessage?.(message, extra);
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // Messages from the SDK's own Server: their shape is known, no schema needed to tell them apart.
    const isResponse = 'id' in message && ('result' in message || 'error' in message);
    const requestId = isResponse ? message.id : options?.relatedRequestId;
    if (requestId === undefined) {
      const standalone = this.#options.standaloneStream();
      if (standalone && !standalone.writableEnded) this.#write(standalone, sseEvent(message));
      return;
    }
    const stream = this.#streams.get(requestId);
    // Its POST is gone (client dropped it, or the call was cancelled): nobody is listening.
    if (!stream) return;
    if (!isResponse) {
      // A client that takes JSON only gets the answer alone: a notification would need a stream.
      if (stream.answer === 'json') return;
      this.#flush(stream);
      const frame = this.#frame(stream, message);
      if (!stream.detached) this.#write(stream.res, frame);
      return;
    }
    this.#streams.delete(requestId);
    stream.open.delete(requestId);
    if (stream.open.size > 0) {
      if (!stream.res.headersSent) stream.held.push(message);
      else {
        const frame = this.#frame(stream, message);
        if (!stream.detached) this.#write(stream.res, frame);
      }
      return;
    }
    clearTimeout(stream.timer);
    if (stream.res.headersSent) {
      const frame = this.#frame(stream, message);
      this.#ended(stream);
      // Written out whole, the stream's events go after a short grace rather than eventTtlMs.
      if (!stream.detached) {
        stream.res.end(frame, () => this.#resumable?.delivered(stream));
        this.#options.streamBudget.wrote(stream.res);
      }
      return;
    }
    // Nothing streamed: the answer as plain JSON, which costs both ends less than SSE framing.
    stream.held.push(message);
    // Bytes, not text: a string is joined to the headers and copied by the socket (serializeMessageBytes).
    const payload = stream.batch ? Buffer.from(`[${stream.held.map(serializeMessage).join(',')}]`) : serializeMessageBytes(message);
    stream.res.writeHead(200, { ...this.#headers('application/json'), 'content-length': payload.length });
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
    this.#ended(stream);
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
    if (!stream.detached) stream.res.end();
  }

  /**
   * A GET with `Last-Event-ID`: replays what followed that event on its stream, then carries the
   * stream's later events, and ends with its last answer. 400 for an id this session never gave
   * (made up, another session's); 410 for a stream with nothing left to give (it ended and its
   * events were read or expired). Answers the bounds dropped come as a JSON-RPC error naming the
   * bound. A second resume of a stream takes it over (the first connection may be half-open).
   */
  resume(lastEventId: string, res: ServerResponse): void {
    // A session that never streamed gave no id: a throwaway says so without keeping anything.
    const resumption = (this.#resumable ?? new ResumableStreams(this.#options.resumability, this.sessionId ?? '')).resume(lastEventId);
    if (resumption.status !== 200) return sendJsonRpcError(res, resumption.status, -32000, resumption.message);
    res.writeHead(200, this.#headers());
    const stream = resumption.stream;
    if (!stream) {
      res.end(resumption.frames);
      this.#options.streamBudget.wrote(res);
      return;
    }
    const previous = stream.res;
    stream.res = res;
    stream.detached = false;
    clearTimeout(stream.windowTimer);
    if (previous !== res && !previous.writableEnded) previous.end();
    res.flushHeaders();
    if (resumption.frames.length > 0) this.#write(res, resumption.frames);
    this.#watch(stream, res);
    startHeartbeat(res, this.#options.heartbeatIntervalMs, this.#options.streamBudget);
  }

  /**
   * Drops expired events and ended streams (the session's sweep). The numbering stays: a stream
   * number used again would let an old id replay another stream's events.
   */
  sweep(now: number): void {
    this.#resumable?.sweep(now);
  }

  /**
   * Ends the session. A request still running gets a JSON-RPC error on its POST (ConnectionClosed,
   * -32000): a POST ended with no answer left an SDK client waiting for its own timeout.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const stream of this.#resumable?.unfinished() ?? []) clearTimeout(stream.windowTimer);
    for (const stream of new Set(this.#streams.values())) {
      const unanswered: JSONRPCMessage[] = [...stream.open].map((id) => ({ jsonrpc: '2.0', id, error: { code: -32000, message: 'the session was closed before this request was answered' } }));
      this.#forget(stream);
      if (stream.res.writableEnded || stream.detached) continue;
      if (stream.res.headersSent) {
        stream.res.end(Buffer.concat(unanswered.map((message) => this.#frame(stream, message))));
        continue;
      }
      const all = [...stream.held, ...unanswered];
      const payload = stream.batch ? `[${all.map(serializeMessage).join(',')}]` : serializeMessage(all[0]);
      stream.res.writeHead(200, { ...this.#headers('application/json'), 'content-length': Buffer.byteLength(payload) });
      stream.res.end(payload);
    }
    // The session's events go with it (a resume now gets 404: no session).
    this.#resumable?.dispose();
    this.#resumable = undefined;
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
    if (this.#options.resumability.enabled && this.sessionId !== undefined) {
      const priming = (this.#resumable ??= new ResumableStreams(this.#options.resumability, this.sessionId, this.#options.resumeBudget)).open(stream, this.#protocolVersion);
      if (priming) this.#write(stream.res, priming);
    }
    if (stream.held.length > 0) this.#write(stream.res, Buffer.concat(stream.held.map((message) => this.#frame(stream, message))));
    stream.held = [];
  }

  /** Writes `chunk` on an SSE stream and counts what waits there (stream-budget.ts). */
  #write(res: ServerResponse, chunk: string | Buffer): void {
    res.write(chunk);
    this.#options.streamBudget.wrote(res);
  }

  /** The SSE event of `message` on `stream`: numbered and kept when the stream is resumable. */
  #frame(stream: PostStream, message: JSONRPCMessage): Buffer {
    return stream.key === undefined || !this.#resumable ? sseEvent(message) : this.#resumable.frame(stream as PostStream & { key: number }, message);
  }

  /** Every request of `stream` is answered. */
  #ended(stream: PostStream): void {
    clearTimeout(stream.windowTimer);
    this.#resumable?.ended(stream);
  }

  /** The end of one connection of `stream` (its POST, or a GET resuming it). */
  #watch(stream: PostStream, res: ServerResponse): void {
    res.on('close', () => {
      // A resume took the stream over: this connection is no longer its.
      if (stream.res !== res) return;
      if (stream.key !== undefined && stream.open.size > 0 && !res.writableFinished) {
        stream.detached = true;
        clearTimeout(stream.timer);
        stream.windowTimer = setTimeout(() => this.#abandon(stream), this.#options.resumability.resumeWindowMs);
        stream.windowTimer.unref();
        return;
      }
      const unanswered = res.writableFinished ? [] : [...stream.open];
      this.#forget(stream);
      for (const id of unanswered) this.#options.onDropped(id);
    });
  }

  /**
   * A detached stream not resumed within the window: its calls are cancelled, as a dropped
   * request's are without resumability, and a later resume reads an error for each.
   */
  #abandon(stream: PostStream): void {
    if (!stream.detached || stream.key === undefined || !this.#resumable) return;
    const ids = this.#resumable.abandon(stream as PostStream & { key: number });
    this.#forget(stream);
    this.#ended(stream);
    for (const id of ids) this.#options.onDropped(id);
  }

  #forget(stream: PostStream): void {
    clearTimeout(stream.timer);
    for (const id of stream.open) if (this.#streams.get(id) === stream) this.#streams.delete(id);
    stream.open.clear();
  }
}
