import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

/** An SSE event as written: bytes (sse-frames.ts), or text. */
export type Frame = string | Buffer;

/** The bounds of one session's store (config `http.resumability`). */
export interface EventStoreLimits {
  maxEvents: number;
  maxBytes: number;
  eventTtlMs: number;
}

/** The bytes every session's store holds together, and their bound (`maxTotalBytes`). */
export interface SharedBudget {
  bytes: number;
  readonly maxTotalBytes: number;
}

interface StoredEvent {
  stream: number;
  seq: number;
  /** The whole SSE frame, id included, as it was (or would have been) written: the same bytes the stream holds. */
  frame: Frame;
  bytes: number;
  at: number;
  /** The request this event answers, if it is a response. */
  answers?: RequestId;
}

/** What a stream lost to the bounds before a client read it. */
interface Lost {
  /** The highest sequence number dropped unacknowledged. */
  through: number;
  /** Answers among the dropped events: a resume from before them reports each as an error. */
  answers: RequestId[];
  /** Which bound dropped them: `maxEvents`, `maxBytes`, `maxTotalBytes` or `eventTtlMs`. */
  bound: string;
}

/** What follows an event of a stream: the frames kept, and the answers the bounds dropped. */
export interface Replay {
  frames: Frame[];
  lost?: { answers: RequestId[]; bound: string };
}

/**
 * The SSE events of one Streamable HTTP session not yet acknowledged, for replay on a resume.
 * Oldest first across the session's streams; past `maxEvents`, `maxBytes` or `eventTtlMs` the
 * oldest go (an event bigger than `maxBytes` is never kept). An event is acknowledged by a
 * resume naming it or a later event of its stream. A stream's dropped answers are remembered
 * (their request ids) so a resume from before them gets an error for each rather than a gap.
 * Every store of the server counts its bytes in one SharedBudget: past its bound a store drops
 * its own oldest events, then does not keep the new one (other sessions' events are theirs).
 */
export class EventStore {
  #limits: EventStoreLimits;
  #total: SharedBudget;
  #events: StoredEvent[] = [];
  #bytes = 0;
  #lost = new Map<number, Lost>();

  constructor(limits: EventStoreLimits, total: SharedBudget = { bytes: 0, maxTotalBytes: Infinity }) {
    this.#limits = limits;
    this.#total = total;
  }

  get size(): number {
    return this.#events.length;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Keeps an event of `stream`; `answers` names the request when it is a response. */
  add(stream: number, seq: number, frame: Frame, answers: RequestId | undefined, now: number): void {
    this.expire(now);
    const bytes = Buffer.byteLength(frame);
    if (bytes > this.#limits.maxBytes) {
      this.#drop({ stream, seq, frame, bytes, at: now, answers }, 'maxBytes');
      return;
    }
    const overTotal = () => this.#total.bytes + bytes > this.#total.maxTotalBytes;
    while (this.#events.length > 0 && (this.#events.length >= this.#limits.maxEvents || this.#bytes + bytes > this.#limits.maxBytes || overTotal())) {
      const bound = this.#events.length >= this.#limits.maxEvents ? 'maxEvents' : this.#bytes + bytes > this.#limits.maxBytes ? 'maxBytes' : 'maxTotalBytes';
      this.#drop(this.#shift(), bound);
    }
    if (overTotal()) {
      this.#drop({ stream, seq, frame, bytes, at: now, answers }, 'maxTotalBytes');
      return;
    }
    this.#events.push({ stream, seq, frame, bytes, at: now, answers });
    this.#bytes += bytes;
    this.#total.bytes += bytes;
  }

  /** Lets every event go, and its bytes from the shared budget (the session closed). */
  dispose(): void {
    this.#total.bytes -= this.#bytes;
    this.#bytes = 0;
    this.#events = [];
    this.#lost.clear();
  }

  /** Forgets the events of `stream` up to `seq`: the client has them. */
  acknowledge(stream: number, seq: number): void {
    if (!this.#events.some((event) => event.stream === stream && event.seq <= seq)) return;
    this.#events = this.#events.filter((event) => {
      if (event.stream !== stream || event.seq > seq) return true;
      this.#bytes -= event.bytes;
      this.#total.bytes -= event.bytes;
      return false;
    });
    const lost = this.#lost.get(stream);
    if (lost && lost.through <= seq) this.#lost.delete(stream);
  }

  /** The frames of `stream` after `seq`, in order, and the answers lost among them. */
  after(stream: number, seq: number, now: number): Replay {
    this.expire(now);
    const frames = this.#events.filter((event) => event.stream === stream && event.seq > seq).map((event) => event.frame);
    const lost = this.#lost.get(stream);
    return lost && lost.through > seq && lost.answers.length > 0 ? { frames, lost: { answers: [...lost.answers], bound: lost.bound } } : { frames };
  }

  /** Forgets what was lost of `stream` (its losses were reported). */
  forgetLost(stream: number): void {
    this.#lost.delete(stream);
  }

  /** Forgets every trace of `stream` (it ended and its state went). */
  forget(stream: number): void {
    this.acknowledge(stream, Infinity);
    this.#lost.delete(stream);
  }

  /** Drops events older than `eventTtlMs`. */
  expire(now: number): void {
    const oldest = now - this.#limits.eventTtlMs;
    while (this.#events.length > 0 && this.#events[0].at < oldest) this.#drop(this.#shift(), 'eventTtlMs');
  }

  #shift(): StoredEvent {
    const event = this.#events.shift()!;
    this.#bytes -= event.bytes;
    this.#total.bytes -= event.bytes;
    return event;
  }

  #drop(event: StoredEvent, bound: string): void {
    const lost = this.#lost.get(event.stream) ?? { through: 0, answers: [], bound };
    lost.through = Math.max(lost.through, event.seq);
    lost.bound = bound;
    if (event.answers !== undefined) lost.answers.push(event.answers);
    this.#lost.set(event.stream, lost);
  }
}
