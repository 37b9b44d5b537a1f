import type { Request, Response } from 'express';
import type { HttpConfig } from '../../config/schema';
import type { Logger } from '../logger';
import { createSession, type Session } from '../mcp-session';
import type { Supervisor } from '../supervisor';
import { isJsonType } from './body';
import type { SharedBudget } from './event-store';
import { sendJsonRpcError } from './guards';
import { LegacyStream } from './legacy-stream';
import type { StreamBudget } from './stream-budget';
import { paramsRefusal, toJsonRpcMessage } from '../wire';
import { inTurns, sweepIntervalMs } from './streamable';

interface Entry {
  transport: LegacyStream;
  session: Session;
  lastActiveAt: number;
  /** Set while its stream is cut: the session ends when it fires (resumeWindowMs). */
  windowTimer?: NodeJS.Timeout;
}

/**
 * The session a `POST /message` names, as express decoded it: the path's, else the query's
 * `sessionId`. The per-session rate limit keys on this too (app.ts): read from the raw URL, a
 * percent-encoded id (`/message/%61bc…`) named a session the limit did not know, and went unlimited.
 */
export function messageSessionId(req: Request): string | undefined {
  const fromQuery = typeof req.query.sessionId === 'string' ? req.query.sessionId : undefined;
  return (req.params as { sessionId?: string }).sessionId ?? fromQuery;
}

/**
 * The legacy HTTP+SSE transport (protocol 2024-11-05, spec 001): `GET /sse` opens a session whose
 * `endpoint` event names `/message?sessionId=<id>`; `POST /message/<id>` is accepted too. The
 * session lives at most `connectedSessionIdleTimeoutMs` past its last request or call. Without
 * resumability it lives as long as its stream. With it (`http.resumability.enabled` and
 * `legacySse`, off by default: the SDK's client cannot resume, see config/schema.ts), a cut stream
 * (a proxy's timeout, a network change) leaves the session and its calls running for
 * `resumeWindowMs`, their events kept; a `GET /sse` whose `Last-Event-ID` is one of its event ids
 * takes the stream's place: the same `endpoint` again, then what followed that event. Decision:
 * a session not resumed within the window ends as a closed stream ended it before (its calls
 * cancelled, its events gone); a later resume, like any id no session gave, opens a new session.
 */
export class LegacySseSessions {
  #sessions = new Map<string, Entry>();
  #supervisor: Supervisor;
  #config: HttpConfig;
  #log: Logger;
  #sweeper: NodeJS.Timeout | undefined;
  /** The output waiting on every SSE stream (shared with Streamable HTTP). */
  #streamBudget: StreamBudget;
  /** What every session keeps for resumes (shared with Streamable HTTP: one `maxTotalBytes`). */
  #resumeBudget: SharedBudget;
  /** Whether cut streams wait for a resume (http.resumability.enabled and legacySse). */
  #resumable: boolean;

  constructor(supervisor: Supervisor, config: HttpConfig, logger: Logger, streamBudget: StreamBudget, resumeBudget: SharedBudget = { bytes: 0, maxTotalBytes: config.resumability.maxTotalBytes }) {
    this.#supervisor = supervisor;
    this.#config = config;
    this.#streamBudget = streamBudget;
    this.#resumeBudget = resumeBudget;
    this.#resumable = config.resumability.enabled && config.resumability.legacySse;
    this.#log = logger.child({ transport: 'sse' });
    // Kept events expire on this sweep too (a quiet session adds none to expire them on).
    if (config.connectedSessionIdleTimeoutMs > 0 || this.#resumable) {
      this.#sweeper = setInterval(() => this.#sweep(), sweepIntervalMs(config));
      this.#sweeper.unref();
    }
  }

  /** Whether `id` names a session this endpoint holds. */
  has(id: string): boolean {
    return this.#sessions.has(id);
  }

  get size(): number {
    return this.#sessions.size;
  }

  async open(req: Request, res: Response): Promise<void> {
    if (this.#supervisor.draining) return sendJsonRpcError(res, 503, -32000, 'Service Unavailable: the server is shutting down');
    const lastEventId = req.headers['last-event-id'];
    if (typeof lastEventId === 'string' && this.#resumable && this.#resume(lastEventId, res)) return;
    if (this.#supervisor.sessions >= this.#config.maxSessions) {
      return sendJsonRpcError(res, 503, -32000, `Service Unavailable: the server holds its maximum of ${this.#config.maxSessions} sessions`);
    }
    // Each message written as the Streamable endpoint writes it (sse-frames.ts): the SDK's
    // transport ran JSON.stringify, which parsed a preserialized tool list and kept the parse.
    const { resumability } = this.#config;
    const transport = new LegacyStream({
      streamBudget: this.#streamBudget,
      heartbeatIntervalMs: this.#config.heartbeatIntervalMs,
      resumability: this.#resumable ? { limits: resumability, total: this.#resumeBudget } : undefined,
    });
    const id = transport.sessionId;
    let entry: Entry | undefined;
    const session = createSession({
      supervisor: this.#supervisor,
      logger: this.#log,
      sessionId: () => id,
      maxConcurrentCalls: this.#config.maxConcurrentCallsPerSession,
      // As on Streamable HTTP, the idle clock starts when a call ends.
      onCallEnded: () => {
        if (entry) entry.lastActiveAt = performance.now();
      },
    });
    entry = { transport, session, lastActiveAt: performance.now() };
    this.#sessions.set(id, entry);
    transport.onclose = () => {
      clearTimeout(entry.windowTimer);
      if (this.#sessions.delete(id)) this.#log.debug({ sessionId: id }, 'session ended');
    };
    transport.attach(res, undefined, () => this.#cut(entry));
    await session.connect(transport);
    this.#log.debug({ sessionId: id }, 'session started');
  }

  /** Reattaches the session `lastEventId` names to `res`; false when no session gave that id. */
  #resume(lastEventId: string, res: Response): boolean {
    const entry = this.#sessions.get(lastEventId.slice(0, Math.max(0, lastEventId.indexOf('.'))));
    const replay = entry?.transport.resume(lastEventId);
    if (!entry || !replay) {
      this.#log.debug({ lastEventId }, 'Last-Event-ID of no session: a new session');
      return false;
    }
    clearTimeout(entry.windowTimer);
    entry.windowTimer = undefined;
    entry.lastActiveAt = performance.now();
    entry.transport.attach(res, replay, () => this.#cut(entry));
    this.#log.debug({ sessionId: entry.transport.sessionId, replayedBytes: replay.length }, 'session resumed');
    return true;
  }

  /** The session's stream closed: without resumability the session ends; with it, it waits resumeWindowMs. */
  #cut(entry: Entry): void {
    const { transport } = entry;
    if (!transport.resumable) return void transport.close();
    this.#log.debug({ sessionId: transport.sessionId, inFlight: entry.session.inFlight }, 'stream cut: waiting for a resume');
    clearTimeout(entry.windowTimer);
    entry.windowTimer = setTimeout(() => {
      this.#log.debug({ sessionId: transport.sessionId }, 'not resumed within resumeWindowMs: session ended');
      void transport.close();
    }, this.#config.resumability.resumeWindowMs);
    entry.windowTimer.unref();
  }

  async post(req: Request, res: Response): Promise<void> {
    const id = messageSessionId(req);
    if (!id) return sendJsonRpcError(res, 400, -32000, 'Bad Request: the session id is missing (POST /message/<sessionId>)');
    const entry = this.#sessions.get(id);
    if (!entry || this.#supervisor.draining) {
      return sendJsonRpcError(res, 404, -32001, entry ? 'Session ended: this server is shutting down' : 'Session not found: open a new one with GET /sse');
    }
    entry.lastActiveAt = performance.now();
    // The SDK's transport answers these in plain text (one a bare "TypeError: argument string is
    // required"); they get JSON-RPC errors, as on the Streamable HTTP endpoint.
    if (!isJsonType(req.headers['content-type'])) return sendJsonRpcError(res, 415, -32000, 'Unsupported Media Type: the body must be application/json');
    if (Array.isArray(req.body)) return sendJsonRpcError(res, 400, -32600, 'Invalid Request: the legacy SSE transport takes one JSON-RPC message per POST, not a batch');
    if (req.body === null || typeof req.body !== 'object') return sendJsonRpcError(res, 400, -32600, 'Invalid Request: the body must be a JSON-RPC message object');
    // What the SDK's transport would refuse with "Invalid message: [object Object]" (an id of null, say).
    const message = toJsonRpcMessage(req.body);
    const refused = message ? undefined : paramsRefusal(req.body);
    if (refused) return sendJsonRpcError(res, 400, refused.code, refused.message, refused.id);
    if (!message) return sendJsonRpcError(res, 400, -32600, 'Invalid Request: not a JSON-RPC 2.0 message (a request needs a string or integer id)');
    // The message as wire.ts took it (null params dropped), not the body as sent; handed on as the
    // SDK's handlePostMessage does, without its second zod parse of what wire.ts has recognised.
    entry.transport.onmessage?.(message, { requestInfo: { headers: req.headers } });
    res.writeHead(202).end('Accepted');
  }

  async closeAll(): Promise<void> {
    clearInterval(this.#sweeper);
    await Promise.all([...this.#sessions.values()].map((entry) => entry.transport.close().catch(() => undefined)));
    this.#sessions.clear();
  }

  #sweep(): void {
    const now = performance.now();
    for (const entry of this.#sessions.values()) entry.transport.sweep(now);
    if (this.#config.connectedSessionIdleTimeoutMs > 0) this.#expireIdle();
  }

  /** Ends the sessions with no request and no call for `connectedSessionIdleTimeoutMs`. */
  #expireIdle(): void {
    const idle = (entry: Entry, now: number) => now - entry.lastActiveAt > this.#config.connectedSessionIdleTimeoutMs && entry.session.inFlight === 0;
    const now = performance.now();
    const due = [...this.#sessions].filter(([, entry]) => idle(entry, now)).map(([id]) => id);
    // In turns, as on Streamable HTTP (streamable.ts, SESSIONS_CLOSED_PER_TURN).
    inTurns(due, (id) => {
      const entry = this.#sessions.get(id);
      if (!entry || !idle(entry, performance.now())) return;
      this.#log.debug({ sessionId: id }, 'closing idle session');
      this.#sessions.delete(id);
      void entry.transport.close().catch(() => undefined);
    });
  }
}
