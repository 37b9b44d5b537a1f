import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { HttpConfig } from '../../config/schema';
import { EventStore, type SharedBudget } from './event-store';
import { startHeartbeat } from './heartbeat';
import { DELIVERED_GRACE_MS, lostAnswerMessage } from './resumable-streams';
import { eventId, lostAnswer, parseEventId, sseEvent } from './sse-frames';
import type { StreamBudget } from './stream-budget';

/** A legacy session has one stream, its GET /sse: number 1 in its event ids. */
const STREAM = 1;

export interface LegacyStreamOptions {
  streamBudget: StreamBudget;
  heartbeatIntervalMs: number;
  /** Set when `http.resumability.enabled`: events get ids and are kept for a resume. */
  resumability?: { limits: HttpConfig['resumability']; total: SharedBudget };
}

/**
 * The transport of one legacy HTTP+SSE session (spec 001: `GET /sse`, `POST /message/{sessionId}`),
 * in place of the SDK's SSEServerTransport, whose session was its one response: here the session
 * outlives a cut stream and a later `GET /sse` with `Last-Event-ID` takes its place (`attach`).
 * With resumability, event ids are `<sessionId>.1.<n>`: the whole session id, since on this
 * transport the event id is all a resuming GET names (on Streamable HTTP, `Mcp-Session-Id` names
 * the session and the id's tag only checks it); the id is the secret a POST already takes.
 * Events go to the EventStore as Streamable HTTP's do (its bounds, its shared byte budget).
 */
export class LegacyStream implements Transport {
  readonly sessionId = randomUUID();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  #options: LegacyStreamOptions;
  #res: ServerResponse | undefined;
  #store: EventStore | undefined;
  #seq = 0;
  /** Events written out whole (handed to the socket), oldest first: let go after a grace. */
  #writtenOut: Array<{ seq: number; at: number }> = [];
  #closed = false;

  constructor(options: LegacyStreamOptions) {
    this.#options = options;
    const resumability = options.resumability;
    if (resumability) this.#store = new EventStore(resumability.limits, resumability.total);
  }

  get resumable(): boolean {
    return this.#store !== undefined;
  }

  /** Whether a stream is attached (false once it was cut, until a resume). */
  get attached(): boolean {
    return this.#res !== undefined;
  }

  /** The stream is attached by `attach`, before the session connects. */
  async start(): Promise<void> {}

  /**
   * Makes `res` the session's stream, ending the one it takes the place of (a second resume, the
   * first connection perhaps half-open), and writes the `endpoint` event, then `replay`. The
   * first endpoint event carries the id `<sessionId>.1.0`, so a stream cut before its first
   * message resumes; a resumed one none, leaving the client's last event id as it is.
   * `onCut` is called when this stream closes while still the session's.
   */
  attach(res: ServerResponse, replay: Buffer | undefined, onCut: () => void): void {
    const previous = this.#res;
    this.#res = res;
    previous?.end();
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive' });
    const id = this.#store && replay === undefined ? `id: ${eventId(this.sessionId, STREAM, 0)}\n` : '';
    res.write(`${id}event: endpoint\ndata: /message?sessionId=${this.sessionId}\n\n`);
    if (replay && replay.length > 0) this.#write(res, replay, this.#seq);
    res.on('close', () => {
      if (this.#res !== res) return;
      this.#res = undefined;
      onCut();
    });
    startHeartbeat(res, this.#options.heartbeatIntervalMs, this.#options.streamBudget);
  }

  /**
   * What follows `lastEventId` on this session's stream: undefined for an id it never gave (made
   * up, another session's, one past its last event); else the kept frames after it, and an error
   * (-32000) naming the bound for each answer the bounds dropped (numbered after the rest).
   * Acknowledges what the id says the client has.
   */
  resume(lastEventId: string): Buffer | undefined {
    const at = this.#store && parseEventId(lastEventId, this.sessionId);
    if (!this.#store || !at || at.stream !== STREAM || at.seq > this.#seq) return undefined;
    this.#store.acknowledge(STREAM, at.seq);
    const replay = this.#store.after(STREAM, at.seq, performance.now());
    const frames = replay.frames.map((frame) => (typeof frame === 'string' ? Buffer.from(frame) : frame));
    if (replay.lost) {
      this.#store.forgetLost(STREAM);
      const message = lostAnswerMessage(this.#options.resumability!.limits, replay.lost.bound);
      for (const id of replay.lost.answers) frames.push(this.#frame(lostAnswer(id, message)));
    }
    return Buffer.concat(frames);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) throw new Error('Not connected');
    const frame = this.#frame(message);
    const res = this.#res;
    if (res && !res.writableEnded && !res.destroyed) return this.#write(res, frame, this.#seq);
    // Cut: kept for a resume (the session lives on for resumeWindowMs); without resumability the
    // session ended with its stream.
    if (!this.#store) throw new Error('Not connected');
  }

  /** Drops expired events and those written out whole more than DELIVERED_GRACE_MS ago. */
  sweep(now = performance.now()): void {
    if (!this.#store) return;
    let through = 0;
    while (this.#writtenOut.length > 0 && this.#writtenOut[0].at + DELIVERED_GRACE_MS <= now) through = this.#writtenOut.shift()!.seq;
    if (through > 0) this.#store.acknowledge(STREAM, through);
    this.#store.expire(now);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const res = this.#res;
    this.#res = undefined;
    res?.end();
    this.#store?.dispose();
    this.onclose?.();
  }

  /** The SSE event of `message`, numbered and kept when resumable. */
  #frame(message: JSONRPCMessage): Buffer {
    if (!this.#store) return sseEvent(message);
    const seq = ++this.#seq;
    const frame = sseEvent(message, eventId(this.sessionId, STREAM, seq));
    const answers = 'id' in message && !('method' in message) ? message.id : undefined;
    this.#store.add(STREAM, seq, frame, answers, performance.now());
    return frame;
  }

  /**
   * Writes `frame`; when the socket has taken it, events through `seq` count as written out. An
   * event so written may still be lost with a cut (the client was gone, the kernel took it): it
   * is kept DELIVERED_GRACE_MS more, as Streamable HTTP keeps a stream written out whole.
   */
  #write(res: ServerResponse, frame: Buffer, seq: number): void {
    const store = this.#store;
    res.write(frame, store ? (error) => void (error || this.#writtenOut.push({ seq, at: performance.now() })) : undefined);
    this.#options.streamBudget.wrote(res);
    if (store && this.#writtenOut.length > 0) this.sweep();
  }
}
