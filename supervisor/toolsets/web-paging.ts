import { createHash } from 'node:crypto';
import { McpvisorError } from '../../protocol/errors';
import type { PoolCallOptions } from '../../protocol/pool';
import { errorResult } from '../../protocol/results';
import type { ToolCall, ToolResult } from '../../protocol/tool';
import { formatWindow, PAGE_REQUEST_ARG, type KeptPage, type PageRequest, type SnapshotInfo } from '../../workers/web/fetch-window';
import type { Logger } from '../logger';
import { PageCache } from './page-cache';
import type { RoutedCallOptions } from './types';

/** The window arguments: they pick a part of the page and never change the page itself. */
const WINDOW_ARGS = new Set(['start_index', 'max_length']);

export interface FetchPagerOptions {
  /** config.web.fetch.cache.ttlMs: how long a fetched page serves later windows. */
  ttlMs: number;
  /** config.web.fetch.cache.maxBytes: all kept pages together; one page may take a quarter. */
  maxBytes: number;
  /** config.web.fetch.maxOutputChars: a window's length when the call gives no max_length. */
  maxOutputChars: number;
  /**
   * The rate limit's wait for a call that will make a request (the web toolset's token bucket):
   * throws BUSY, or the signal's reason. Calls answered from a kept page, or that join a fetch
   * in flight, take no token.
   */
  beforeFetch?: (args: Record<string, unknown>, signal: AbortSignal, maxWaitMs: number, session?: string) => Promise<void>;
  now?: () => number;
  /** Where the release of a closed session's pages is told (debug). */
  log?: Logger;
}

type Next = (call: ToolCall, options: PoolCallOptions) => Promise<ToolResult>;

/** A fetch of a whole page in flight, shared by the calls of one session that want it. */
interface Load {
  promise: Promise<ToolResult>;
  controller: AbortController;
  waiters: number;
  settled: boolean;
  /** The id of the version this session read before, when remembered. */
  previousId?: string;
  session?: string;
  /** Its session ended: what it fetches is not kept. */
  released?: boolean;
}

/**
 * Pages `fetch_web_content` fetched, kept in the supervisor so that later windows of a long page
 * (`start_index` > 0) come from the same copy: no second request, no second conversion, no rate
 * limit token, and windows that join up even when the page changes between calls.
 *
 * Where: in the supervisor, beside the rate limits, because it is state the fetch threads share;
 * a cache in each piscina thread missed whenever the next window went to the other thread, and
 * counted against the threads' heap limit. The supervisor keeps only Markdown, within
 * `maxBytes`; the fetch and the conversion stay in the threads (DESIGN: the supervisor never
 * parses a page).
 *
 * Decisions:
 * - Kept per session (the key holds the session): a page fetched for one client is never served
 *   to another, nor can another tell from a fast answer or a snapshot time what this one read.
 *   Two sessions reading the same page each fetch it once.
 * - The key is the URL as parsed (fragment dropped) and every argument but the window's, so any
 *   option that changes the page gets its own entry.
 * - A first window (`start_index` 0 or absent) always fetches: asking for the start again is
 *   asking for the page as it is now. The page it gets replaces the kept one.
 * - Calls of a session for a page whose fetch is in flight wait for that fetch (one request, not
 *   N); the fetch is cancelled only when every caller waiting for it has gone.
 * - Failures are not kept: the next call tries again (an error costs no conversion, and the rate
 *   limit already spaces the retries).
 * - A later window whose page is no longer kept (expired, evicted, too large to keep) fetches
 *   again and says whether the page changed since the version this session read (the
 *   `snapshot.id`s differ): the window notes it rather than splice two versions silently.
 * - A page larger than a quarter of `maxBytes` is not kept (so one page cannot empty the
 *   cache); its windows are fetched one by one as before, still with the change check.
 * - A session's pages go when it ends (`release`, the toolset's onSessionEnd): no one can read
 *   them after, and before they stayed until their TTL (10 min), taking room from live sessions.
 */
export class FetchPager {
  readonly #cache: PageCache<KeptPage>;
  readonly #loads = new Map<string, Load>();
  readonly #options: FetchPagerOptions;
  readonly #maxEntryBytes: number;

  constructor(options: FetchPagerOptions) {
    this.#options = options;
    this.#maxEntryBytes = Math.floor(options.maxBytes / 4);
    this.#cache = new PageCache({ ttlMs: options.ttlMs, maxBytes: options.maxBytes, maxEntryBytes: this.#maxEntryBytes, now: options.now });
  }

  /** Bytes of the pages kept now. */
  get bytes(): number {
    return this.#cache.bytes;
  }

  /**
   * Lets the pages of `session` go (it ended), and keeps nothing its fetches in flight bring.
   * The ids remembered for its pages stay (bounded by PageCache's maxRemembered).
   */
  release(session: string): void {
    for (const load of this.#loads.values()) if (load.session === session) load.released = true;
    const { count, bytes } = this.#cache.deleteGroup(session);
    if (count > 0) this.#options.log?.debug({ session, pages: count, bytes, keptBytes: this.#cache.bytes }, 'web fetch: the pages kept for a closed session were let go');
  }

  /** The `aroundCall` hook of the web-fetch pool. */
  readonly aroundCall = async (call: ToolCall, options: RoutedCallOptions, next: Next): Promise<ToolResult> => {
    const args = call.arguments;
    const key = pageKey(args, options.session);
    if (key === undefined) return this.#fetch(call, options, next);
    const start = nonNegative(args.start_index) ?? 0;
    const maxLength = nonNegative(args.max_length) ?? this.#options.maxOutputChars;
    if (start > 0) {
      const page = this.#cache.get(key);
      if (page) return window(page, start, maxLength, { cached: true });
    }
    let load = this.#loads.get(key);
    const joined = load !== undefined;
    load ??= this.#load(key, call, options, next);
    const outcome = await this.#wait(key, load, options);
    if ('refused' in outcome) return outcome.refused;
    const answer = outcome.answer;
    if (answer.isError) return answer;
    const page = answer.structuredContent?.page as KeptPage | undefined;
    if (page) return window(page, start, maxLength, { cached: false, changed: load.previousId === undefined ? undefined : load.previousId !== page.id });
    // Too large to send whole: the thread cut the first caller's window; the others fetch their own.
    if (!joined) return answer;
    return this.#fetch(withPageRequest(call, { maxEntryBytes: this.#maxEntryBytes, previousId: this.#cache.lastId(key) }), options, next).then((own) => this.#noteVersion(key, own));
  };

  /** Starts the shared fetch of the whole page for `key`. */
  #load(key: string, call: ToolCall, options: RoutedCallOptions, next: Next): Load {
    const controller = new AbortController();
    const previousId = this.#cache.lastId(key);
    const load: Load = { controller, waiters: 0, settled: false, previousId, session: options.session, promise: undefined as unknown as Promise<ToolResult> };
    const request: PageRequest = { maxEntryBytes: this.#maxEntryBytes, ...(previousId === undefined ? {} : { previousId }) };
    load.promise = this.#fetch(withPageRequest(call, request), { signal: controller.signal, deadlineMs: options.deadlineMs, session: options.session }, next).then((answer) => {
      load.settled = true;
      if (this.#loads.get(key) === load) this.#loads.delete(key);
      const page = answer.isError ? undefined : (answer.structuredContent?.page as KeptPage | undefined);
      // Kept without its image: only a first window shows one, and a first window always fetches.
      if (!page) this.#noteVersion(key, answer);
      else if (!load.released) this.#cache.set(key, withoutImage(page), page.bytes, options.session);
      return answer;
    });
    this.#loads.set(key, load);
    return load;
  }

  /** A window the thread cut from a page too large to keep: its id is remembered, an older kept copy dropped. */
  #noteVersion(key: string, answer: ToolResult): ToolResult {
    const id = (answer.structuredContent?.snapshot as SnapshotInfo | undefined)?.id;
    if (!answer.isError && id !== undefined) {
      this.#cache.delete(key);
      this.#cache.remember(key, id);
    }
    return answer;
  }

  /**
   * One caller's wait for a shared fetch, within its own deadline and cancellation. The last
   * caller to leave cancels the fetch, which is then no longer offered to new callers.
   */
  #wait(key: string, load: Load, options: PoolCallOptions): Promise<{ answer: ToolResult } | { refused: ToolResult }> {
    load.waiters++;
    return new Promise((resolve) => {
      let done = false;
      const finish = (outcome: { answer: ToolResult } | { refused: ToolResult }) => {
        if (done) return;
        done = true;
        load.waiters--;
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const leave = (error: McpvisorError) => {
        if (done) return;
        finish({ refused: errorResult(error) });
        if (load.waiters === 0 && !load.settled) {
          if (this.#loads.get(key) === load) this.#loads.delete(key);
          load.controller.abort(new McpvisorError('CANCELLED', 'every call waiting for this fetch has gone'));
        }
      };
      const timer = setTimeout(() => leave(new McpvisorError('TIMEOUT', `the call ran past its ${options.deadlineMs} ms deadline and was stopped`)), options.deadlineMs);
      const onAbort = () => leave(new McpvisorError('CANCELLED', 'the call was cancelled'));
      if (options.signal?.aborted) onAbort();
      else options.signal?.addEventListener('abort', onAbort, { once: true });
      void load.promise.then((answer) => finish({ answer }));
    });
  }

  /** A call that goes to the network: its rate limit token, then the pool with what is left of the budget. */
  async #fetch(call: ToolCall, options: PoolCallOptions, next: Next): Promise<ToolResult> {
    const started = performance.now();
    const signal = options.signal ?? new AbortController().signal;
    // Named as the catalogue names a refusal of its own hooks (the web toolset has no namespace).
    try {
      await this.#options.beforeFetch?.(call.arguments, signal, options.deadlineMs, options.session);
    } catch (error) {
      return errorResult(error, call.tool);
    }
    const left = options.deadlineMs - Math.ceil(performance.now() - started);
    if (left <= 0) return errorResult(new McpvisorError('TIMEOUT', `the call waited its whole ${options.deadlineMs} ms budget for its turn (rate limit) and was not run`), call.tool);
    try {
      return await next(call, { signal, deadlineMs: left, session: options.session });
    } catch (error) {
      return errorResult(error);
    }
  }
}

function window(page: KeptPage, start: number, maxLength: number, snapshot: { cached: boolean; changed?: boolean }): ToolResult {
  const info: SnapshotInfo = { id: page.id, fetchedAt: page.fetchedAt, cached: snapshot.cached, ...(snapshot.changed === undefined ? {} : { changed: snapshot.changed }) };
  return formatWindow({ content: page.content, metadata: page.metadata, ...(page.image ? { image: page.image } : {}) }, start, maxLength, info);
}

function withoutImage(page: KeptPage): KeptPage {
  const { image: _image, ...kept } = page;
  return kept;
}

function withPageRequest(call: ToolCall, request: PageRequest): ToolCall {
  return { tool: call.tool, arguments: { ...call.arguments, [PAGE_REQUEST_ARG]: request } };
}

/**
 * The key of the page a call reads: a hash (a bounded size, whatever the URL's length) of the
 * session, the URL as parsed without its fragment, and every other argument but the window's.
 * Undefined for a URL that is not an absolute http(s) one (the thread refuses it).
 */
function pageKey(args: Record<string, unknown>, session: string | undefined): string | undefined {
  if (typeof args.url !== 'string') return undefined;
  const raw = args.url.trim();
  if (!URL.canParse(raw)) return undefined;
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  url.hash = '';
  const options = Object.keys(args)
    .filter((name) => name !== 'url' && !WINDOW_ARGS.has(name))
    .sort()
    .map((name) => [name, args[name]]);
  return createHash('sha256').update(JSON.stringify([session ?? '', url.href, options])).digest('hex');
}

function nonNegative(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}
