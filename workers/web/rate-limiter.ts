/** What `getStatus()` reports (spec 001): tokens in use, the bucket size, the refill interval. */
export interface RateLimiterStatus {
  /** Requests counted against the current bucket (its size, max(1, limit), minus the tokens left, rounded up). */
  requests: number;
  limit: number;
  /** Interval in ms over which `limit` tokens refill. */
  interval: number;
  /** Callers waiting for a token. */
  waiting: number;
}

/** A token would come only after the caller's `maxWaitMs`: nothing was waited for. */
export class RateLimitWaitTooLong extends Error {
  constructor(readonly waitMs: number, readonly maxWaitMs: number, readonly waiting: number) {
    super(`the rate limit's next free token is ${waitMs} ms away (${waiting} calls waiting before this one), past the ${maxWaitMs} ms this call may wait`);
    this.name = 'RateLimitWaitTooLong';
  }
}

interface Waiter {
  key: string;
  resolve(): void;
  reject(reason: unknown): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/**
 * A token bucket refilled continuously at `limit` per `intervalMs`, starting full. It holds
 * `max(1, limit)` tokens, so a burst of `floor(limit)` goes at once and a fractional limit below
 * one is a slower rate (0.5 per 1000 ms: one call every 2 s), not a bucket that never fills. `acquire()` waits for a token in FIFO order rather than
 * failing; an aborted `signal` takes the caller out of the line and rejects with its reason.
 * Callers that give a `key` (the supervisor gives the session) are served round-robin by key,
 * each key's callers in FIFO order: one session's 50 searches at 1 per 2 s made every other
 * session's search wait 100 s behind them; now it waits for one turn of each key waiting.
 */
export class RateLimiter {
  readonly #limit: number;
  /** Tokens the bucket holds: a call takes a whole one, so never fewer than one. */
  readonly #capacity: number;
  readonly #intervalMs: number;
  #tokens: number;
  // The monotonic clock: Date.now() stepped back an hour (NTP, `date -s`) left the bucket at
  // about minus 3,600 tokens per token a second, and every call waited an hour.
  #refilledAt = performance.now();
  /** Each key's waiting callers, oldest first, in the order the keys take their turns. */
  #lines = new Map<string, Waiter[]>();
  #waiting = 0;
  #timer: NodeJS.Timeout | undefined;

  /** Throws RangeError unless both are positive finite numbers. */
  constructor(limit: number, intervalMs: number) {
    if (!(limit > 0) || !(intervalMs > 0) || !Number.isFinite(limit) || !Number.isFinite(intervalMs)) {
      throw new RangeError(`RateLimiter needs a positive limit and interval, got ${limit} per ${intervalMs} ms`);
    }
    this.#limit = limit;
    this.#capacity = Math.max(1, limit);
    this.#intervalMs = intervalMs;
    this.#tokens = this.#capacity;
  }

  /**
   * Resolves when a token is taken; rejects with `signal.reason` if aborted first. `key` (default
   * ''): callers of different keys take turns (round-robin), those of one key go in FIFO order.
   * With `maxWaitMs`, a caller whose turn (at the bucket's rate) would come later than that
   * rejects at once with RateLimitWaitTooLong, taking no place in the line. A key that starts
   * waiting later moves ahead of other keys' later callers, so their turns may come later than
   * they were judged to (their `signal` still ends their wait).
   */
  acquire(options: { signal?: AbortSignal; maxWaitMs?: number; key?: string } = {}): Promise<void> {
    const { signal, maxWaitMs, key = '' } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.#refill();
    if (this.#waiting === 0 && this.#tokens >= 1) {
      this.#tokens -= 1;
      return Promise.resolve();
    }
    // This caller needs the tokens of everyone served before it, and one of its own.
    const ahead = this.#ahead(key);
    const waitMs = Math.ceil(((ahead + 1 - this.#tokens) * this.#intervalMs) / this.#limit);
    if (maxWaitMs !== undefined && waitMs > maxWaitMs) return Promise.reject(new RateLimitWaitTooLong(waitMs, maxWaitMs, ahead));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { key, resolve, reject, signal };
      if (signal) {
        waiter.onAbort = () => {
          this.#remove(waiter);
          reject(signal.reason);
          if (this.#waiting === 0 && this.#timer) {
            clearTimeout(this.#timer);
            this.#timer = undefined;
          }
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      const line = this.#lines.get(key);
      if (line) line.push(waiter);
      else this.#lines.set(key, [waiter]);
      this.#waiting++;
      this.#schedule();
    });
  }

  /** Takes a token if one is free now, without waiting. */
  tryAcquire(): boolean {
    this.#refill();
    if (this.#waiting > 0 || this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  getStatus(): RateLimiterStatus {
    this.#refill();
    return { requests: Math.ceil(this.#capacity - this.#tokens), limit: this.#limit, interval: this.#intervalMs, waiting: this.#waiting };
  }

  /**
   * Callers served before a new one of `key`: its own key's, and of each other key as many turns
   * as the rotation gives it first (one more than this key's waiting for the keys whose turn
   * comes before this key's, as many for those after; a new key joins the rotation last).
   */
  #ahead(key: string): number {
    const own = this.#lines.get(key)?.length ?? 0;
    let ahead = own;
    let before = true;
    for (const [other, line] of this.#lines) {
      if (other === key) before = false;
      else ahead += Math.min(line.length, before ? own + 1 : own);
    }
    return ahead;
  }

  #remove(waiter: Waiter): void {
    const line = this.#lines.get(waiter.key);
    const index = line ? line.indexOf(waiter) : -1;
    if (index < 0) return;
    line!.splice(index, 1);
    this.#waiting--;
    if (line!.length === 0) this.#lines.delete(waiter.key);
  }

  /** The next caller to serve: the first of the key whose turn it is; that key goes last. */
  #shift(): Waiter {
    const [key, line] = this.#lines.entries().next().value as [string, Waiter[]];
    const waiter = line.shift()!;
    this.#waiting--;
    this.#lines.delete(key);
    if (line.length > 0) this.#lines.set(key, line);
    return waiter;
  }

  #refill(): void {
    const now = performance.now();
    this.#tokens = Math.min(this.#capacity, this.#tokens + ((now - this.#refilledAt) * this.#limit) / this.#intervalMs);
    this.#refilledAt = now;
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#refill();
    while (this.#waiting > 0 && this.#tokens >= 1) {
      const waiter = this.#shift();
      this.#tokens -= 1;
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.resolve();
    }
    if (this.#waiting === 0) return;
    // setTimeout takes at most 2^31-1 ms (a longer wait becomes 1 ms, a spin): a wait past ~24
    // days (a tiny fractional rate) is taken in steps.
    const waitMs = Math.min(2 ** 31 - 1, Math.max(1, Math.ceil(((1 - this.#tokens) * this.#intervalMs) / this.#limit)));
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#schedule();
    }, waitMs);
  }
}
