import type { Cluster } from 'puppeteer-cluster';
import type { HTTPRequest, Page } from 'puppeteer-core';
import { McpvisorError } from '../../protocol/errors';
import type { WorkerHealth } from '../../protocol/pool';
import type { WorkerLogger } from '../../protocol/worker-runtime';
import { getEngine, type EngineOutcome, type SearchEngine, type SearchResult } from './engines';
import { libraryLogger } from './library-logger';
import { NoPage } from './page-concurrency';
import { SearchCluster } from './search-cluster';
import { SearchBudget } from './search-budget';
import { RateLimiter } from './rate-limiter';
import { MAX_RESULT_PAGE_BYTES, watchDocumentSize } from './page-size';
import { redirectAllowed } from './redirect-guard';
import { assertQueryFits, isValidQuery, MAX_QUERY_CHARS, normalizeQuery } from './search-query';
import { beforeTime, raceSignal } from './waiting';

export interface WebSearcherOptions {
  /** Engine name (default `duckduckgo`). */
  engine?: string;
  /** Base URL of the engine, replacing its public one (tests, mirrors). */
  engineUrl?: string;
  /** Base URLs of fallback engines by name. */
  engineUrls?: Record<string, string>;
  /** Engines tried in order when the previous one is blocked, answers an HTTP error or cannot be reached. Default none. */
  fallbackEngines?: string[];
  executablePath?: string;
  /** Pages open at once in the one browser. Default 4. */
  concurrency?: number;
  /**
   * Budget of one search in ms, engines of the fallback chain included. Default 30000. The wait
   * for the browser's launch is not counted (only a call's own `timeoutMs` bounds it).
   */
  timeoutMs?: number;
  /**
   * Bound of one browser launch in ms (default 20000, LAUNCH_TIMEOUT_MS): a launch still hanging
   * then is killed and fails its searches with BROWSER_LAUNCH_TIMEOUT; the next search launches again.
   */
  launchTimeoutMs?: number;
  /** Default 10. */
  maxResults?: number;
  /**
   * The library's own limit (spec 001: 1 search per 2 s), taken right before the search's first
   * page load, so searches that waited for one launch or a slow first page reach the engine
   * spaced out, not together; `false`: none.
   */
  rateLimit?: { limit: number; intervalMs: number } | false;
  /** Where failures and blocks are logged. Default: warnings and errors as pino JSON on stderr. */
  log?: WorkerLogger;
  /**
   * Hears when the browser cannot be launched any more (`degraded`: 3 launches in a row failed,
   * with the last one's error) and when it can again (`ok`). Also in `stats().health`.
   */
  onHealth?: (health: WorkerHealth) => void;
  /** While degraded, the pause before the searcher tries a launch by itself. Default 30000. */
  retryWhileDegradedMs?: number;
}

/** A search with the details the MCP tool reports. */
export interface SearchOutcome {
  results: SearchResult[];
  /** The engine that answered (the last one tried). */
  engine: string;
  /** Engines that refused the search, in the order tried. */
  blocked: Array<{ engine: string; reason: string }>;
  /** Engines that answered with an HTTP error status (`HTTP 503`), in the order tried. */
  failed: Array<{ engine: string; reason: string }>;
}

/** What loading an engine's page gave: what the page said, or an HTTP error with no results on it. */
type PageOutcome = EngineOutcome | { kind: 'failed'; reason: string };

interface Task {
  url: string;
  engine: SearchEngine;
  signal: AbortSignal;
  /** When the search ends (performance.now() ms); read when needed: a browser launch meanwhile moves it later. */
  readonly deadline: number;
  /** Waits for the search's rate limit token, taken once, by its first page load. */
  turn(): Promise<void>;
}

/** How often a visible browser's page is re-read while a person solves a captcha. */
const CAPTCHA_POLL_MS = 1_000;
/** How long before the deadline the captcha wait gives up, to report the block in time. */
const CAPTCHA_MARGIN_MS = 500;
const TOO_LARGE = Symbol('too large');
const REFUSED_REDIRECT = Symbol('refused redirect');
/** How long after the search's deadline puppeteer's own navigation timeout comes (see #read). */
const NAVIGATION_BACKSTOP_MS = 1_000;

export { MAX_QUERY_CHARS };

/**
 * Spec 001's searcher: one Chromium (launched on the first search, reused after) driven by
 * puppeteer-cluster with a page per search (PageConcurrency: about half the cost of a context
 * per search here). Headless, each page loads only the result document: no scripts, styles,
 * images or third-party requests. A blocked engine yields `[]` from `search()`; with
 * `headless: false` the page is left open for a person to solve the challenge until the timeout.
 * If Chromium dies or hangs, the next search relaunches it on a fresh profile (a hung one gets
 * 5 s to open a page), the old one killed with the searches still on it (browser.ts,
 * page-concurrency.ts); one that dies is relaunched at once, at most once a minute; a browser that cannot be relaunched fails searches with BROWSER_LAUNCH_FAILED, one
 * whose launch hangs past `launchTimeoutMs` is killed and fails them with BROWSER_LAUNCH_TIMEOUT,
 * and the next search tries again. After 3 failed launches in a row the searcher reports itself
 * degraded (`onHealth`, `stats().health`) and tries a launch by itself every 30 s until one works
 * (search-cluster.ts, launch-health.ts).
 */
export class WebSearcher {
  readonly #headless: boolean;
  readonly #options: WebSearcherOptions;
  readonly #log: WorkerLogger;
  readonly #limiter: RateLimiter | undefined;
  readonly #browser: SearchCluster<Task, PageOutcome>;
  #userAgent: string | undefined;
  #stats = { searches: 0, blocked: 0, httpErrors: 0, failures: 0 };
  #closed = false;

  constructor(headless = true, options: WebSearcherOptions = {}) {
    this.#headless = headless;
    this.#options = options;
    this.#log = options.log ?? libraryLogger();
    const limit = options.rateLimit ?? { limit: 1, intervalMs: 2000 };
    this.#limiter = limit === false ? undefined : new RateLimiter(limit.limit, limit.intervalMs);
    getEngine(options.engine ?? 'duckduckgo');
    for (const name of options.fallbackEngines ?? []) getEngine(name);
    this.#browser = new SearchCluster({
      executablePath: options.executablePath,
      headless,
      concurrency: options.concurrency ?? 4,
      searchTimeoutMs: options.timeoutMs ?? 30_000,
      launchTimeoutMs: options.launchTimeoutMs,
      onHealth: options.onHealth,
      retryWhileDegradedMs: options.retryWhileDegradedMs,
      log: this.#log,
    });
  }

  /**
   * Spec 001 `search(query)`: never rejects. An invalid query (not a string, empty, or longer
   * than MAX_QUERY_CHARS) gives `[]` at once; one longer than every engine takes, a blocked
   * engine, an HTTP error status, a network error or a timeout gives `[]` and a log line.
   */
  async search(query: string): Promise<SearchResult[]> {
    if (!isValidQuery(query)) return [];
    try {
      return (await this.searchDetailed(query)).results;
    } catch (error) {
      this.#log.warn('search failed', { error: (error as Error).message });
      return [];
    }
  }

  /**
   * A search that reports why it found nothing. The query is sent as normalizeQuery makes it (one
   * line, trimmed); an engine whose `maxQueryChars` it passes is skipped (listed in `failed`), and
   * when every engine would be skipped, or it passes MAX_QUERY_CHARS, it rejects with BAD_INPUT
   * before any page load. Each engine of the chain is tried in turn while
   * the previous one blocks the search or answers an HTTP error status (>= 400 with no results
   * on the page); those are listed in `blocked` and `failed`. Rejects with McpvisorError: TIMEOUT past the
   * budget (SearchBudget: waits for a browser launch not counted, within `timeoutMs`, the
   * caller's budget; saying so when the browser was still launching), CANCELLED when `signal` aborts,
   * NETWORK_ERROR when a lone engine's page cannot be loaded (in a chain, an engine that cannot
   * be reached is listed in `failed`), BROWSER_LAUNCH_FAILED when the browser cannot start,
   * BROWSER_LAUNCH_TIMEOUT when its launch hung, BROWSER_PAGE_TIMEOUT when it opens no page even
   * relaunched. `engine` searches that one engine only (its base
   * URL from `engineUrls`, else its public one), on the same browser.
   */
  async searchDetailed(query: string, options: { signal?: AbortSignal; timeoutMs?: number; engine?: string } = {}): Promise<SearchOutcome> {
    const engines = (options.engine ? [options.engine] : [this.#options.engine ?? 'duckduckgo', ...(this.#options.fallbackEngines ?? [])]).map(getEngine);
    const primary = getEngine(this.#options.engine ?? 'duckduckgo');
    const text = typeof query === 'string' ? normalizeQuery(query) : '';
    if (text === '') return { results: [], engine: engines[0].name, blocked: [], failed: [] };
    const chars = assertQueryFits(text, engines);
    if (this.#closed) throw new McpvisorError('SHUTTING_DOWN', 'the searcher is closed');
    const budget = new SearchBudget({ searchMs: this.#options.timeoutMs ?? 30_000, callMs: options.timeoutMs ?? Number.POSITIVE_INFINITY, launchedMs: () => this.#browser.launchedMs });
    const signal = options.signal ? AbortSignal.any([options.signal, budget.signal]) : budget.signal;
    try {
      const cluster = await raceSignal(this.#browser.cluster(), signal);
      // The rate limit's token is taken by the first page load, once its page is open. Taken
      // here, searches that came while the browser launched (or opened its slow first page) all
      // had their tokens and loaded the engine's page together once it was up. A fallback engine
      // takes none.
      let turn: Promise<void> | undefined;
      const takeTurn = () => (turn ??= this.#limiter?.acquire({ signal }) ?? Promise.resolve());
      const blocked: SearchOutcome['blocked'] = [];
      const failed: SearchOutcome['failed'] = [];
      this.#stats.searches += 1;
      for (const engine of engines) {
        // Not sent where the engine would refuse it or search for part of it; listed as failed.
        if (chars > engine.maxQueryChars) {
          failed.push({ engine: engine.name, reason: `the query is longer than the ${engine.maxQueryChars} characters it takes` });
          continue;
        }
        const url = engine.searchUrl(text, this.#baseUrl(engine, engine === primary));
        let outcome: PageOutcome;
        try {
          outcome = await this.#run(cluster, { url, engine, signal, get deadline() { return budget.deadline; }, turn: takeTurn });
        } catch (error) {
          // In a chain, an engine that cannot be reached (refused, DNS, reset: Chromium's
          // net::ERR_…), or whose tab crashed, is one more failure, the last one too: when no
          // engine answered, the search names every engine and its reason (the last one's error
          // alone hid that the first had blocked it). A lone engine's error is the search's.
          const crashed = ((error as McpvisorError).data as { crashed?: boolean } | undefined)?.crashed === true || /^Page crashed/.test((error as Error)?.message ?? '');
          const reason = crashed ? 'tab crashed' : /net::ERR_[A-Z_]+/.exec((error as Error)?.message ?? '')?.[0];
          if (reason === undefined || signal.aborted || engines.length === 1) throw error;
          outcome = { kind: 'failed', reason };
        }
        if (outcome.kind === 'results') return { results: outcome.results, engine: engine.name, blocked, failed };
        if (outcome.kind === 'failed') {
          this.#stats.httpErrors += 1;
          failed.push({ engine: engine.name, reason: outcome.reason });
          this.#log.warn('search engine failed', { engine: engine.name, reason: outcome.reason });
          continue;
        }
        this.#stats.blocked += 1;
        blocked.push({ engine: engine.name, reason: outcome.reason });
        this.#log.warn('search engine blocked the search', { engine: engine.name, reason: outcome.reason });
      }
      return { results: [], engine: engines[engines.length - 1].name, blocked, failed };
    } catch (error) {
      this.#stats.failures += 1;
      if (signal.aborted) throw this.#abortReason(signal);
      if (this.#closed) throw new McpvisorError('SHUTTING_DOWN', 'the searcher was closed during the search');
      if (error instanceof McpvisorError) throw error;
      // puppeteer's TimeoutError (a wait of its own that ran out): slow, not unreachable.
      if ((error as Error)?.name === 'TimeoutError') throw new McpvisorError('TIMEOUT', `the search did not finish in time: ${(error as Error).message}`);
      throw new McpvisorError('NETWORK_ERROR', `the search failed: ${(error as Error).message}`);
    } finally {
      budget.dispose();
    }
  }

  /**
   * Closes the browser and deletes its profile. Later searches fail with SHUTTING_DOWN. A browser
   * that does not close within 5 s (hung) is killed, as is a launch in flight.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#browser.close();
  }

  stats(): Record<string, unknown> {
    return { ...this.#stats, ...this.#browser.stats(), rateLimit: this.#limiter?.getStatus() };
  }

  #baseUrl(engine: SearchEngine, primary: boolean): string {
    return (primary ? this.#options.engineUrl : undefined) ?? this.#options.engineUrls?.[engine.name] ?? engine.defaultBaseUrl;
  }

  /** Why an aborted search ended; a timeout says so when the browser was still launching then. */
  #abortReason(signal: AbortSignal): McpvisorError {
    const reason = signal.reason instanceof McpvisorError ? signal.reason : new McpvisorError('CANCELLED', 'the search was cancelled');
    const since = this.#browser.launchingSince;
    if (reason.code !== 'TIMEOUT' || since === undefined) return reason;
    return new McpvisorError('TIMEOUT', `${reason.message}: the browser was still launching (for ${Math.round(performance.now() - since)} ms; a launch gets ${this.#browser.launchTimeoutMs} ms)`);
  }

  /**
   * One engine's page, raced against the call's signal here too: opening a page waits on the
   * browser, and a browser that hangs (stopped, swapping) never answers; the search must still
   * end at its timeout, and not make the pool kill the worker for ignoring a cancel. The outcome
   * is taken as soon as the visit has it: the cluster closes the page before `execute` settles,
   * and closing a page whose scripts keep it busy (a proof-of-work challenge) takes seconds.
   */
  #run(cluster: Cluster<Task, PageOutcome>, task: Task): Promise<PageOutcome> {
    let settle: (visit: Promise<PageOutcome>) => void = () => {};
    const visited = new Promise<PageOutcome>((resolve) => {
      settle = resolve;
    });
    const executing = cluster.execute(task, ({ page, data }) => {
      if (page instanceof NoPage) throw page.error;
      const visit = this.#visit(page, data);
      settle(visit);
      return visit;
    });
    return raceSignal(Promise.race([executing, visited]), task.signal);
  }

  /**
   * Runs one page visit, raced against the call's signal: on abort the task settles at once and
   * the cluster closes the page, which cancels its request. (Closing the page ourselves would
   * make the cluster's own close fail, and it answers that by relaunching the whole browser.)
   */
  async #visit(page: Page, task: Task): Promise<PageOutcome> {
    // A renderer that dies (killed, out of memory) leaves `goto` waiting until the deadline: the
    // page's `error` event says so at once.
    let onCrash: (error: Error) => void = () => {};
    const crashed = new Promise<never>((_, reject) => {
      onCrash = (error) => reject(new McpvisorError('UPSTREAM_ERROR', `the browser tab crashed while loading ${task.engine.name}'s results (${error.message}); the next search opens a new one`, { data: { crashed: true } }));
      page.once('error', onCrash);
    });
    crashed.catch(() => {});
    try {
      return await raceSignal(Promise.race([this.#load(page, task), crashed]), task.signal);
    } catch (error) {
      // A browser killed or crashed under the page fails it with puppeteer's words for a lost
      // connection ("Navigating frame was detached", "Target closed"), which name no browser.
      if (error instanceof McpvisorError || task.signal.aborted || page.browser().connected) throw error;
      throw new McpvisorError('NETWORK_ERROR', `the browser closed while loading ${task.engine.name}'s results (it crashed or was killed: ${(error as Error).message}); it is relaunched, try the search again`, { data: { browserClosed: true } });
    } finally {
      page.off('error', onCrash);
    }
  }

  async #load(page: Page, task: Task): Promise<PageOutcome> {
    this.#userAgent ??= (await page.browser().userAgent()).replace('HeadlessChrome', 'Chrome');
    // Independent settings, sent together: one round trip of latency instead of four.
    await Promise.all([
      page.setUserAgent(this.#userAgent),
      page.setExtraHTTPHeaders({ 'accept-language': 'en-US,en;q=0.9' }),
      ...(this.#headless ? [page.setJavaScriptEnabled(false), page.setRequestInterception(true)] : []),
    ]);
    // Headless, the result document is the one document request let through: its size is watched.
    const watch = this.#headless ? await watchDocumentSize(page) : undefined;
    try {
      return await this.#read(page, task, watch);
    } finally {
      await watch?.stop();
    }
  }

  async #read(page: Page, task: Task, watch: Awaited<ReturnType<typeof watchDocumentSize>> | undefined): Promise<PageOutcome> {
    let refusedRedirect: string | undefined;
    if (this.#headless) {
      // The page is new (one per search, on about:blank), so its first main-frame document request
      // is our goto. Matching it by URL failed: Chromium rewrites the URL it sends (`'` → %27,
      // host lowercased, `..` resolved) and our own page was then answered with a 204.
      let requested = false;
      const engineHost = new URL(task.url).host;
      page.on('request', (request: HTTPRequest) => {
        if (request.isInterceptResolutionHandled()) return;
        // Only the result document itself (and its redirects): no subresources, no third
        // parties, and no second navigation (a <meta http-equiv="refresh"> on the page).
        const mainDocument = request.resourceType() === 'document' && request.frame() === page.mainFrame();
        const wanted = mainDocument && (!requested || request.redirectChain().length > 0);
        if (mainDocument) requested = true;
        // A 204 answer to a navigation leaves the current document in place (an aborted one
        // would replace it with an error page).
        const answer = wanted && request.redirectChain().length > 0
          ? redirectAllowed(request.url(), engineHost).then((allowed) => {
            if (allowed) return request.continue();
            refusedRedirect = request.url();
            return request.abort('blockedbyclient');
          })
          : wanted ? request.continue() : mainDocument ? request.respond({ status: 204, body: '' }) : request.abort('blockedbyclient');
        void answer.catch(() => {});
      });
    }
    // The rate limit's turn, as late as it can be: right before the request the engine sees.
    await task.turn();
    // The search's own deadline ends the wait (#visit races the signal); puppeteer's navigation
    // timeout is only a backstop, set after it: due at the same instant, whichever of the two
    // timers Node ran first decided the answer, and puppeteer's first gave NETWORK_ERROR
    // 'Navigation timeout of … ms exceeded' for a page that was merely slow (its timer starts
    // later in a busier turn of the event loop, so it can come a few ms early).
    const loading = page.goto(task.url, { waitUntil: 'domcontentloaded', timeout: Math.max(1, Math.floor(task.deadline - performance.now())) + NAVIGATION_BACKSTOP_MS });
    // Stopped past the limit, the navigation fails (net::ERR_ABORTED): the size is the reason.
    // A redirect the guard refused fails the navigation (net::ERR_BLOCKED_BY_CLIENT): it is the reason.
    const response = await Promise.race([loading, watch ? watch.tooLarge.then((): typeof TOO_LARGE => TOO_LARGE) : new Promise<never>(() => {})])
      .catch((error: unknown): typeof REFUSED_REDIRECT => {
        if (refusedRedirect === undefined) throw error;
        return REFUSED_REDIRECT;
      });
    if (response === REFUSED_REDIRECT) {
      return { kind: 'failed', reason: `the result page redirected to ${refusedRedirect?.slice(0, 200)}, a private, loopback, link-local or metadata address; refused` };
    }
    if (response === TOO_LARGE) {
      loading.catch(() => {});
      return { kind: 'failed', reason: `result page larger than ${MAX_RESULT_PAGE_BYTES / 1024 / 1024} MB` };
    }
    const status = response?.status() ?? 0;
    const maxResults = this.#options.maxResults ?? 10;
    // Headless (no scripts), the document as served is the page; reading it from the response
    // also survives a <meta refresh> that starts another navigation while we read.
    const html = this.#headless && response ? await response.text().catch(() => page.content()) : await settledContent(page, task.deadline);
    let outcome = task.engine.parse(html, { status, url: response?.url() ?? page.url(), maxResults });
    // The status of the page read last: a page a person reached by solving the challenge is no
    // longer the first answer's 403.
    let lastStatus = status;
    // Visible browser: a person may solve the challenge; re-read the page until then. The wait
    // ends CAPTCHA_MARGIN_MS before the deadline with the block in hand: a read still running at
    // the deadline (a late timer on a busy machine) would turn "blocked" into a bare timeout.
    const stopAt = task.deadline - CAPTCHA_MARGIN_MS;
    while (!this.#headless && outcome.kind === 'blocked' && performance.now() < stopAt && !task.signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(CAPTCHA_POLL_MS, stopAt - performance.now())));
      const html = await beforeTime(settledContent(page, stopAt), stopAt);
      if (html === undefined) break;
      lastStatus = 200;
      outcome = task.engine.parse(html, { status: lastStatus, url: page.url(), maxResults });
    }
    // An error page (503, 500, 404) is not an empty result page: the engine could not answer.
    // 403 and 429 stay blocks (the parsers' genericBlock). Decision: results found on an error
    // page are kept, as the page did answer.
    if (outcome.kind === 'results' && outcome.results.length === 0 && lastStatus >= 400) return { kind: 'failed', reason: `HTTP ${lastStatus}` };
    return outcome;
  }
}

/**
 * The page's HTML, once a navigation in progress has settled and the document is parsed: in a
 * visible browser the page moves on by itself when a person solves the challenge; reading it
 * mid-navigation fails, and reading it while the next page still arrives gave the results parsed
 * so far (4 of 9 on a loaded machine). Past the deadline, a document still loading is read as it is.
 */
export async function settledContent(page: { content(): Promise<string>; evaluate(fn: () => string): Promise<string> }, deadline: number): Promise<string> {
  for (;;) {
    try {
      const loading = (await page.evaluate(() => document.readyState)) === 'loading';
      if (!loading || performance.now() + CAPTCHA_POLL_MS > deadline) return await page.content();
      await new Promise((resolve) => setTimeout(resolve, 100));
    } catch (error) {
      const navigating = /context was destroyed|navigat|cannot find context/i.test((error as Error).message ?? '');
      if (!navigating || performance.now() + CAPTCHA_POLL_MS > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
