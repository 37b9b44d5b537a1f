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
  #waiters: Waiter[] = [];
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
   * Resolves when a token is taken; rejects with `signal.reason` if aborted first. With
   * `maxWaitMs`, a caller whose turn (FIFO, at the bucket's rate) would come later than that
   * rejects at once with RateLimitWaitTooLong, taking no place in the line.
   */
  acquire(options: { signal?: AbortSignal; maxWaitMs?: number } = {}): Promise<void> {
    const { signal, maxWaitMs } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.#refill();
    if (this.#waiters.length === 0 && this.#tokens >= 1) {
      this.#tokens -= 1;
      return Promise.resolve();
    }
    // This caller needs the tokens of everyone ahead of it, and one of its own.
    const waitMs = Math.ceil(((this.#waiters.length + 1 - this.#tokens) * this.#intervalMs) / this.#limit);
    if (maxWaitMs !== undefined && waitMs > maxWaitMs) return Promise.reject(new RateLimitWaitTooLong(waitMs, maxWaitMs, this.#waiters.length));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal };
      if (signal) {
        waiter.onAbort = () => {
          this.#waiters = this.#waiters.filter((other) => other !== waiter);
          reject(signal.reason);
          if (this.#waiters.length === 0 && this.#timer) {
            clearTimeout(this.#timer);
            this.#timer = undefined;
          }
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.#waiters.push(waiter);
      this.#schedule();
    });
  }

  /** Takes a token if one is free now, without waiting. */
  tryAcquire(): boolean {
    this.#refill();
    if (this.#waiters.length > 0 || this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  getStatus(): RateLimiterStatus {
    this.#refill();
    return { requests: Math.ceil(this.#capacity - this.#tokens), limit: this.#limit, interval: this.#intervalMs, waiting: this.#waiters.length };
  }

  #refill(): void {
    const now = performance.now();
    this.#tokens = Math.min(this.#capacity, this.#tokens + ((now - this.#refilledAt) * this.#limit) / this.#intervalMs);
    this.#refilledAt = now;
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#refill();
    while (this.#waiters.length > 0 && this.#tokens >= 1) {
      const waiter = this.#waiters.shift()!;
      this.#tokens -= 1;
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.resolve();
    }
    if (this.#waiters.length === 0) return;
    // setTimeout takes at most 2^31-1 ms (a longer wait becomes 1 ms, a spin): a wait past ~24
    // days (a tiny fractional rate) is taken in steps.
    const waitMs = Math.min(2 ** 31 - 1, Math.max(1, Math.ceil(((1 - this.#tokens) * this.#intervalMs) / this.#limit)));
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#schedule();
    }, waitMs);
  }
}
