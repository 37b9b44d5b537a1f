import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { HttpConfig } from '../../config/schema';
import { EventStore, type SharedBudget } from './event-store';
import { eventId, lostAnswer, parseEventId, primingEvent, sseEvent } from './sse-frames';

/** What the numbering needs of a POST's SSE stream (session-transport.ts has the rest). */
export interface NumberedStream {
  /** The stream's number in its event ids, from when its SSE headers went out. */
  key?: number;
  /** The number of its last event. */
  seq: number;
  /** Its requests not answered yet. */
  open: Set<RequestId>;
}

/**
 * A resumable stream whose requests are all answered: what a late resume needs of it. Its times,
 * and those of the events kept, are performance.now() ms: a wall clock stepped ahead expired them all.
 */
interface EndedStream {
  seq: number;
  endedAt: number;
  /** Its last event was written out whole: it goes at this time, not after eventTtlMs. */
  releaseAt?: number;
}

/**
 * How long a stream written out whole is kept: a client cut just as it ended resumes within
 * seconds (the SDK client gives up after ~2.5 s), and a client that read it never resumes. Kept
 * for eventTtlMs instead, every answer of a client that takes only SSE stayed 5 min.
 */
export const DELIVERED_GRACE_MS = 10_000;

/** What a resume from an event id gets. */
export type Resumption<S> =
  | { status: 400 | 410; message: string }
  /** `frames` to write; `stream` when the stream still has requests open (it goes on there). */
  | { status: 200; frames: Buffer; stream?: S };

/**
 * The resumable streams of one session: their numbers, the EventStore of their events, and what
 * a `Last-Event-ID` resumes. Made on a session's first SSE stream; a session that only gets JSON
 * answers has none.
 */
export class ResumableStreams<S extends NumberedStream> {
  #limits: HttpConfig['resumability'];
  #tag: string;
  #streams = new Map<number, S | EndedStream>();
  #store: EventStore;
  #nextKey = 1;

  /** `tag`: the session's part of every event id (the first 8 characters of its id). */
  constructor(limits: HttpConfig['resumability'], sessionId: string, total?: SharedBudget) {
    this.#limits = limits;
    this.#tag = sessionId.slice(0, 8);
    this.#store = new EventStore(limits, total);
  }

  /** Numbers `stream`, whose SSE headers just went out; returns its priming event, if the revision takes one. */
  open(stream: S, protocolVersion: string | undefined): string | undefined {
    stream.key = this.#nextKey++;
    this.#streams.set(stream.key, stream);
    // Past maxEvents streams the oldest ended ones go: each stream holds one event at least.
    for (const [key, state] of this.#streams) {
      if (this.#streams.size <= this.#limits.maxEvents) break;
      if ('endedAt' in state) this.#forget(key);
    }
    return primingEvent(eventId(this.#tag, stream.key, 0), protocolVersion);
  }

  /** The SSE event of `message` on the numbered `stream`, kept for a resume. */
  frame(stream: NumberedStream & { key: number }, message: JSONRPCMessage): Buffer {
    const seq = ++stream.seq;
    const frame = sseEvent(message, eventId(this.#tag, stream.key, seq));
    const answers = 'id' in message && !('method' in message) ? message.id : undefined;
    this.#store.add(stream.key, seq, frame, answers, performance.now());
    return frame;
  }

  /** Every request of `stream` is answered: only its number and last event stay. */
  ended(stream: S): void {
    if (stream.key !== undefined && this.#streams.get(stream.key) === stream) {
      this.#streams.set(stream.key, { seq: stream.seq, endedAt: performance.now() });
    }
  }

  /** An ended `stream`'s last event was written out whole: it goes after a short grace. */
  delivered(stream: S, now = performance.now()): void {
    const state = stream.key === undefined ? undefined : this.#streams.get(stream.key);
    if (state && 'endedAt' in state) state.releaseAt = now + DELIVERED_GRACE_MS;
  }

  /** Lets every event go (the session closed). */
  dispose(): void {
    this.#store.dispose();
  }

  /**
   * What follows `lastEventId`: 400 for an id this session never gave (made up, another
   * session's); 410 for a stream with nothing left (ended, and what it sent acknowledged or
   * expired); else the frames after it, and answers the bounds dropped as JSON-RPC errors naming
   * the bound (numbered after the rest, so a later resume skips them). Acknowledges what the id
   * says the client has.
   */
  resume(lastEventId: string): Resumption<S> {
    const at = parseEventId(lastEventId, this.#tag);
    const state = at && this.#streams.get(at.stream);
    if (!at || at.stream >= this.#nextKey || (state && at.seq > state.seq)) {
      return { status: 400, message: `Bad Request: Last-Event-ID ${JSON.stringify(lastEventId)} is not an event id of this session (its ids look like ${eventId(this.#tag, 1, 0)})` };
    }
    const gone = {
      status: 410 as const,
      message: `Gone: the stream of Last-Event-ID ${JSON.stringify(lastEventId)} has nothing after that event: it ended, and what it sent was read or has expired (http.resumability.eventTtlMs, ${this.#limits.eventTtlMs} ms)`,
    };
    if (!state) return gone;
    this.#store.acknowledge(at.stream, at.seq);
    const replay = this.#store.after(at.stream, at.seq, performance.now());
    const stream = 'open' in state && state.open.size > 0 ? state : undefined;
    if (replay.frames.length === 0 && !replay.lost && !stream) return gone;
    const frames = replay.frames.map((frame) => (typeof frame === 'string' ? Buffer.from(frame) : frame));
    if (replay.lost) {
      this.#store.forgetLost(at.stream);
      const message = lostAnswerMessage(this.#limits, replay.lost.bound);
      const numbered = { key: at.stream, seq: state.seq, open: new Set<RequestId>() };
      for (const id of replay.lost.answers) frames.push(this.frame(numbered, lostAnswer(id, message)));
      state.seq = numbered.seq;
    }
    return { status: 200, frames: frames.length === 1 ? frames[0] : Buffer.concat(frames), stream };
  }

  /**
   * A detached stream not resumed in time: an error event takes the place of each open request's
   * answer, saying so. Returns the requests, whose calls the caller cancels.
   */
  abandon(stream: S & { key: number }): RequestId[] {
    const ids = [...stream.open];
    const message = `the call was cancelled: its response stream was cut and not resumed within http.resumability.resumeWindowMs (${this.#limits.resumeWindowMs} ms)`;
    for (const id of ids) this.frame(stream, lostAnswer(id, message));
    return ids;
  }

  /** Drops expired events, streams ended longer than `eventTtlMs` ago and delivered ones past their grace. */
  sweep(now: number): void {
    this.#store.expire(now);
    const oldest = now - this.#limits.eventTtlMs;
    for (const [key, state] of this.#streams) {
      if ('endedAt' in state && (state.endedAt < oldest || (state.releaseAt !== undefined && state.releaseAt <= now))) this.#forget(key);
    }
  }

  /** The streams still waiting for answers (their timers are the caller's). */
  *unfinished(): IterableIterator<S> {
    for (const state of this.#streams.values()) if ('open' in state) yield state;
  }

  #forget(key: number): void {
    this.#streams.delete(key);
    this.#store.forget(key);
  }
}

/** The error text that takes the place of an answer dropped by the bound `bound` before the client read it. */
export function lostAnswerMessage(limits: HttpConfig['resumability'], bound: string): string {
  return `the answer to this request was dropped before the client read it: over http.resumability.${bound} (${String(limits[bound as keyof HttpConfig['resumability']])}); call again`;
}
