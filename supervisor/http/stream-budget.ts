import type { ServerResponse } from 'node:http';

/** Why a stream was closed: its own output waiting, or every stream's together. */
export type StreamCut = 'stream' | 'total';

export interface StreamBudgetLimits {
  /** One stream's output waiting to be sent (`http.maxStreamBufferBytes`). */
  maxStreamBytes: number;
  /** Every SSE stream's output waiting, together (`http.maxTotalStreamBufferBytes`). */
  maxTotalBytes: number;
}

/**
 * The output waiting on the server's SSE streams (Streamable HTTP GET and POST streams, legacy
 * SSE), bounded per stream and in total. A client that stops reading (a laptop asleep, a stuck
 * proxy) leaves everything written to it in the process: its kernel buffers fill, then Node's. The
 * per-stream bound alone let 1,000 such streams hold 1,000 x 4 MiB; the total bound closes the
 * streams with the most waiting first, until the rest fit, so a client that reads is the last
 * to go. A closed stream is what a cut connection is: a session's GET stream is opened again by
 * its client, a call's stream is resumed (resumability) or its call cancelled.
 *
 * Counted after each write (`wrote`), not on a timer: between two heartbeats a burst of progress
 * notifications passed the per-stream bound unseen. The total is an estimate kept from each
 * stream's last count (bytes sent since are not seen until its next write, so it only errs high)
 * and counted exactly when the estimate passes the bound.
 */
export class StreamBudget {
  readonly #limits: StreamBudgetLimits;
  readonly #onCut: (cut: StreamCut, waitingBytes: number) => void;
  /** Each open stream and its output waiting when last counted. */
  readonly #streams = new Map<ServerResponse, number>();
  #estimate = 0;

  /** `onCut` is told of each stream closed, after it is. */
  constructor(limits: StreamBudgetLimits, onCut: (cut: StreamCut, waitingBytes: number) => void = () => undefined) {
    this.#limits = limits;
    this.#onCut = onCut;
  }

  /** Output waiting on every stream, as last counted. */
  get waitingBytes(): number {
    return this.#estimate;
  }

  /** Streams counted. */
  get size(): number {
    return this.#streams.size;
  }

  /** After a write to the SSE stream `res` (its first makes it counted until it closes). */
  wrote(res: ServerResponse): void {
    let last = this.#streams.get(res);
    if (last === undefined) {
      if (res.destroyed) return;
      last = 0;
      this.#streams.set(res, 0);
      res.once('close', () => this.#forget(res));
    }
    const waiting = res.writableLength;
    if (waiting > this.#limits.maxStreamBytes) return this.#cut(res, 'stream', waiting);
    this.#streams.set(res, waiting);
    this.#estimate += waiting - last;
    if (this.#estimate > this.#limits.maxTotalBytes) this.#rebalance();
  }

  /** Counts every stream; past the total bound, closes the fullest until the rest fit. */
  #rebalance(): void {
    let total = 0;
    const waiting: Array<[ServerResponse, number]> = [];
    for (const res of this.#streams.keys()) {
      const bytes = res.writableLength;
      this.#streams.set(res, bytes);
      total += bytes;
      if (bytes > 0) waiting.push([res, bytes]);
    }
    this.#estimate = total;
    if (total <= this.#limits.maxTotalBytes) return;
    waiting.sort((a, b) => b[1] - a[1]);
    for (const [res, bytes] of waiting) {
      if (this.#estimate <= this.#limits.maxTotalBytes) break;
      this.#cut(res, 'total', bytes);
    }
  }

  #cut(res: ServerResponse, cut: StreamCut, waitingBytes: number): void {
    this.#forget(res);
    res.destroy();
    this.#onCut(cut, waitingBytes);
  }

  #forget(res: ServerResponse): void {
    const last = this.#streams.get(res);
    if (last === undefined) return;
    this.#streams.delete(res);
    this.#estimate -= last;
  }
}
