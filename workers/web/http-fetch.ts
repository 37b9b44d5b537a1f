import { isIP } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { ALLOW_PRIVATE_HINT, BLOCKED_ADDRESS_CODE, guardedLookup, isBlockedAddress } from '../common/address-guard';
import { decodeBody } from './charset';
import { capText } from './metadata';
import { headerText } from '../common/charset';
import { ContentCodingError, decodeContent } from '../common/content-coding';
import { sendRetryingStale } from '../common/stale-connection';
import { ipv6UrlHint } from '../../protocol/ipv6-url';

/** Why a fetch failed, stable for programs; the message is for people. */
export type FetchErrorCode =
  | 'INVALID_URL' | 'BLOCKED' | 'DNS_FAILURE' | 'CONNECTION_REFUSED' | 'TIMEOUT' | 'HTTP_ERROR'
  | 'TOO_LARGE' | 'TOO_MANY_REDIRECTS' | 'UNSUPPORTED_TYPE' | 'NETWORK_ERROR' | 'CANCELLED'
  /** A library caller's timeout or headers cannot be used (nothing was sent). */
  | 'INVALID_OPTIONS'
  /** The page came but could not be converted (set by content.ts, never by httpFetch). */
  | 'CONVERSION_FAILED';

export class FetchError extends Error {
  constructor(readonly code: FetchErrorCode, message: string, readonly status?: number) {
    super(message);
  }
}

export interface HttpFetchOptions {
  /** Whole fetch budget in ms, every redirect hop and the body included. Default 15000. */
  timeoutMs?: number;
  headers?: Record<string, string>;
  /** Body cap in bytes, counted while streaming; past it the socket is closed. Default 10 MB. */
  maxBodyBytes?: number;
  /** Default 5. */
  maxRedirects?: number;
  /** Let the fetch reach loopback/private/link-local addresses. Default false. */
  allowPrivateNetwork?: boolean;
  method?: 'GET' | 'POST';
  body?: string;
  /**
   * Tell binary bodies from text (default true): a body of a binary type, or one whose bytes
   * are binary whatever its label, comes back undecoded as `binary` (cut at the body cap rather
   * than refused), for a summary. False (HttpClient): every body is decoded as text.
   */
  textOnly?: boolean;
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  /** The URL of the last hop. */
  url: string;
  contentType: string;
  text: string;
  charset: string;
  bytes: number;
  /** A binary body (textOnly): `text` is ''. */
  binary?: BinaryBody;
}

/** A body that is not text, as read: at most the body cap of it. */
export interface BinaryBody {
  /** The bytes read, decoded from their Content-Encoding. */
  body: Buffer;
  /** Past the body cap: `body` is its head, `bytes` what was declared or read. */
  cut: boolean;
  /** The Content-Disposition header, when there was one. */
  disposition?: string;
}

export const DEFAULT_USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36 mcpvisor';
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const guardedAgent = new Agent({ connect: { lookup: guardedLookup as never }, keepAliveTimeout: 4_000 });
const openAgent = new Agent({ keepAliveTimeout: 4_000 });

/**
 * GETs a URL with undici. Redirects are followed by hand so each hop's URL is checked and its
 * connection goes through the guarded DNS lookup again. Throws `FetchError` with a code for every
 * failure: HTTP status >= 400 is `HTTP_ERROR` (spec 001: an error status is a failed fetch).
 */
export async function httpFetch(rawUrl: string, options: HttpFetchOptions = {}): Promise<HttpResponse> {
  const timeoutMs = checkTimeout(options.timeoutMs, 'timeoutMs') ?? 15_000;
  const maxBodyBytes = options.maxBodyBytes ?? 10 * 1024 * 1024;
  const maxRedirects = options.maxRedirects ?? 5;
  const allowPrivate = options.allowPrivateNetwork ?? false;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const dispatcher: Dispatcher = allowPrivate ? openAgent : guardedAgent;

  let url = parseHttpUrl(rawUrl);
  const origin = url.origin;
  let method = options.method ?? 'GET';
  let body = options.body;
  // The caller's headers replace the defaults whatever their case (`User-Agent` was sent twice).
  const sent: Record<string, string> = { 'user-agent': DEFAULT_USER_AGENT, accept: 'text/html,application/xhtml+xml,application/json,text/plain;q=0.9,*/*;q=0.5', 'accept-language': 'en-US,en;q=0.8' };
  for (const [name, value] of Object.entries(options.headers ?? {})) sent[name.toLowerCase()] = value;
  let sameOrigin = true;
  for (let hop = 0; ; hop++) {
    if (!allowPrivate && isIP(url.hostname.replace(/^\[|\]$/g, '')) && isBlockedAddress(url.hostname)) {
      throw new FetchError('BLOCKED', `${url.host} is a private, loopback, link-local or metadata address; refused${hop > 0 ? ' (reached by a redirect)' : ''}; ${ALLOW_PRIVATE_HINT}`);
    }
    let response: Dispatcher.ResponseData;
    try {
      const headers = sameOrigin ? sent : withoutCredentials(sent);
      response = await sendRetryingStale(() => request(url, { method, body, dispatcher, signal, headers }), method, body, signal);
    } catch (error) {
      throw toFetchError(error, url, timeout, timeoutMs, options.signal, hop > 0);
    }
    const { statusCode, headers } = response;
    if (REDIRECTS.has(statusCode) && headers.location) {
      discard(response.body);
      const location = headerText(String(headers.location));
      if (hop >= maxRedirects) throw new FetchError('TOO_MANY_REDIRECTS', `more than ${maxRedirects} redirects, last to ${location}`);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new FetchError('INVALID_URL', `redirect to an invalid URL: ${location.slice(0, 200)}`);
      }
      // The caller's URL was fine: a hop to file:, data: … is the site's doing, refused as the
      // SSRF guard refuses a hop to a private address (BLOCKED, saying it came by a redirect).
      if (next.protocol !== 'http:' && next.protocol !== 'https:') {
        throw new FetchError('BLOCKED', `${url.href} redirected to a ${next.protocol} URL ('${next.href.slice(0, 200)}'); refused (reached by a redirect): only http and https are followed`);
      }
      url = next;
      // Credentials stay with the origin they were given for (Fetch, "HTTP-redirect fetch").
      sameOrigin &&= url.origin === origin;
      if (statusCode === 303 || ((statusCode === 301 || statusCode === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
      continue;
    }
    const contentType = String(headers['content-type'] ?? '');
    if (statusCode >= 400) throw await statusError(response, statusCode, url, contentType);
    const textOnly = options.textOnly ?? true;
    // Decision: a binary type is read (to the cap) and summarised, not refused unread: an image's
    // size and dimensions, a PDF's pages, an archive's files tell the caller what is there.
    const binaryType = textOnly && !isTextual(contentType);
    const disposition = headers['content-disposition'] === undefined ? undefined : String(headers['content-disposition']);
    const binary = (body: Buffer, cut: boolean, bytes: number): HttpResponse => ({ status: statusCode, url: url.href, contentType, text: '', charset: '', bytes, binary: { body, cut, ...(disposition ? { disposition } : {}) } });
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBodyBytes) {
      discard(response.body);
      if (binaryType) return binary(Buffer.alloc(0), true, declared);
      throw new FetchError('TOO_LARGE', `the body of ${url.href} is ${declared} bytes, over the ${maxBodyBytes}-byte cap`);
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    let cut = false;
    try {
      for await (const chunk of response.body) {
        bytes += (chunk as Buffer).length;
        if (bytes > maxBodyBytes) {
          discard(response.body);
          if (!binaryType) throw new FetchError('TOO_LARGE', `the body of ${url.href} is over the ${maxBodyBytes}-byte cap`);
          bytes -= (chunk as Buffer).length;
          cut = true;
          break;
        }
        chunks.push(chunk as Buffer);
      }
    } catch (error) {
      throw error instanceof FetchError ? error : toFetchError(error, url, timeout, timeoutMs, options.signal, false);
    }
    let raw: Buffer = Buffer.concat(chunks, bytes);
    const coding = headers['content-encoding'];
    if (coding !== undefined && raw.length > 0) {
      // A request without Accept-Encoding lets a server compress anyway (RFC 9110 12.5.3), and
      // CDNs do: the compressed bytes were returned as the page.
      let decoded: { body: Buffer; truncated: boolean };
      try {
        decoded = await decodeContent(raw, String(coding), maxBodyBytes, cut);
      } catch (error) {
        if (!(error instanceof ContentCodingError)) throw error;
        throw new FetchError(error.kind === 'unsupported' ? 'UNSUPPORTED_TYPE' : 'NETWORK_ERROR', `${url.href}: ${error.message}`);
      }
      if (decoded.truncated && !binaryType) throw new FetchError('TOO_LARGE', `the body of ${url.href} decompresses to over the ${maxBodyBytes}-byte cap`);
      cut ||= decoded.truncated;
      raw = decoded.body;
    }
    if (binaryType) return binary(raw, cut, cut ? Math.max(bytes, raw.length) : raw.length);
    // Binary bytes under a text label (an image sent as text/html) came out as mojibake: WHATWG
    // MIME Sniffing's binary test, as for an untyped body. UTF-16 and UTF-32 text holds NUL bytes.
    if (textOnly && !/charset\s*=\s*"?utf-?(16|32)/i.test(contentType) && looksBinary(raw)) return binary(raw, false, raw.length);
    const decoded = decodeBody(raw, contentType);
    return { status: statusCode, url: url.href, contentType, text: decoded.text, charset: decoded.charset, bytes };
  }
}

/** Bytes of an error answer read for its problem details: they are a few hundred. */
const PROBLEM_MAX_BYTES = 16 * 1024;

/**
 * HTTP_ERROR for a status >= 400. A Problem Details answer (RFC 9457,
 * `application/problem+json`) adds its `title` and `detail` to the message, on one line, 300
 * characters at most: "HTTP 404" alone hid the API's own reason ("Item 42 is no longer
 * available"). Any other error body is not read.
 */
async function statusError(response: Dispatcher.ResponseData, status: number, url: URL, contentType: string): Promise<FetchError> {
  const plain = new FetchError('HTTP_ERROR', `HTTP ${status} from ${url.href}`, status);
  if (!/^application\/problem\+json\b/i.test(contentType) || response.headers['content-encoding'] !== undefined) {
    discard(response.body);
    return plain;
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of response.body) {
      chunks.push(chunk as Buffer);
      bytes += (chunk as Buffer).length;
      if (bytes > PROBLEM_MAX_BYTES) break;
    }
  } catch {
    return plain;
  } finally {
    discard(response.body);
  }
  let problem: { title?: unknown; detail?: unknown };
  try {
    problem = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof problem;
  } catch {
    return plain;
  }
  const reason = [problem?.title, problem?.detail].filter((part): part is string => typeof part === 'string' && part.trim() !== '').join(': ');
  if (reason.trim() === '') return plain;
  return new FetchError('HTTP_ERROR', `HTTP ${status} from ${url.href}: ${capText(reason, 300)}`, status);
}

/** Request headers without those that carry credentials, for a redirect to another origin. */
function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  const { authorization: _a, cookie: _c, 'proxy-authorization': _p, ...rest } = headers;
  return rest;
}

/** Parses and checks an absolute http(s) URL; throws INVALID_URL otherwise. */
export function parseHttpUrl(raw: string): URL {
  // As UTF-8 a lone surrogate became %EF%BF%BD: another address than the one given.
  if (typeof raw === 'string' && !(raw as string & { isWellFormed(): boolean }).isWellFormed()) {
    throw new FetchError('INVALID_URL', `invalid URL: '${raw.slice(0, 200)}' has a lone UTF-16 surrogate (half of a character), which a URL cannot carry`);
  }
  let url: URL;
  try {
    url = new URL(String(raw).trim());
  } catch {
    throw new FetchError('INVALID_URL', `invalid URL: '${String(raw).slice(0, 200)}'${ipv6UrlHint(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchError('INVALID_URL', `unsupported URL scheme ${url.protocol} in '${url.href.slice(0, 200)}'; only http and https`);
  }
  // undici sent none of them and the page came as to anyone; echoed in the answer, the password
  // went to the model. Refused, as Fetch refuses them; the message leaves them out.
  if (url.username !== '' || url.password !== '') {
    throw new FetchError('INVALID_URL', `a URL with credentials (user:password@ before ${url.host}) is refused: they would not be sent; fetch the page without them`);
  }
  return url;
}

/** The longest timer Node takes (AbortSignal.timeout), about 49.7 days. */
const MAX_TIMEOUT_MS = 2 ** 32 - 1;

/**
 * A caller's timeout in whole ms (a fraction rounded up), or undefined when none was given.
 * Throws INVALID_OPTIONS naming `name` for one that is not a positive number up to
 * MAX_TIMEOUT_MS: AbortSignal.timeout threw a RangeError about a "delay" the caller never
 * passed, which the fetcher then reported as a NETWORK_ERROR.
 */
export function checkTimeout(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !(value > 0) || value > MAX_TIMEOUT_MS) {
    throw new FetchError('INVALID_OPTIONS', `${name} must be a positive number of milliseconds up to ${MAX_TIMEOUT_MS}, got ${typeof value === 'number' ? value : `${typeof value} ${JSON.stringify(value)?.slice(0, 50)}`}`);
  }
  return Math.ceil(value);
}

/** Drops a body we will not read; undici reports the abort as an 'error' event, which we expect. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

function isTextual(contentType: string): boolean {
  // A body without a type is looked at once read (looksBinary).
  if (contentType === '') return true;
  return /^text\/|[/+](html|xml|json|javascript|ecmascript|x-ndjson)\b/i.test(contentType);
}

/**
 * Whether an untyped body is binary, by WHATWG MIME Sniffing ("distinguishing if a resource is
 * text or binary"): not when it starts with a UTF-8 or UTF-16 BOM, yes when its first 1,445 bytes
 * hold a control byte no text uses (NUL, 0x01-0x08, 0x0B, 0x0E-0x1A, 0x1C-0x1F: PNG, GIF, gzip,
 * ZIP, executables all do). A PDF may start in plain ASCII, so its signature is checked too.
 */
function looksBinary(body: Buffer): boolean {
  if ((body[0] === 0xfe && body[1] === 0xff) || (body[0] === 0xff && body[1] === 0xfe) || (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf)) return false;
  if (body.subarray(0, 5).toString('latin1') === '%PDF-') return true;
  const head = body.subarray(0, 1445);
  for (const byte of head) {
    if (byte <= 0x08 || byte === 0x0b || (byte >= 0x0e && byte <= 0x1a) || (byte >= 0x1c && byte <= 0x1f)) return true;
  }
  return false;
}

function toFetchError(error: unknown, url: URL, timeout: AbortSignal, timeoutMs: number, outer: AbortSignal | undefined, redirected: boolean): FetchError {
  const err = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err.code ?? err.cause?.code;
  const hop = redirected ? ' (reached by a redirect)' : '';
  if (code === BLOCKED_ADDRESS_CODE || err.cause?.code === BLOCKED_ADDRESS_CODE) {
    return new FetchError('BLOCKED', `${(err.cause?.code === BLOCKED_ADDRESS_CODE ? err.cause.message : err.message) ?? 'refused'}${hop}`);
  }
  // The caller's signal ends a fetch for a cancel, or at the call's deadline (a pool thread's
  // TIMEOUT): a call that waited in the queue starts with less budget than the fetch's own
  // 100 ms floor, and nobody had cancelled it.
  if (outer?.aborted) {
    if ((outer.reason as { code?: unknown } | undefined)?.code === 'TIMEOUT') return new FetchError('TIMEOUT', `${url.href} did not answer before the call's deadline`);
    return new FetchError('CANCELLED', `the fetch of ${url.href} was cancelled`);
  }
  // undici refuses a header name or value it cannot send (a line break in it): the caller's.
  if (code === 'UND_ERR_INVALID_ARG') return new FetchError('INVALID_OPTIONS', `the request to ${url.href} was not sent: ${err.message ?? String(error)}`);
  if (timeout.aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new FetchError('TIMEOUT', `${url.href} did not answer within ${timeoutMs} ms`);
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NODATA') return new FetchError('DNS_FAILURE', `DNS lookup of ${url.hostname} failed (${code})${hop}`);
  if (code === 'ECONNREFUSED') return new FetchError('CONNECTION_REFUSED', `connection to ${url.host} refused${hop}`);
  return new FetchError('NETWORK_ERROR', `fetching ${url.href} failed: ${code ?? ''} ${err.message ?? String(error)}`.replace(/\s+/g, ' '));
}
