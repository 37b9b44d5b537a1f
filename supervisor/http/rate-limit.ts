import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
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

  /**
   * Takes a token for `key`; returns 0 when allowed, else the seconds until the next token. `now`
   * is monotonic ms: on Date.now() a wall clock stepped back an hour answered 429 for an hour.
   */
  take(key: string, now = performance.now()): number {
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

/**
 * The per-client bucket of an address: an IPv6 client's /64, an IPv4 one's address (an IPv4-mapped
 * `::ffff:a.b.c.d`, as a dual-stack `::` listener sees IPv4 peers, counts as `a.b.c.d`). Why /64:
 * one host or network gets a /64 at least (RFC 6177) and picks any of its 2^64 addresses at will,
 * so a bucket per address let one client send past the limit from a new address each time.
 * Anything else (a name an X-Forwarded-For may hold) is its own key.
 */
export function clientKey(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  const bare = address.split('%', 1)[0];
  if (isIP(bare) !== 6) return address;
  const groups = ipv6Groups(bare);
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.');
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 literal (`::` expanded, a dotted IPv4 tail as two groups). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const tail: number[] = [];
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    tail.push((a << 8) | b, (c << 8) | d);
    // Drop the tail and the colon before it, unless that colon is half of a `::`.
    text = text.slice(0, dotted.index);
    if (!text.endsWith('::')) text = text.slice(0, -1);
  }
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const gap = text.indexOf('::');
  const head = parse(gap < 0 ? text : text.slice(0, gap));
  const rest = gap < 0 ? [] : parse(text.slice(gap + 2));
  const zeros = new Array<number>(8 - head.length - rest.length - tail.length).fill(0);
  return [...head, ...(gap < 0 ? [] : zeros), ...rest, ...tail];
}
