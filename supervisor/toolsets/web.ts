import path from 'node:path';
import { clampTimerMs } from '../../config/timer-ms';
import { McpvisorError } from '../../protocol/errors';
import { RateLimiter, RateLimitWaitTooLong } from '../../workers/web/rate-limiter';
import type { BeforeCall, ToolsetFactory } from './types';
import { FetchPager } from './web-paging';

/** Slack over the fetch timeout for the HTML to Markdown conversion of a large page. */
const FETCH_CONVERT_SLACK_MS = 5_000;

/**
 * The web toolset (spec 001): `search` in the `web-search` process pool (one browser worker that
 * owns a puppeteer-cluster, `web.search.concurrency` pages at once) and `fetch_web_content` in the
 * `web-fetch` thread pool (`web.fetch.threads` piscina threads, `web.fetch.concurrency` calls each).
 *
 * Rate limits are token buckets here in the supervisor, shared by every session and worker:
 * a call waits for its token (the wait counts against its deadline and ends when the call is
 * cancelled) instead of failing, and sessions take turns for the tokens (RateLimiter's key). Calls that will answer at once without touching the network
 * (an empty query, a URL that is not an absolute http(s) one) spend no token.
 */
/**
 * Whether the fetch will go to the network: an absolute http(s) URL. Anything else (ftp:, file:,
 * javascript:) the fetch refuses at once, so it must not take a token from those that will go.
 * The same rule as the fetch's own check (parseHttpUrl), without loading undici here.
 */
function isHttpUrl(raw: string): boolean {
  if (!URL.canParse(raw.trim())) return false;
  const { protocol } = new URL(raw.trim());
  return protocol === 'http:' || protocol === 'https:';
}

export const webToolsets: ToolsetFactory = (config, logger) => {
  const web = config.web;
  if (!web.enabled) return [];
  const log = logger.child({ toolset: 'web' });
  const searchLimiter = new RateLimiter(web.search.rateLimit, web.search.rateLimitIntervalMs);
  const fetchLimiter = new RateLimiter(web.fetch.rateLimit, web.fetch.rateLimitIntervalMs);

  const limited = (limiter: RateLimiter, needsToken: (args: Record<string, unknown>) => boolean, pool: string): BeforeCall =>
    async (tool, args, signal, maxWaitMs, session) => {
      if (!needsToken(args)) return;
      const status = limiter.getStatus();
      if (status.waiting > 0 || status.requests >= status.limit) log.debug({ pool, tool, waiting: status.waiting }, 'waiting for the rate limit');
      try {
        await limiter.acquire({ signal, maxWaitMs, key: session });
      } catch (error) {
        // Decision: BUSY, at once - the line for tokens is longer than the call's budget, as a
        // full queue is (DESIGN: a full queue answers at once with a clear busy error); waiting
        // it out would only end in a TIMEOUT.
        if (error instanceof RateLimitWaitTooLong) throw new McpvisorError('BUSY', `${tool} is rate limited and busy: ${error.message}; try again later`, { data: { waitMs: error.waitMs, waiting: error.waiting } });
        throw error;
      }
    };

  const fetchTurn = limited(fetchLimiter, (args) => typeof args.url === 'string' && isHttpUrl(args.url), 'web-fetch');
  // With the pager on, it takes the fetch's token itself, for the calls that make a request:
  // later windows of a kept page, and calls that join a fetch in flight, take none.
  const { ttlMs, maxBytes } = web.fetch.cache;
  const pager =
    ttlMs > 0 && maxBytes > 0
      ? new FetchPager({ ttlMs, maxBytes, maxOutputChars: web.fetch.maxOutputChars, log, beforeFetch: (args, signal, maxWaitMs, session) => fetchTurn('fetch_web_content', args, signal, maxWaitMs, session) })
      : undefined;

  const workers = path.join(__dirname, '..', '..', 'workers', 'web');
  return [
    {
      name: 'web',
      ...(pager ? { onSessionEnd: (session: string) => pager.release(session) } : {}),
      pools: [
        {
          kind: 'process',
          name: 'web-search',
          module: path.join(workers, 'search-worker.js'),
          size: 1,
          concurrency: web.search.concurrency,
          workerConfig: web.search,
          // A search's timeoutMs starts once the browser is up; a cold launch (the first search,
          // the first after a crash restart) has its own bound, launchTimeoutMs, within the call's.
          callTimeoutMs: clampTimerMs(web.search.timeoutMs + web.search.launchTimeoutMs),
          beforeCall: limited(searchLimiter, (args) => typeof args.query === 'string' && args.query.trim() !== '', 'web-search'),
          required: web.search.affectsHealth,
        },
        {
          kind: 'thread',
          name: 'web-fetch',
          module: path.join(workers, 'fetch-thread.js'),
          threads: web.fetch.threads,
          concurrency: web.fetch.concurrency,
          workerConfig: web.fetch,
          callTimeoutMs: clampTimerMs(web.fetch.timeoutMs + FETCH_CONVERT_SLACK_MS),
          ...(pager ? { aroundCall: pager.aroundCall } : { beforeCall: fetchTurn }),
          required: web.fetch.affectsHealth,
        },
      ],
    },
  ];
};
