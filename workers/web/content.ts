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
    if (/json/.test(type)) return { success: true, data: { content: prettyJson(response.text), metadata: { url: response.url } } };
    return { success: true, data: { content: response.text, metadata: { url: response.url } } };
  } catch (error) {
    if (error instanceof FetchError) return { success: false, error: error.message, code: error.code, ...(error.status ? { status: error.status } : {}) };
    return { success: false, error: `fetch failed: ${(error as Error)?.message ?? String(error)}`, code: 'NETWORK_ERROR' };
  }
}

/**
 * JSON indented by two spaces, when that at most quadruples it; otherwise, and when it is not
 * valid JSON, the text as it came. Indentation grows with depth on every line: 20 KB of arrays
 * nested 10,000 deep became 200,000,000 characters (a second and hundreds of MB of a fetch
 * thread's heap, for content paged 10,000 characters a call).
 */
function prettyJson(text: string): string {
  try {
    const value: unknown = JSON.parse(text);
    return indentationChars(value, 3 * text.length) <= 3 * text.length ? JSON.stringify(value, null, 2) : text;
  } catch {
    return text;
  }
}

/**
 * About the characters `JSON.stringify(value, null, 2)` adds to `value`'s compact form, counted
 * without building it (with a stack: no recursion), stopping once past `limit`.
 */
function indentationChars(value: unknown, limit: number): number {
  let added = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0 && added <= limit) {
    const { value: node, depth } = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    const members = Array.isArray(node) ? (node as unknown[]) : Object.values(node);
    if (members.length === 0) continue;
    // Each member on a line of its own, one level in (objects: a space after each colon); the
    // closing bracket on a line at this level.
    added += members.length * (2 + 2 * depth + (Array.isArray(node) ? 1 : 2)) + 1 + 2 * depth;
    for (const member of members) stack.push({ value: member, depth: depth + 1 });
  }
  return added;
}
