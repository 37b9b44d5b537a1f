import { httpFetch, type HttpFetchOptions, type HttpResponse } from './http-fetch';

export type HttpClientOptions = Pick<HttpFetchOptions, 'timeoutMs' | 'maxBodyBytes' | 'maxRedirects' | 'allowPrivateNetwork'>;

/**
 * Spec 001's shared HTTP client (`HttpClient.getInstance()`): GET and POST through the same
 * guarded undici path as the fetcher (SSRF guard, redirects re-checked, body cap, charset).
 * Unlike `WebContentFetcher.fetch`, these throw `FetchError` (with a `code`) on failure, and any
 * content type is accepted.
 */
export class HttpClient {
  static #instance: HttpClient | undefined;
  #options: HttpClientOptions = {};

  static getInstance(): HttpClient {
    HttpClient.#instance ??= new HttpClient();
    return HttpClient.#instance;
  }

  /** Changes the defaults of the shared instance (e.g. `allowPrivateNetwork` in tests). */
  configure(options: HttpClientOptions): this {
    this.#options = { ...this.#options, ...options };
    return this;
  }

  get(url: string, options: { headers?: Record<string, string>; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<HttpResponse> {
    return httpFetch(url, { ...this.#options, ...options, textOnly: false });
  }

  /** A string body is sent as it is; anything else as JSON with `content-type: application/json`. */
  post(url: string, body: unknown, options: { headers?: Record<string, string>; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<HttpResponse> {
    const json = typeof body !== 'string';
    return httpFetch(url, {
      ...this.#options,
      ...options,
      method: 'POST',
      body: json ? JSON.stringify(body) : body,
      headers: { ...(json ? { 'content-type': 'application/json' } : {}), ...options.headers },
      textOnly: false,
    });
  }
}
