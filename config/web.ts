import { z } from 'zod';
import { timerMs } from './timer-ms';
import { ipv6UrlHint } from '../protocol/ipv6-url';

const engineUrl = () => z.string().url({ error: (issue) => `Invalid URL${ipv6UrlHint(issue.input)}` });

/** The `web` section: spec 001's `search` (browser pool) and `fetch_web_content` (thread pool). */
export const webSchema = z.strictObject({
  enabled: z.boolean().default(true),
  search: z
    .strictObject({
      engine: z.string().min(1).default('duckduckgo'),
      /** Base URL of the engine, for tests and private mirrors. */
      engineUrl: engineUrl().optional(),
      /** Base URLs of other engines (fallbacks), by engine name; `engineUrl` wins for the primary. */
      engineUrls: z.record(z.string(), engineUrl()).default({}),
      /** Searches one browser worker runs at once (pages of one Chromium). */
      concurrency: z.number().int().min(1).max(16).default(4),
      /** Engines tried in order when one is blocked, answers an HTTP error or cannot be reached. */
      fallbackEngines: z.array(z.string().min(1)).default([]),
      headless: z.boolean().default(true),
      executablePath: z.string().min(1).optional(),
      /** Searches per interval; a fraction is a slower rate (0.5 per 1000 ms: one per 2 s). */
      rateLimit: z.number().positive().default(1),
      rateLimitIntervalMs: timerMs().default(2000),
      /** One search's budget; the wait for a browser launch is not counted (the call's budget, this + launchTimeoutMs, bounds both). */
      timeoutMs: timerMs().default(30_000),
      /** Bound of one browser launch; a launch still hanging then is killed (workers/web/browser.ts, LAUNCH_TIMEOUT_MS). */
      launchTimeoutMs: timerMs().default(20_000),
      maxResults: z.number().int().positive().max(100).default(10),
      /**
       * false: a search pool that cannot do its work (the browser does not launch, no live
       * worker) does not turn /health 503; it is still listed there with its state. On an
       * instance that also serves APIs or a shell, a broken Chromium then does not take those
       * out of a balancer's rotation (config/openapi.ts has the same switch per API).
       */
      affectsHealth: z.boolean().default(true),
    })
    .prefault({}),
  fetch: z
    .strictObject({
      /** Fetches per interval; a fraction is a slower rate. */
      rateLimit: z.number().positive().default(1),
      rateLimitIntervalMs: timerMs().default(1000),
      timeoutMs: timerMs().default(15_000),
      maxBodyBytes: z.number().int().positive().default(10 * 1024 * 1024),
      maxRedirects: z.number().int().min(0).max(20).default(5),
      allowPrivateNetwork: z.boolean().default(false),
      threads: z.number().int().min(1).max(32).default(2),
      /**
       * Calls each thread runs at once. Decision: 4, so that waiting on a site's answer does not
       * idle a thread; the conversions themselves still run one at a time per thread.
       */
      concurrency: z.number().int().min(1).max(64).default(4),
      maxOutputChars: z.number().int().positive().default(10_000),
      /**
       * Fetched pages kept in the supervisor, per session, so that later windows of a long page
       * (start_index > 0) are read from the same copy (supervisor/toolsets/web-paging.ts).
       * `ttlMs: 0` or `maxBytes: 0` turns it off: every window fetches the page again.
       */
      cache: z
        .strictObject({
          /** How long a fetched page serves later windows, from when it was fetched. */
          ttlMs: timerMs(0).default(600_000),
          /** All kept pages together, counted at 2 bytes a character; one page may take a quarter. */
          maxBytes: z.number().int().min(0).default(32 * 1024 * 1024),
        })
        .prefault({}),
      /** false: the fetch pool's state does not turn /health 503 (see search.affectsHealth). */
      affectsHealth: z.boolean().default(true),
    })
    .prefault({}),
});

export type WebConfig = z.infer<typeof webSchema>;
