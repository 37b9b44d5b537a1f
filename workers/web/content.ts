import { FetchError, httpFetch, type FetchErrorCode, type HttpFetchOptions } from './http-fetch';
import { htmlToMarkdown } from './html-to-markdown';
import type { PageMetadata } from './metadata';

/** Spec 001 WebContent. */
export interface WebContent {
  content: string;
  metadata?: PageMetadata;
}

/** Spec 001 FetchResult, plus `code` and `status` (ours) so programs need not parse `error`. */
export interface FetchResult {
  success: boolean;
  data?: WebContent;
  error?: string;
  code?: FetchErrorCode;
  status?: number;
}

/** Spec 001 FetchOptions: per-fetch timeout (ms) and extra request headers. */
export interface FetchOptions {
  timeout?: number;
  headers?: Record<string, string>;
}

/**
 * The whole fetch pipeline, without rate limiting: fetch, then HTML to Markdown, JSON
 * pretty-printed, plain text (and XML) as it is. Never throws: every failure is
 * `{ success: false, error, code }`.
 */
export async function fetchWebContent(url: string, options: HttpFetchOptions = {}): Promise<FetchResult> {
  try {
    const response = await httpFetch(url, options);
    const type = response.contentType.toLowerCase();
    if (/html/.test(type) || (type === '' && /^\s*</.test(response.text))) {
      let converted: ReturnType<typeof htmlToMarkdown>;
      try {
        converted = htmlToMarkdown(response.text, response.url);
      } catch (error) {
        // The network did its part: a page the converter chokes on is not a NETWORK_ERROR.
        return { success: false, error: `${response.url} was fetched but could not be converted to Markdown: ${(error as Error)?.message ?? String(error)}`, code: 'CONVERSION_FAILED' };
      }
      return { success: true, data: { content: converted.markdown, metadata: converted.metadata } };
    }
    if (/json/.test(type)) {
      let content = response.text;
      try {
        content = JSON.stringify(JSON.parse(response.text), null, 2);
      } catch {
        // Not valid JSON after all: return it as it came.
      }
      return { success: true, data: { content, metadata: { url: response.url } } };
    }
    return { success: true, data: { content: response.text, metadata: { url: response.url } } };
  } catch (error) {
    if (error instanceof FetchError) return { success: false, error: error.message, code: error.code, ...(error.status ? { status: error.status } : {}) };
    return { success: false, error: `fetch failed: ${(error as Error)?.message ?? String(error)}`, code: 'NETWORK_ERROR' };
  }
}
