import { EventEmitter } from 'node:events';
import type { Dispatcher } from 'undici';
import { extraCaConnect } from '../../protocol/extra-ca-certs';
import { undici } from './lazy';
import { McpvisorError } from '../../protocol/errors';
import { isAuthProvider, type IAuthProvider } from './auth';
import type { BuiltRequest } from './request';
import { checkUrl } from './request';
import { headerText } from '../common/charset';
import { ContentCodingError, decodeContent } from '../common/content-coding';
import { sendRetryingStale } from '../common/stale-connection';
import { networkReason } from './network-reason';
import { brokenBody, readCapped, unendedBody, type Answer } from './response-body';
import { decodedQueryPart, queryCredentials, type SentCredential } from './redact';
import { flatHeaders, joinCookies, lowerKeys } from './upstream-headers';
import { packageVersion } from '../../protocol/version';

/** Most bytes of response headers read; past it the call fails naming undici's UND_ERR_HEADERS_OVERFLOW. */
const MAX_RESPONSE_HEADER_BYTES = 64 * 1024;

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Limits of upstream requests. */
export interface ApiClientOptions {
  /** Whole request budget, headers and body, ms; default 30,000. */
  requestTimeoutMs?: number;
  /** Bytes of a response body kept; the rest is cut and `truncated` set. Default 10 MB. */
  maxResponseBytes?: number;
  /** Same-origin redirects followed; default 5. A cross-origin one is never followed: it is the answer. */
  maxRedirects?: number;
  /** Connections per upstream origin; default 128. */
  connections?: number;
  /**
   * Names (any case) of configured headers, base URL query parameters and provider headers that
   * carry no credential: left out of SendOptions.sent, so their echoes are not redacted.
   */
  notCredentials?: readonly string[];
}

/** Options of one request. */
export interface SendOptions {
  signal?: AbortSignal;
  /** Filled with the configured headers and base query, and the provider's headers of each attempt (redact.ts). */
  sent?: SentCredential[];
}

/** An upstream answer, body cut at the cap. */
export interface ApiResponse {
  status: number;
  /** The method of the request answered (a 303 turns POST into GET). */
  method: string;
  headers: Record<string, string>;
  body: Buffer;
  truncated: boolean;
  url: string;
}

const RETRYABLE_AUTH = new Set([401, 403]);

/**
 * Sends requests to one upstream API with undici. Static headers and the provider's headers are
 * added to every request (the provider's win over both, see #headersFor); credentials in the base URL
 * (`https://user:password@host`) are sent as Basic auth unless an Authorization header is
 * configured, and never appear in a URL we report; nor do the values of the base URL's own query. On 401/403 the provider's `handleAuthError`
 * decides whether to retry, once. Errors: TIMEOUT (our budget), NETWORK_ERROR (DNS, refused, reset; the
 * message carries undici's code), UPSTREAM_ERROR (a failing `getAuthHeaders` or `handleAuthError`, too many
 * redirects), BLOCKED (a URL outside the base), CANCELLED (the caller's signal).
 */
export class ApiClient {
  readonly baseUrl: string;
  readonly #auth?: IAuthProvider;
  readonly #headers: Record<string, string>;
  readonly #options: Required<Omit<ApiClientOptions, 'notCredentials'>>;
  /** ApiClientOptions.notCredentials, lower case. */
  readonly #notCredentials: Set<string>;
  /** Made on the first request: loading undici would cost a worker's start ~40 ms otherwise. */
  #dispatcher?: Dispatcher;
  #closed = false;
  /** Names of the base URL's own query parameters: their values are configuration, often a key. */
  readonly #baseQueryNames: Set<string>;
  /** The configured headers and base URL query parameters, for SendOptions.sent. */
  readonly #configured: SentCredential[];

  constructor(baseUrl: string, authProvider?: IAuthProvider, headers?: Record<string, string>, options: ApiClientOptions = {}) {
    const base = new URL(baseUrl);
    if (base.hash !== '') throw new McpvisorError('BAD_INPUT', 'the API base URL may not have a #fragment: calls would lose their path');
    const credentials = `${decoded(base.username)}:${decoded(base.password)}`;
    const basic = credentials === ':' ? undefined : `Basic ${Buffer.from(credentials).toString('base64')}`;
    base.username = '';
    base.password = '';
    // Trailing slashes of the path only: `?next=/` keeps its slash.
    const query = base.search;
    this.#baseQueryNames = new Set(queryNames(query));
    base.search = '';
    this.baseUrl = base.href.replace(/\/+$/, '') + query;
    if (authProvider !== undefined && !isAuthProvider(authProvider)) throw new TypeError('authProvider must implement getAuthHeaders and handleAuthError');
    this.#auth = authProvider;
    this.#headers = lowerKeys(headers ?? {});
    if (basic !== undefined) this.#headers.authorization ??= basic;
    this.#notCredentials = new Set((options.notCredentials ?? []).map((name) => name.toLowerCase()));
    this.#configured = [...Object.entries(this.#headers).map(([name, value]): SentCredential => ({ name, value, in: 'header' })), ...queryCredentials(query)].filter(
      (credential) => !this.#notCredentials.has(credential.name.toLowerCase()),
    );
    this.#options = {
      requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
      maxResponseBytes: options.maxResponseBytes ?? 10 * 1024 * 1024,
      maxRedirects: options.maxRedirects ?? 5,
      connections: options.connections ?? 128,
    };
  }

  /**
   * spec 000's convenience form: `params` go to the query string for GET/HEAD/DELETE/OPTIONS and
   * into a JSON body otherwise. `path` is relative to the base URL.
   */
  async request(method: string, path: string, params?: Record<string, unknown>, headers?: Record<string, string>, options: SendOptions = {}): Promise<ApiResponse> {
    const url = this.#urlFor(path);
    const upper = method.toUpperCase();
    let body: string | undefined;
    const hs: Record<string, string> = lowerKeys(headers ?? {});
    if (params && ['GET', 'HEAD', 'DELETE', 'OPTIONS'].includes(upper)) {
      // A name given replaces the base URL's pairs of that name, as in tool calls (request.ts).
      for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && url.searchParams.has(key)) url.searchParams.delete(key);
      for (const [key, value] of Object.entries(params)) {
        if (Array.isArray(value)) for (const item of value) url.searchParams.append(key, String(item));
        else if (value !== undefined && value !== null) url.searchParams.append(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
      }
    } else if (params) {
      body = JSON.stringify(params);
      hs['content-type'] ??= 'application/json';
    }
    return this.send({ method: upper, url: url.href, headers: hs, body }, options);
  }

  /** Sends a built request with auth, timeout, size cap and redirects. */
  async send(req: BuiltRequest, options: SendOptions = {}): Promise<ApiResponse> {
    checkUrl(req.url, this.baseUrl);
    options.sent?.push(...this.#configured);
    let response = await this.#once(req, options.signal, options.sent);
    if (RETRYABLE_AUTH.has(response.status) && this.#auth) {
      let retry: boolean;
      try {
        retry = await this.#auth.handleAuthError({
          status: response.status,
          body: response.body.subarray(0, 2000).toString('utf8'),
          method: req.method,
          url: response.url,
          response: { status: response.status, headers: response.headers },
        });
      } catch (error) {
        throw new McpvisorError('UPSTREAM_ERROR', `authentication error (HTTP ${response.status}): ${(error as Error)?.message ?? String(error)}`, { data: { status: response.status, auth: true } });
      }
      if (retry) response = await this.#once(req, options.signal, options.sent);
    }
    return response;
  }

  /** True when the base URL answers at all (any HTTP status); false on network errors. */
  async testConnection(options: { signal?: AbortSignal } = {}): Promise<boolean> {
    try {
      await this.#once({ method: 'HEAD', url: this.#urlFor('').href, headers: {} }, options.signal);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#dispatcher?.close();
  }

  /** `path` under the base URL, the base's own query (`?api-version=1`) first. */
  #urlFor(path: string): URL {
    const base = new URL(this.baseUrl);
    const search = base.search;
    base.search = '';
    const url = new URL(`${base.href.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`);
    if (search !== '') url.search = url.search === '' ? search : `${search}&${url.search.slice(1)}`;
    return url;
  }

  /**
   * `url` for a message the model reads: the values of the parameters the base URL sets are `…`
   * (an operator's `?api_key=`, which the model never gave and should not see or repeat).
   */
  #shown(url: string): string {
    const at = url.indexOf('?');
    if (at < 0 || this.#baseQueryNames.size === 0) return url;
    const query = url.slice(at + 1).split('&').map((pair) => {
      const name = pair.split('=', 1)[0];
      return this.#baseQueryNames.has(decodedQueryPart(name)) ? `${name}=…` : pair;
    });
    return `${url.slice(0, at)}?${query.join('&')}`;
  }

  #withinBase(url: string): boolean {
    try {
      checkUrl(url, this.baseUrl);
      return true;
    } catch {
      return false;
    }
  }

  #agent(): Dispatcher {
    if (this.#closed) throw new McpvisorError('SHUTTING_DOWN', 'the API client is closed');
    // Response headers up to 64 KiB (undici's default is Node's 16 KiB): APIs behind gateways send
    // long cookies, CSPs and Link lists, and past the limit the whole answer was lost.
    // undici's own headers and body timeouts (300 s each by default) are off: requestTimeoutMs is
    // the one deadline, and past 300 s they failed a slow answer (a long report, a model's
    // completion) as a NETWORK_ERROR the operator had allowed time for.
    return (this.#dispatcher ??= new (undici().Agent)({
      connections: this.#options.connections,
      keepAliveTimeout: 10_000,
      maxHeaderSize: MAX_RESPONSE_HEADER_BYTES,
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: extraCaConnect(undici().buildConnector),
    }));
  }

  /**
   * A default `User-Agent`, then the request's headers, then the configured ones, then the
   * provider's (any of them may set its own User-Agent): configured credentials
   * are never replaced by a tool argument of the same name. Two exceptions: cookies of all three
   * add up (of one name, the later source's), and the body's own content type stays (a multipart
   * body's is written by undici, with its boundary).
   */
  /**
   * The provider's headers. Its failure, or an answer that is not an object, is an UPSTREAM_ERROR
   * naming it, as a thrown `handleAuthError` is (a library caller got a bare TypeError or the
   * provider's own Error, without a code). A header whose value is undefined or null is not sent:
   * it went out as the text "undefined" (`{ Authorization: token }` before a token came).
   */
  async #providerHeaders(auth: IAuthProvider): Promise<Record<string, string>> {
    let headers: unknown;
    try {
      headers = await auth.getAuthHeaders();
    } catch (error) {
      throw new McpvisorError('UPSTREAM_ERROR', `authentication error: getAuthHeaders() failed: ${(error as Error)?.message ?? String(error)}`, { data: { auth: true } });
    }
    if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) {
      const got = headers === null ? 'null' : Array.isArray(headers) ? 'an array' : typeof headers;
      throw new McpvisorError('UPSTREAM_ERROR', `authentication error: getAuthHeaders() must resolve to an object of header names to values, got ${got}`, { data: { auth: true } });
    }
    const given = Object.entries(headers).filter(([, value]) => value !== undefined && value !== null);
    for (const [name, value] of given) {
      // undici refuses these on every request as a network error ("invalid header"): the
      // provider's mistake, named (the value is a credential: not shown).
      if (!HEADER_NAME.test(name)) throw new McpvisorError('UPSTREAM_ERROR', `authentication error: getAuthHeaders() gave a header name no HTTP request can carry: ${JSON.stringify(name.slice(0, 100))}`, { data: { auth: true } });
      if (/[\r\n\0]/.test(String(value))) throw new McpvisorError('UPSTREAM_ERROR', `authentication error: getAuthHeaders() gave header '${name}' a value with a line break or NUL, which no HTTP request can carry; nothing was sent`, { data: { auth: true } });
    }
    return Object.fromEntries(given) as Record<string, string>;
  }

  async #headersFor(req: BuiltRequest, sent?: SentCredential[]): Promise<Record<string, string>> {
    const fromAuth = this.#auth ? lowerKeys(await this.#providerHeaders(this.#auth)) : {};
    if (sent) for (const [name, value] of Object.entries(fromAuth)) if (!this.#notCredentials.has(name)) sent.push({ name, value, in: 'header' });
    const headers: Record<string, string> = { 'user-agent': userAgent(), ...req.headers, ...this.#headers, ...fromAuth };
    const cookie = joinCookies([req.headers.cookie, this.#headers.cookie, fromAuth.cookie]);
    if (cookie !== undefined) headers.cookie = cookie;
    if (req.body !== undefined) {
      if (req.headers['content-type'] !== undefined) headers['content-type'] = req.headers['content-type'];
      else if (req.body instanceof FormData) delete headers['content-type'];
    }
    return headers;
  }

  async #once(req: BuiltRequest, signal: AbortSignal | undefined, sent?: SentCredential[]): Promise<ApiResponse> {
    if (signal?.aborted) throw signal.reason;
    const headers = await this.#headersFor(req, sent);
    // The caller may have given up while the provider was asked for headers.
    if (signal?.aborted) throw signal.reason;
    // One abort for undici, one timer, one listener, all released in `finally`.
    const combined = new RequestAbort();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      combined.abort();
    }, this.#options.requestTimeoutMs);
    const onAbort = () => combined.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let url = req.url;
    let method = req.method;
    let body: unknown = toUndiciForm(req.body);
    // Set once an answer's headers came: a failure after it says so (response-body.ts).
    let answer: Answer | undefined;
    try {
      for (let hop = 0; ; hop++) {
        const options = { method: method as Dispatcher.HttpMethod, headers, body: body as Dispatcher.RequestOptions['body'], signal: combined as unknown as AbortSignal, dispatcher: this.#agent() };
        const res = await sendRetryingStale(() => undici().request(url, options), method, body, combined);
        if (res.statusCode >= 300 && res.statusCode < 400 && res.statusCode !== 304 && res.headers.location) {
          await res.body.dump();
          const next = new URL(headerText(String(res.headers.location)), url);
          // Followed only where a request could go itself (checkUrl: same origin, under the base
          // path), so the API's credentials stay with it: else the answer is the redirect itself,
          // whose Location is often the point (GitHub's archive downloads, presigned storage URLs).
          if (!this.#withinBase(next.href)) return { status: res.statusCode, method, headers: flatHeaders(res.headers), body: Buffer.alloc(0), truncated: false, url };
          if (hop >= this.#options.maxRedirects) throw new McpvisorError('UPSTREAM_ERROR', `more than ${this.#options.maxRedirects} redirects`, { data: { status: res.statusCode } });
          // 303: GET, but a HEAD stays a HEAD (RFC 9110 15.4.4).
          if ((res.statusCode === 303 && method !== 'HEAD') || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
            method = 'GET';
            body = undefined;
            delete headers['content-type'];
          }
          url = next.href;
          continue;
        }
        // A declared length within the cap (undici holds the server to it): read in one go, which
        // costs less than iterating the stream; otherwise count while reading.
        const declared = Number(res.headers['content-length']);
        const answered = flatHeaders(res.headers);
        answer = { status: res.statusCode, type: answered['content-type'], declared: res.headers['content-length'] === undefined ? undefined : declared, bytes: undefined };
        let { body: data, truncated } =
          declared >= 0 && declared <= this.#options.maxResponseBytes
            ? { body: Buffer.from(await res.body.arrayBuffer()), truncated: false }
            : await readCapped(res.body, this.#options.maxResponseBytes, (answer.bytes = { count: 0 }));
        if (answered['content-encoding'] !== undefined && data.length > 0) {
          ({ body: data, truncated } = await decodeContent(data, answered['content-encoding'], this.#options.maxResponseBytes, truncated).catch((error: unknown) => {
            // The status too: a POST answered 201 with a body that does not decode was acted on.
            throw error instanceof ContentCodingError ? new McpvisorError('UPSTREAM_ERROR', `the API answered HTTP ${res.statusCode}, but ${error.message}`, { data: { status: res.statusCode } }) : error;
          }));
          delete answered['content-encoding'];
        }
        return { status: res.statusCode, method, headers: answered, body: data, truncated, url };
      }
    } catch (error) {
      if (error instanceof McpvisorError) throw error;
      if (signal?.aborted) throw signal.reason;
      const status = answer === undefined ? {} : { status: answer.status };
      if (timedOut) throw new McpvisorError('TIMEOUT', `the upstream request timed out after ${this.#options.requestTimeoutMs} ms (${method} ${this.#shown(url)})${answer === undefined ? '' : `: ${unendedBody(answer)}`}`, answer === undefined ? {} : { data: status });
      const code = (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
      const after = answer === undefined ? '' : `${brokenBody(answer)}: `;
      // "Headers Overflow Error" did not say whose headers, nor the limit.
      const overflow = code === 'UND_ERR_HEADERS_OVERFLOW' ? ` (the API's response headers passed ${MAX_RESPONSE_HEADER_BYTES / 1024} KiB, the most read)` : '';
      throw new McpvisorError('NETWORK_ERROR', `network error calling ${method} ${this.#shown(url)}: ${after}${networkReason(error)}${overflow}`, { data: { code, ...status } });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

/**
 * What aborts one upstream request: undici takes an EventEmitter with `aborted` and `reason` as a
 * request's `signal` (documented as `AbortSignal | EventEmitter`). An AbortSignal costs ~5 µs to
 * create in Node 20 (each new one has its prototype changed), and its listeners more than an
 * emitter's; this is one per tools/call.
 */
class RequestAbort extends EventEmitter {
  aborted = false;
  reason: unknown;

  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

let agentName: string | undefined;

/**
 * `mcpvisor/<version>`. Some APIs refuse a request without a User-Agent (GitHub answers 403), and
 * undici's `request` sends none.
 */
function userAgent(): string {
  return (agentName ??= `mcpvisor/${packageVersion()}`);
}

/** swagger-client builds Node's global FormData, which undici 7's `request` cannot send: copy it. */
function toUndiciForm(body: BuiltRequest['body']): unknown {
  if (!(body instanceof FormData) || (body as unknown) instanceof undici().FormData) return body;
  const form = new (undici().FormData)();
  (body as unknown as { forEach(fn: (value: unknown, name: string) => void): void }).forEach((value, name) => form.append(name, value as string | Blob));
  return form;
}

/** The decoded names of a query string's parameters (`?a=1&b` → a, b). */
function queryNames(search: string): string[] {
  return search.replace(/^\?/, '').split('&').filter((pair) => pair !== '').map((pair) => decodedQueryPart(pair.split('=', 1)[0]));
}

/** A percent-encoded part of a URL (user info), decoded; as it is when its encoding is broken (`%zz`). */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
