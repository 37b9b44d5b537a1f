import type { IncomingMessage } from 'node:http';
import { sendJsonRpcError, type Check } from './guards';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * Token buckets by key (client address or session id) with a hard bound on how many keys are
 * remembered: a flood of new addresses evicts the oldest buckets instead of growing memory.
 * A full bucket holds `burst` tokens and refills at `perSecond`.
 */
export class KeyedRateLimiter {
  #perSecond: number;
  #burst: number;
  #maxKeys: number;
  #buckets = new Map<string, Bucket>();

  constructor(perSecond: number, burst: number, maxKeys = 50_000) {
    this.#perSecond = perSecond;
    this.#burst = burst;
    this.#maxKeys = maxKeys;
  }

  /** Takes a token for `key`; returns 0 when allowed, else the seconds until the next token. */
  take(key: string, now = Date.now()): number {
    if (this.#perSecond <= 0) return 0;
    let bucket = this.#buckets.get(key);
    if (bucket) {
      this.#buckets.delete(key); // re-insert below: Map order is our LRU order
      bucket.tokens = Math.min(this.#burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.#perSecond);
      bucket.updatedAt = now;
    } else {
      bucket = { tokens: this.#burst, updatedAt: now };
      this.#forgetRefilled(now);
      if (this.#buckets.size >= this.#maxKeys) this.#buckets.delete(this.#buckets.keys().next().value as string);
    }
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - bucket.tokens) / this.#perSecond);
  }

  /**
   * Drops the least recently used buckets that are full again by now: one is the same as no
   * bucket, so the keys remembered are those of the last `burst / perSecond` seconds, and a
   * closed session's or a gone client's bucket does not stay until 50,000 others push it out.
   */
  #forgetRefilled(now: number): void {
    const refillMs = (this.#burst / this.#perSecond) * 1000;
    for (const [key, bucket] of this.#buckets) {
      if (now - bucket.updatedAt < refillMs) return;
      this.#buckets.delete(key);
    }
  }

  get size(): number {
    return this.#buckets.size;
  }
}

/** 429 with Retry-After when `keyOf(req)`'s bucket is empty. */
export function rateLimit(limiter: KeyedRateLimiter, keyOf: (req: IncomingMessage) => string | undefined, what: string): Check {
  return (req, res) => {
    const key = keyOf(req);
    const wait = key === undefined ? 0 : limiter.take(key);
    if (wait === 0) return true;
    res.setHeader('Retry-After', String(wait));
    sendJsonRpcError(res, 429, -32000, `Too Many Requests: the ${what} rate limit was reached; retry after ${wait} s`);
    return false;
  };
}
