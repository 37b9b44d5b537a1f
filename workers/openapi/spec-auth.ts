import type { Dispatcher } from 'undici';
import { undici } from './lazy';

/** What a private API's description may be fetched with: the API's own static credentials. */
export interface SpecAuth {
  /** The API's base URL; its userinfo (`user:password@`) counts as Basic credentials, as for calls. */
  apiBaseUrl: string;
  /** The API's configured headers (`headers`, `--headers`, `API_HEADERS`). */
  headers?: Record<string, string>;
}

const ACCEPT = { accept: 'application/json, application/yaml, */*' };

/**
 * The headers a description document at `url` is requested with: the API's configured headers
 * (and its base URL's userinfo as `Authorization: Basic`, unless one is configured) when `url`
 * has the base URL's origin (scheme, host and port), else none. Decision: the origin, as browsers
 * scope credentials: a private API that serves its own description (`/openapi.json`) needs the
 * token its calls carry, and a description elsewhere (a docs site, a CDN, a third party's
 * `$ref`) must never see it. No option sends them further: download such a description and give
 * it as a file.
 */
export function specHeaders(url: string, auth: SpecAuth | undefined): Record<string, string> | undefined {
  if (auth === undefined) return undefined;
  let base: URL;
  let target: URL;
  try {
    base = new URL(auth.apiBaseUrl);
    target = new URL(url);
  } catch {
    return undefined;
  }
  if (base.origin !== target.origin) return undefined;
  const headers: Record<string, string> = { ...(auth.headers ?? {}) };
  const user = decodeURIComponent(base.username);
  const password = decodeURIComponent(base.password);
  const hasAuthorization = Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
  if ((user !== '' || password !== '') && !hasAuthorization) headers.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  return Object.keys(headers).length > 0 ? headers : undefined;
}

/** A description document's response, and whether the API's credentials went with its last request. */
export interface DocumentResponse {
  response: Dispatcher.ResponseData<unknown>;
  credentialed: boolean;
}

/**
 * GETs a description document. Without credentials for `url` (specHeaders), `dispatcher` follows
 * its redirects as it does. With them, redirects are followed here, at most `maxRedirects`: the
 * credentials go again only to the same origin, and a redirect elsewhere (a presigned storage URL)
 * is followed without them. undici's redirect interceptor drops only Authorization and Cookie on
 * another origin; an `X-Api-Key` went along.
 */
export async function requestDocument(url: string, options: { dispatcher: Dispatcher; signal: AbortSignal; maxRedirects: number; auth?: SpecAuth }): Promise<DocumentResponse> {
  const { dispatcher, signal, auth } = options;
  let current = url;
  for (let hop = 0; ; hop++) {
    const credentials = specHeaders(current, auth);
    if (credentials === undefined) return { response: await undici().request(current, { signal, dispatcher, headers: ACCEPT }), credentialed: false };
    // maxRedirections 0: the dispatcher's redirect interceptor lets this response through.
    const response = await undici().request(current, { signal, dispatcher, headers: { ...ACCEPT, ...credentials }, maxRedirections: 0 } as Parameters<ReturnType<typeof undici>['request']>[1]);
    const location = response.headers.location;
    if (response.statusCode < 300 || response.statusCode >= 400 || location === undefined || hop >= options.maxRedirects) return { response, credentialed: true };
    await response.body.dump();
    current = new URL(String(location), current).href;
  }
}

/**
 * Why a description document answered 401 or 403, and how to give the credentials it needs:
 * appended to `HTTP 401`. Names header names and origins, never a value.
 */
export function authAdvice(url: string, auth: SpecAuth | undefined, credentialed: boolean): string {
  if (credentialed) return "the API's configured headers were sent with it (same origin as apiBaseUrl) and refused: check the credentials";
  const origin = (text: string) => {
    try {
      return new URL(text).origin;
    } catch {
      return text;
    }
  };
  if (auth !== undefined && origin(auth.apiBaseUrl) === origin(url)) {
    return "the description needs authentication: configure the API's headers (--headers, --header, API_HEADERS, or headers in the config file), which are sent to a description on apiBaseUrl's origin";
  }
  const base = auth === undefined ? '' : ` (${origin(auth.apiBaseUrl)})`;
  return `the description needs authentication, and the API's headers are sent only to a description on apiBaseUrl's origin${base}, never to ${origin(url)}: download it and give it as a file (--openapi-spec ./openapi.json, or openApiSpec with specInputMethod file)`;
}
