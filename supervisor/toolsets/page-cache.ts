export interface PageCacheOptions {
  /** How long a value is served after it was stored, ms (not extended by reads). */
  ttlMs: number;
  /** Bound of all values together, in the bytes their `set` gave. */
  maxBytes: number;
  /** A value larger than this is never kept. */
  maxEntryBytes: number;
  /** How many keys' last ids are remembered after their values are gone. Default 4096. */
  maxRemembered?: number;
  now?: () => number;
}

interface Kept<T> {
  value: T;
  bytes: number;
}

/**
 * Values (fetched pages) by key, bounded in bytes and in age: a value is served for `ttlMs` after
 * it was stored; past `maxBytes` the least recently read go first. Keys should be of bounded size
 * (hashes): each key's last id is remembered after its value has gone (up to `maxRemembered`
 * keys), so that a value fetched again can be told apart from the one before (`lastId`).
 * Expired values are dropped as later calls pass, and by one unref'd timer due when the oldest
 * expires: without it an idle server (or one whose sessions have all closed) held up to
 * `maxBytes` of pages nobody could read any more until the next fetch.
 */
export class PageCache<T extends { id: string }> {
  readonly #options: Required<Omit<PageCacheOptions, 'now'>> & { now: () => number };
  /** Least recently read first. */
  readonly #kept = new Map<string, Kept<T>>();
  /** The same keys, oldest stored first: expired values are found at the front. */
  readonly #byAge = new Map<string, number>();
  readonly #lastIds = new Map<string, string>();
  /** The kept keys of each group (a session's pages), and each kept key's group. */
  readonly #groups = new Map<string, Set<string>>();
  readonly #groupOf = new Map<string, string>();
  #bytes = 0;
  #sweep: NodeJS.Timeout | undefined;

  constructor(options: PageCacheOptions) {
    this.#options = { ttlMs: options.ttlMs, maxBytes: options.maxBytes, maxEntryBytes: options.maxEntryBytes, maxRemembered: options.maxRemembered ?? 4096, now: options.now ?? (() => performance.now()) };
  }

  /** The value under `key` while it is fresh, now the most recently read; else undefined. */
  get(key: string): T | undefined {
    this.#dropExpired();
    const kept = this.#kept.get(key);
    if (!kept) return undefined;
    this.#kept.delete(key);
    this.#kept.set(key, kept);
    return kept.value;
  }

  has(key: string): boolean {
    this.#dropExpired();
    return this.#kept.has(key);
  }

  /**
   * Keeps `value` in place of what `key` held, dropping the least recently read values until it
   * fits; a value over `maxEntryBytes` is not kept (false), and what the key held goes too: it
   * is an older version. Its id is remembered either way. With `group`, the value goes with its
   * group's (deleteGroup).
   */
  set(key: string, value: T, bytes: number, group?: string): boolean {
    this.remember(key, value.id);
    this.#drop(key);
    this.#dropExpired();
    if (bytes > this.#options.maxEntryBytes || bytes > this.#options.maxBytes) return false;
    for (const oldest of this.#kept.keys()) {
      if (this.#bytes + bytes <= this.#options.maxBytes) break;
      this.#drop(oldest);
    }
    this.#kept.set(key, { value, bytes });
    this.#byAge.set(key, this.#options.now());
    this.#bytes += bytes;
    if (group !== undefined) {
      let keys = this.#groups.get(group);
      if (!keys) this.#groups.set(group, (keys = new Set()));
      keys.add(key);
      this.#groupOf.set(key, group);
    }
    this.#scheduleSweep();
    return true;
  }

  /** The id of the last value stored under `key` (kept or gone), if it is still remembered. */
  lastId(key: string): string | undefined {
    return this.#kept.get(key)?.value.id ?? this.#lastIds.get(key);
  }

  /** Records `id` as the key's last (a version seen but not kept: too large). */
  remember(key: string, id: string): void {
    this.#lastIds.delete(key);
    this.#lastIds.set(key, id);
    if (this.#lastIds.size > this.#options.maxRemembered) this.#lastIds.delete(this.#lastIds.keys().next().value!);
  }

  /** Drops what `key` holds (its id stays remembered). */
  delete(key: string): void {
    this.#drop(key);
  }

  /** Drops every value stored with `group` (their ids stay remembered): how many, and their bytes. */
  deleteGroup(group: string): { count: number; bytes: number } {
    const keys = this.#groups.get(group);
    if (!keys) return { count: 0, bytes: 0 };
    const before = this.#bytes;
    const count = keys.size;
    for (const key of [...keys]) this.#drop(key);
    return { count, bytes: before - this.#bytes };
  }

  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#kept.size;
  }

  #drop(key: string): void {
    const kept = this.#kept.get(key);
    if (!kept) return;
    this.#kept.delete(key);
    this.#byAge.delete(key);
    this.#bytes -= kept.bytes;
    const group = this.#groupOf.get(key);
    if (group === undefined) return;
    this.#groupOf.delete(key);
    const keys = this.#groups.get(group)!;
    keys.delete(key);
    if (keys.size === 0) this.#groups.delete(group);
  }

  /** One timer at a time, due when the oldest value expires; it does not keep the process alive. */
  #scheduleSweep(): void {
    if (this.#sweep !== undefined) return;
    const oldest = this.#byAge.values().next();
    if (oldest.done) return;
    const dueInMs = Math.max(0, oldest.value + this.#options.ttlMs - this.#options.now()) + 1;
    this.#sweep = setTimeout(() => {
      this.#sweep = undefined;
      this.#dropExpired();
      this.#scheduleSweep();
    }, dueInMs).unref();
  }

  #dropExpired(): void {
    const oldestFresh = this.#options.now() - this.#options.ttlMs;
    for (const [key, storedAt] of this.#byAge) {
      if (storedAt > oldestFresh) break;
      this.#drop(key);
    }
  }
}
