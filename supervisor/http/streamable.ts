import type { SharedBudget } from './event-store';
import { randomUUID } from 'node:crypto';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpConfig } from '../../config/schema';
import type { Logger } from '../logger';
import { createSession, type Session } from '../mcp-session';
import type { Supervisor } from '../supervisor';
import { acceptedTypes } from './accept';
import { isJsonType } from './body';
import { sendJsonRpcError } from './guards';
import { startHeartbeat } from './heartbeat';
import { checkProtocolVersion } from './post-messages';
import { SessionTransport } from './session-transport';
import type { StreamBudget } from './stream-budget';

interface Entry {
  transport: SessionTransport;
  session: Session;
  lastActiveAt: number;
  /** The session's GET stream, served here rather than by the SDK (see #openStream). */
  stream: ServerResponse | undefined;
}

/**
 * Streamable HTTP sessions at the endpoint path. SessionTransport speaks the protocol of one
 * session; this class owns the map of sessions and the rules the SDK leaves to us: 400 for a
 * non-initialize request without a session, 404 for an unknown or ended one (clients then
 * re-initialise), idle expiry, heartbeats on GET streams, cancelling a call whose HTTP request
 * was dropped, and closing the response stream of a cancelled call.
 */
export class StreamableSessions {
  #sessions = new Map<string, Entry>();
  #supervisor: Supervisor;
  #config: HttpConfig;
  #log: Logger;
  #sweeper: NodeJS.Timeout;
  /** What every session keeps for resumes, together (`resumability.maxTotalBytes`). */
  #resumeBudget: SharedBudget;
  /** The output waiting on every SSE stream (shared with the legacy transport). */
  #streamBudget: StreamBudget;

  constructor(supervisor: Supervisor, config: HttpConfig, logger: Logger, streamBudget: StreamBudget) {
    this.#supervisor = supervisor;
    this.#config = config;
    this.#streamBudget = streamBudget;
    this.#resumeBudget = { bytes: 0, maxTotalBytes: config.resumability.maxTotalBytes };
    this.#log = logger.child({ transport: 'streamable-http' });
    this.#sweeper = setInterval(() => this.#expireIdle(), sweepIntervalMs(config));
    this.#sweeper.unref();
  }

  /** What every session keeps for resumes (the legacy transport's sessions count in it too). */
  get resumeBudget(): SharedBudget {
    return this.#resumeBudget;
  }

  /** Whether `id` names a session this endpoint holds. */
  has(id: string): boolean {
    return this.#sessions.has(id);
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** One request to the endpoint; `body` is the parsed JSON of a POST. */
  async handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const header = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    if (sessionId === undefined) {
      if (req.method === 'POST' && containsInitialize(body)) return this.#initialize(req, res, body);
      // A body that was not read as JSON cannot be an initialize: say why, as with a session.
      if (req.method === 'POST' && !isJsonType(req.headers['content-type'])) {
        return sendJsonRpcError(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
      }
      // An initialize that is malformed is not a missing session: say what it lacks.
      if (req.method === 'POST' && namesInitialize(body)) {
        return sendJsonRpcError(res, 400, -32600, 'Invalid Request: initialize needs params with protocolVersion (a string), capabilities (an object) and clientInfo (name and version)');
      }
      return sendJsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required (send initialize first)');
    }
    const entry = this.#sessions.get(sessionId);
    if (!entry) return sendJsonRpcError(res, 404, -32001, 'Session not found: it ended or never existed; initialize a new one');
    if (this.#supervisor.draining && req.method !== 'DELETE') {
      // Ended, as far as the client is concerned: a 404 makes it re-initialise, behind a load
      // balancer on another instance, while the calls it already sent finish here.
      return sendJsonRpcError(res, 404, -32001, 'Session ended: this server is shutting down; initialize a new session');
    }
    entry.lastActiveAt = performance.now();
    if (req.method === 'GET') return this.#openStream(sessionId, entry, req, res);
    if (req.method === 'DELETE') {
      const versionError = checkProtocolVersion(req);
      if (versionError) return sendJsonRpcError(res, 400, -32000, versionError);
      res.writeHead(200).end();
      await entry.transport.close();
      return;
    }
    entry.transport.handlePost(req, res, body);
  }

  /**
   * The GET stream of a session. Our server sends no message of its own accord (no list changes,
   * no logging, no sampling), so the stream carries heartbeats, and whatever the SDK server
   * might send unprompted. As the SDK: SSE must be acceptable (406), a supported protocol
   * version (400). Unlike the SDK (409 for a second stream), a new GET takes the place of the
   * session's stream, which ends: MCP lets a client hold several streams and a server close one
   * at any time, and the usual second GET is a client reconnecting while its old connection,
   * half-open after a network change, still looks alive here; the SDK client gave up on the
   * 409 after two retries and had no stream for the rest of the session. A GET with
   * `Last-Event-ID` resumes a cut stream instead (SessionTransport.resume).
   */
  #openStream(sessionId: string, entry: Entry, req: IncomingMessage, res: ServerResponse): void {
    if (!acceptedTypes(req.headers.accept).sse) {
      return sendJsonRpcError(res, 406, -32000, 'Not Acceptable: the client must accept text/event-stream');
    }
    const versionError = checkProtocolVersion(req);
    if (versionError) return sendJsonRpcError(res, 400, -32000, versionError);
    // A resume of a cut stream is not the session's GET stream, which stays as it is.
    const lastEventId = req.headers['last-event-id'];
    if (typeof lastEventId === 'string' && this.#config.resumability.enabled) {
      this.#log.debug({ sessionId, lastEventId }, 'stream resumed');
      return entry.transport.resume(lastEventId, res);
    }
    if (entry.stream && !entry.stream.writableEnded) entry.stream.end();
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'mcp-session-id': sessionId,
    });
    res.flushHeaders();
    entry.stream = res;
    res.on('close', () => {
      if (entry.stream === res) entry.stream = undefined;
    });
    startHeartbeat(res, this.#config.heartbeatIntervalMs, this.#streamBudget);
  }

  /** Ends every session (shutdown): their streams close and clients see the session end. */
  async closeAll(): Promise<void> {
    clearInterval(this.#sweeper);
    await Promise.all([...this.#sessions.values()].map((entry) => entry.transport.close().catch(() => undefined)));
    this.#sessions.clear();
  }

  async #initialize(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (this.#supervisor.draining) return sendJsonRpcError(res, 503, -32000, 'Service Unavailable: the server is shutting down');
    if (this.#supervisor.sessions >= this.#config.maxSessions) {
      return sendJsonRpcError(res, 503, -32000, `Service Unavailable: the server holds its maximum of ${this.#config.maxSessions} sessions`);
    }
    let entry: Entry | undefined;
    const transport = new SessionTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        if (entry) this.#sessions.set(id, entry);
        this.#log.debug({ sessionId: id }, 'session started');
      },
      heartbeatIntervalMs: this.#config.heartbeatIntervalMs,
      streamBudget: this.#streamBudget,
      standaloneStream: () => entry?.stream,
      // A client that drops the request it was waiting on, and does not resume it, cancels those calls in the workers.
      onDropped: (requestId) => entry?.session.abortCall(requestId),
      resumability: this.#config.resumability,
      resumeBudget: this.#resumeBudget,
    });
    const session = createSession({
      supervisor: this.#supervisor,
      logger: this.#log,
      sessionId: () => transport.sessionId,
      maxConcurrentCalls: this.#config.maxConcurrentCallsPerSession,
      // The SDK sends no answer to a cancelled call; close its POST stream so the client is not left waiting.
      onCallAborted: (requestId) => transport.closeSSEStream(requestId),
      // The idle clock starts when a call ends, not when its request came: a call that ran longer
      // than sessionIdleTimeoutMs had its session closed by the next sweep, before the client could
      // send another request (it got 404 and had to initialise again).
      onCallEnded: () => {
        if (entry) entry.lastActiveAt = performance.now();
      },
    });
    entry = { transport, session, lastActiveAt: performance.now(), stream: undefined };
    const self = entry;
    transport.onclose = () => {
      self.stream?.end();
      const id = transport.sessionId;
      if (id && this.#sessions.delete(id)) this.#log.debug({ sessionId: id }, 'session ended');
    };
    await session.connect(transport);
    transport.handlePost(req, res, body);
  }

  /**
   * Closes sessions idle past their timeout: `sessionIdleTimeoutMs` without a GET stream, and
   * `connectedSessionIdleTimeoutMs` (0: never) with one, which a client that dropped the session
   * but lives on keeps open. Never while a call runs.
   */
  #expireIdle(): void {
    // Monotonic: on Date.now() a wall clock stepped ahead (NTP after a VM resumes) closed every idle session at once.
    const due: string[] = [];
    const now = performance.now();
    for (const [id, entry] of this.#sessions) {
      entry.transport.sweep(now);
      if (this.#idle(entry, now)) due.push(id);
    }
    inTurns(due, (id) => {
      const entry = this.#sessions.get(id);
      // A request may have come since the sweep, between two turns.
      if (!entry || !this.#idle(entry, performance.now())) return;
      this.#log.debug({ sessionId: id }, 'closing idle session');
      this.#sessions.delete(id);
      void entry.transport.close().catch(() => undefined);
    });
  }

  #idle(entry: Entry, now: number): boolean {
    const idleMs = now - entry.lastActiveAt;
    const connected = this.#config.connectedSessionIdleTimeoutMs;
    const idle = entry.stream ? connected > 0 && idleMs > connected : idleMs > this.#config.sessionIdleTimeoutMs;
    return idle && entry.session.inFlight === 0;
  }
}

/**
 * Sessions an idle sweep closes in one turn of the event loop. Closing one costs ~40 µs (its SDK
 * Server, transport and streams), so 5,000 sessions timing out together held the event loop
 * 190 ms in one piece (10,000, `http.maxSessions`, twice that), every call and heartbeat waiting
 * behind them; in turns of 200 (~8 ms) the I/O between turns goes on.
 */
export const SESSIONS_CLOSED_PER_TURN = 200;

/** Calls `each` on every item, SESSIONS_CLOSED_PER_TURN per turn of the event loop (setImmediate between). */
export function inTurns(items: readonly string[], each: (item: string) => void, from = 0): void {
  const end = Math.min(items.length, from + SESSIONS_CLOSED_PER_TURN);
  for (let i = from; i < end; i++) each(items[i]);
  if (end < items.length) setImmediate(() => inTurns(items, each, end));
}

/** How often idle sessions are looked for: half the shorter idle timeout, at most every 30 s. */
export function sweepIntervalMs(config: Pick<HttpConfig, 'sessionIdleTimeoutMs' | 'connectedSessionIdleTimeoutMs'>): number {
  const shortest = Math.min(config.sessionIdleTimeoutMs, config.connectedSessionIdleTimeoutMs || Infinity);
  return Math.max(1, Math.min(shortest / 2, 30_000));
}

/** Whether a message of `body` has the method initialize, well formed or not. */
function namesInitialize(body: unknown): boolean {
  const one = (message: unknown) => (message as { method?: unknown } | null)?.method === 'initialize';
  return Array.isArray(body) ? body.some(one) : one(body);
}

function containsInitialize(body: unknown): boolean {
  const one = (message: unknown) => (message as { method?: unknown } | null)?.method === 'initialize' && isInitializeRequest(message);
  return Array.isArray(body) ? body.some(one) : one(body);
}
