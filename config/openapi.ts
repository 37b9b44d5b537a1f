import { z } from 'zod';
import { timerMs } from './timer-ms';
import { HEADER_NAME, HEADER_VALUE } from '../protocol/http-headers';
import { ipv6UrlHint } from '../protocol/ipv6-url';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

/** Words that turn the spec cache off where a directory may be written (`./off` is a directory). */
export const SPEC_CACHE_OFF = /^\s*(off|false|none|no|disabled?)\s*$/i;

/**
 * `url` with its userinfo (`user:password@`, up to the authority's last `@`) shown as `***@`: for
 * logs. `loose` (for echoing a value that is not a valid URL): everything after a scheme-like
 * start (`https://`, or a mistyped `https//`, `https:/`) up to the last `@` of the text, since a
 * password with `/` or `#` breaks the URL's own structure and a mistyped scheme is no URL at all.
 */
export function maskCredentials(url: string, loose = false): string {
  return loose ? url.replace(/^([a-z][a-z0-9+.-]*:?\/+)?.*@/is, '$1***@') : url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1***@');
}

/**
 * `url` for a log line: its userinfo as `***@` and each query value as `***`. A base URL's query
 * often holds the API key (`?api_key=`), which upstream errors redact as well (README).
 */
export function maskUrlForLog(url: string): string {
  const masked = maskCredentials(url);
  const query = masked.indexOf('?');
  return query < 0 ? masked : masked.slice(0, query) + masked.slice(query).replace(/=[^&#]*/g, '=***');
}

/**
 * One entry of `apis`: spec 000's configuration object, less the transport fields, which belong
 * to the server as a whole. Each entry is served by its own api worker.
 */
export const apiSchema = z.strictObject({
  apiBaseUrl: z
    .string({ error: 'apiBaseUrl is required' })
    .url({ error: (issue) => `apiBaseUrl must be an absolute URL${ipv6UrlHint(issue.input)}` })
    .regex(/^https?:\/\//i, 'apiBaseUrl must be an http:// or https:// URL')
    // A fragment is never sent: every call would go to the base URL itself, path and query lost.
    .refine((url) => !url.includes('#'), 'apiBaseUrl may not have a #fragment (a query such as ?api-version=1 is kept on every call)'),
  openApiSpec: z.string().min(1).optional(),
  specInputMethod: z.enum(['url', 'file', 'stdin', 'inline']).default('url'),
  /** What inline content is called in messages (openapi-mcp-server sets `standard input`). */
  specSource: z.string().min(1).max(200).optional(),
  name: z.string().min(1).default('openapi-mcp-server'),
  version: z.string().min(1).default('1.0.0'),
  namespace: z
    .string()
    .regex(/^[a-z0-9-]{1,20}$/, 'namespace must be 1-20 characters of [a-z0-9-]')
    .optional(),
  /** Sent upstream with every request; checked here, so that a bad one stops the start, not every call. */
  headers: z
    .record(
      z.string().regex(HEADER_NAME, 'a header name must be a token (letters, digits and !#$%&\'*+.^_`|~-)'),
      z.string().regex(HEADER_VALUE, 'a header value may not hold a line break, a control character or a character beyond Latin-1'),
    )
    .optional(),
  /**
   * Names (any case) of configured headers, base URL query parameters or auth provider headers
   * that carry no credential (`X-Tenant`, `region`): the upstream's echo of their values is shown
   * as it is instead of `[redacted: <Name>]` (workers/openapi/redact.ts).
   */
  notCredentials: z.array(z.string().trim().min(1, 'a notCredentials name may not be empty').max(256)).max(256).optional(),
  toolsMode: z.enum(['all', 'dynamic', 'explicit']).default('all'),
  includeTools: z.array(z.string()).optional(),
  includeTags: z.array(z.string()).optional(),
  includeResources: z.array(z.string()).optional(),
  // Any case, as the CLI and the filter take them (`get`); kept upper case.
  includeOperations: z.array(z.string().transform((m) => m.toUpperCase()).pipe(z.enum(HTTP_METHODS))).optional(),
  /** Tags (any case) whose operations are left out in every mode (the reference's `excludeTags`; tools-manager.ts). */
  excludeTags: z.array(z.string()).optional(),
  disableAbbreviation: z.boolean().default(false),
  /**
   * Directory of compiled descriptions (workers/openapi/spec-cache.ts), or false for none.
   * Default `$XDG_CACHE_HOME/mcpvisor/openapi`, else `~/.cache/mcpvisor/openapi`.
   */
  specCache: z.preprocess(
    (value) => (typeof value === 'string' && SPEC_CACHE_OFF.test(value) ? false : value),
    z.union([z.string().min(1), z.literal(false)], { error: 'specCache must be a directory path or false' }),
  ).optional(),
  requestTimeoutMs: timerMs().default(30_000),
  maxResponseBytes: z.number().int().positive().default(10 * 1024 * 1024),
  /**
   * Bytes one tool result may carry (text and structuredContent); a longer one is cut, saying so.
   * The MCP SDK's stdio client drops a connection on a message over 10 MiB.
   */
  maxResultBytes: z.number().int().min(1024).max(8 * 1024 * 1024).default(2 * 1024 * 1024),
  workers: z.number().int().min(1).max(16).default(1),
  /** Same-origin redirects an upstream request follows; cross-origin ones are never followed. */
  maxRedirects: z.number().int().min(0).max(20).default(5),
  /** Calls one api worker runs at once (I/O bound). */
  concurrency: z.number().int().min(1).max(1000).default(64),
  /**
   * false: this API's pool without a live worker (crash loop, a description changed since the
   * start) does not turn /health 503; it is still listed there with its state. With several
   * APIs behind a balancer, one broken API then does not take the others out of rotation. Nor
   * does one that cannot start stop the server: it is left out, `failed` in /health.
   */
  affectsHealth: z.boolean().default(true),
});

export type ApiConfig = z.infer<typeof apiSchema>;
