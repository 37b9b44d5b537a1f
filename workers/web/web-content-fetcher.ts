import { fetchWebContent, type FetchOptions, type FetchResult } from './content';
import { checkTimeout, parseHttpUrl } from './http-fetch';
import { RateLimiter, type RateLimiterStatus } from './rate-limiter';

export interface WebContentFetcherOptions {
  /** Reach loopback/private/link-local addresses. Default false (the SSRF guard is on). */
  allowPrivateNetwork?: boolean;
  /** Default fetch timeout in ms when FetchOptions.timeout is absent. Default 15000. */
  timeoutMs?: number;
  /** Default 10 MB. */
  maxBodyBytes?: number;
  /** Default 5. */
  maxRedirects?: number;
}

/**
 * Spec 001's fetcher: `rateLimit` requests per `rateLimitInterval` ms (default 1 per 1000 ms),
 * waiting for its turn, then fetch + convert on the calling thread. The MCP tool runs the same
 * pipeline in the thread pool with the limit applied in the supervisor instead.
 */
export class WebContentFetcher {
  readonly #limiter: RateLimiter;
  readonly #options: WebContentFetcherOptions;

  constructor(rateLimit = 1, rateLimitInterval = 1000, options: WebContentFetcherOptions = {}) {
    this.#limiter = new RateLimiter(rateLimit, rateLimitInterval);
    this.#options = options;
  }

  /**
   * Never throws; an invalid or non-http(s) URL (INVALID_URL) or a `timeout` that is not a
   * positive number of ms (INVALID_OPTIONS) fails at once without spending a token. `null`
   * options are none.
   */
  async fetch(url: string, given?: (FetchOptions & { signal?: AbortSignal }) | null): Promise<FetchResult> {
    const options = given ?? {};
    let timeoutMs: number | undefined;
    try {
      parseHttpUrl(url);
      timeoutMs = checkTimeout(options.timeout, 'timeout');
    } catch (error) {
      return { success: false, error: (error as Error).message, code: (error as { code?: FetchResult['code'] }).code ?? 'INVALID_URL' };
    }
    try {
      await this.#limiter.acquire({ signal: options.signal });
    } catch {
      return { success: false, error: 'the fetch was cancelled while waiting for the rate limit', code: 'CANCELLED' };
    }
    return fetchWebContent(url, {
      timeoutMs: timeoutMs ?? this.#options.timeoutMs,
      headers: options.headers,
      allowPrivateNetwork: this.#options.allowPrivateNetwork,
      maxBodyBytes: this.#options.maxBodyBytes,
      maxRedirects: this.#options.maxRedirects,
      signal: options.signal,
    });
  }

  getRateLimitStatus(): RateLimiterStatus {
    return this.#limiter.getStatus();
  }
}
