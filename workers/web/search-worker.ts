import { McpvisorError } from '../../protocol/errors';
import { runWorker } from '../../protocol/worker-runtime';
import { formatSearch, SEARCH_TOOL } from './search-tool';
import { WebSearcher } from './web-searcher';

/** The settings the browser worker reads (config.web.search). */
interface SearchWorkerConfig {
  engine?: string;
  engineUrl?: string;
  engineUrls?: Record<string, string>;
  fallbackEngines?: string[];
  headless?: boolean;
  executablePath?: string;
  concurrency?: number;
  rateLimit?: number;
  rateLimitIntervalMs?: number;
  timeoutMs?: number;
  launchTimeoutMs?: number;
  maxResults?: number;
}

/**
 * The `web-search` worker process: one WebSearcher (one Chromium, launched on the first search)
 * serving `search`. The supervisor's rate limit (beforeCall) admits searches, shared by the
 * sessions; the worker takes the same limit again right before a search's first page load, so
 * searches admitted while the browser was launching (or opening its slow first page) reach the
 * engine spaced out rather than together (in steady use its tokens are free by then).
 * An empty query answers at once with no results, without the browser.
 */
runWorker(async (raw, log, reportHealth) => {
  const config = (raw ?? {}) as SearchWorkerConfig;
  const searcher = new WebSearcher(config.headless ?? true, {
    engine: config.engine,
    engineUrl: config.engineUrl,
    engineUrls: config.engineUrls,
    fallbackEngines: config.fallbackEngines,
    executablePath: config.executablePath,
    concurrency: config.concurrency,
    timeoutMs: config.timeoutMs,
    launchTimeoutMs: config.launchTimeoutMs,
    maxResults: config.maxResults,
    rateLimit: config.rateLimit !== undefined && config.rateLimitIntervalMs !== undefined ? { limit: config.rateLimit, intervalMs: config.rateLimitIntervalMs } : false,
    log,
    // /health shows the search pool degraded while the browser cannot be launched.
    onHealth: reportHealth,
  });
  return {
    tools: [SEARCH_TOOL],
    info: { engine: config.engine ?? 'duckduckgo' },
    stats: () => searcher.stats(),
    close: () => searcher.close(),
    handle: async (call, { signal, deadlineMs }) => {
      if (call.tool !== SEARCH_TOOL.name) throw new McpvisorError('UNKNOWN_TOOL', `the search pool has no tool ${call.tool}`);
      const query = call.arguments.query;
      if (typeof query !== 'string') throw new McpvisorError('BAD_INPUT', 'query must be a string');
      const outcome = await searcher.searchDetailed(query, { signal, timeoutMs: Math.max(100, deadlineMs - 250) });
      return formatSearch(query.trim(), outcome);
    },
  };
});
