import { ERROR_META_KEY } from '../../protocol/results';
import type { ToolResult } from '../../protocol/tool';
import type { ApiResponse } from './api-client';
import type { OperationEntry } from './operations';
import { follow, isObject, type RefContext } from './refs';

/**
 * Response headers a caller needs besides the body: where a made thing is, the next page and the
 * count, when to retry, the version to send back (`If-Match`), and where to poll a long-running
 * operation (Azure's 202s answer only `Azure-AsyncOperation` or `Operation-Location`).
 */
const SHOWN_HEADERS = ['location', 'content-location', 'link', 'retry-after', 'content-range', 'etag', 'last-modified', 'x-total-count', 'azure-asyncoperation', 'operation-location'];
/** Never shown, even when a description declares them: credentials, or what the body already says. */
const NEVER_SHOWN = new Set(['set-cookie', 'content-type', 'content-length', 'content-encoding', 'transfer-encoding', 'connection', 'date']);
/** Declared headers kept per operation. */
const MAX_DECLARED = 20;
/** Characters of the headers block. */
const MAX_HEADER_CHARS = 2_000;
/** Characters of one header's value in the block. */
const MAX_VALUE_CHARS = 500;
/** Characters of `Retry-After` named in an error's message. */
const MAX_RETRY_AFTER_CHARS = 64;

/**
 * The names (lower case) of the response headers an operation's responses declare, at most 20;
 * undefined when none. Read at compile time, since calls never load the description.
 */
export function declaredResponseHeaders(entry: OperationEntry, ctx: RefContext): string[] | undefined {
  const names = new Set<string>();
  try {
    // Each ref against its own document: the operation's, then the responses map's (another file's, maybe).
    const { value: responses, uri } = follow(entry.operation.responses, ctx, entry.uri);
    if (!isObject(responses)) return undefined;
    for (const raw of Object.values(responses)) {
      const response = follow(raw, ctx, uri).value;
      if (!isObject(response) || !isObject(response.headers)) continue;
      for (const name of Object.keys(response.headers)) if (!NEVER_SHOWN.has(name.toLowerCase())) names.add(name.toLowerCase());
    }
  } catch {
    // A response $ref that does not resolve: the headers it might declare are unknown.
  }
  return names.size > 0 ? [...names].slice(0, MAX_DECLARED) : undefined;
}

/**
 * A 2xx result with a second text block of the response headers that carry meaning beyond the
 * body (SHOWN_HEADERS, those the operation declares, `declared`, and the rate limit once it runs
 * low); for HEAD, whose answer is only headers, all of them but `Set-Cookie`. An error result
 * names `Retry-After` and an exhausted rate limit in its message, with the seconds until an HTTP
 * date, and carries the wait as `retryAfterSeconds` in its `_meta` error data.
 * Decision: a block of its own, so the first block stays the body as it came (JSON that parses).
 */
export function withHeaders(result: ToolResult, response: ApiResponse, declared: readonly string[] = []): ToolResult {
  if (result.isError) {
    const retry = response.headers['retry-after'];
    // A valid value is seconds or an HTTP date (29 characters); 10 KB of one went into the message whole.
    const shown = retry !== undefined && retry.length > MAX_RETRY_AFTER_CHARS ? `${retry.slice(0, MAX_RETRY_AFTER_CHARS)}…` : retry;
    const wait = retry === undefined ? undefined : retryAfterSeconds(retry);
    const notes = [shown === undefined ? '' : ` [retry-after: ${shown}${datedWait(retry, wait)}]`, rateLimitNote(response.headers)].join('');
    const first = result.content[0];
    if (notes === '' || first?.type !== 'text') return result;
    return withRetryData({ ...result, content: [{ type: 'text', text: `${first.text}${notes}` }, ...result.content.slice(1)] }, wait);
  }
  const names = response.method === 'HEAD' ? Object.keys(response.headers).filter((name) => name !== 'set-cookie') : [...new Set([...SHOWN_HEADERS, ...declared, ...lowRateLimit(response.headers)])];
  const lines = names
    .filter((name) => response.headers[name] !== undefined && (response.method === 'HEAD' || !NEVER_SHOWN.has(name)))
    .map((name) => {
      const value = response.headers[name];
      const wait = name === 'retry-after' ? datedWait(value, retryAfterSeconds(value)) : '';
      return `${name}: ${value.length > MAX_VALUE_CHARS ? `${value.slice(0, MAX_VALUE_CHARS)}…` : value}${wait}`;
    });
  if (lines.length === 0) return result;
  let text = `response headers (HTTP ${response.status}):\n${lines.join('\n')}`;
  if (text.length > MAX_HEADER_CHARS) text = `${text.slice(0, MAX_HEADER_CHARS)}…`;
  return { ...result, content: [...result.content, { type: 'text', text }] };
}

/**
 * Seconds to wait that a `Retry-After` value says: its delay, or the time until its HTTP date (0
 * once passed); undefined for a value that is neither.
 */
export function retryAfterSeconds(value: string, now = Date.now()): number | undefined {
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  // An HTTP date has a day or month name; Date.parse alone reads "5" or "2027" as a year.
  const at = /[a-z]{3}/i.test(text) ? Date.parse(text) : NaN;
  return Number.isFinite(at) ? Math.max(0, Math.ceil((at - now) / 1000)) : undefined;
}

/**
 * `, in 90 s` after an HTTP date (`, already passed` for one past): the model reading the result
 * does not know the time, so a date alone did not tell it how long to wait. '' for seconds.
 */
function datedWait(value: string | undefined, wait: number | undefined): string {
  if (value === undefined || wait === undefined || /^\s*\d+\s*$/.test(value)) return '';
  return wait === 0 ? ', already passed' : `, in ${wait} s`;
}

/** An error result whose `_meta` error data carries `retryAfterSeconds`, for a program to wait on. */
function withRetryData(result: ToolResult, wait: number | undefined): ToolResult {
  const error = result._meta?.[ERROR_META_KEY] as { code: string; data?: Record<string, unknown> } | undefined;
  if (wait === undefined || error === undefined) return result;
  return { ...result, _meta: { ...result._meta, [ERROR_META_KEY]: { ...error, data: { ...error.data, retryAfterSeconds: wait } } } };
}

/**
 * The rate-limit headers present when few calls are left (at most a tenth of the limit, or 10
 * when the limit is not given): an assistant can slow down before it is refused. Otherwise none,
 * as GitHub sends them on every answer.
 */
function lowRateLimit(headers: Record<string, string>): string[] {
  for (const prefix of ['x-ratelimit-', 'ratelimit-']) {
    const remaining = Number(headers[`${prefix}remaining`]);
    if (headers[`${prefix}remaining`] === undefined || headers[`${prefix}remaining`].trim() === '' || !Number.isFinite(remaining)) continue;
    const limit = Number(headers[`${prefix}limit`]);
    const low = Number.isFinite(limit) && limit > 0 ? remaining <= Math.max(1, limit / 10) : remaining <= 10;
    return low ? ['remaining', 'limit', 'reset', 'used', 'resource'].map((part) => `${prefix}${part}`) : [];
  }
  return [];
}

/**
 * Whether a refusal is a rate limit rather than a refused credential: it says when to retry
 * (`Retry-After`), its rate limit is exhausted, or its text says so (GitHub's secondary rate
 * limit is a 403 "You have exceeded a secondary rate limit").
 */
export function isRateLimited(headers: Record<string, string>, text: string): boolean {
  return headers['retry-after'] !== undefined || rateLimitNote(headers) !== '' || /rate[ -]?limit/i.test(text.slice(0, 2_000));
}

/**
 * An exhausted rate limit, from GitHub's `x-ratelimit-*` or the IETF draft's `ratelimit-*`
 * headers: a 403 for it otherwise reads as a refused token. '' when none is exhausted.
 */
function rateLimitNote(headers: Record<string, string>): string {
  const remaining = headers['x-ratelimit-remaining'] ?? headers['ratelimit-remaining'];
  if (remaining === undefined || remaining.trim() === '' || Number(remaining) !== 0) return '';
  const epoch = Number(headers['x-ratelimit-reset']);
  const delta = Number(headers['ratelimit-reset']);
  // Date's range ends at 8.64e15 ms: a bigger epoch is shown as it came.
  const at = headers['x-ratelimit-reset'] === undefined ? undefined : Math.abs(epoch) < 8.64e12 ? new Date(epoch * 1000).toISOString() : headers['x-ratelimit-reset'].slice(0, 64);
  // In how long too: the model does not know the time.
  const inSeconds = Number.isFinite(epoch) && Math.abs(epoch) < 8.64e12 ? `, in ${Math.max(0, Math.ceil(epoch - Date.now() / 1000))} s` : '';
  const reset = at !== undefined ? `, resets at ${at}${inSeconds}` : Number.isFinite(delta) && headers['ratelimit-reset'] !== undefined ? `, resets in ${delta} s` : '';
  return ` [rate limit exhausted${reset}]`;
}
