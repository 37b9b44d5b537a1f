/** Response headers a browser shows a cross-origin script without their being exposed (Fetch standard). */
const SAFELISTED_RESPONSE = new Set(['cache-control', 'content-language', 'content-length', 'content-type', 'expires', 'last-modified', 'pragma']);
const SIMPLE_METHODS = new Set(['GET', 'HEAD', 'POST']);
const SIMPLE_CONTENT_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']);

/** A request header that needs no preflight (CORS-safelisted), as a browser judges it. */
function isSafelisted(name: string, value: string): boolean {
  if (name === 'accept' || name === 'accept-language' || name === 'content-language') return true;
  return name === 'content-type' && SIMPLE_CONTENT_TYPES.has(value.split(';')[0].trim().toLowerCase());
}

function list(header: string | null): string[] {
  return (header ?? '').split(',').map((item) => item.trim().toLowerCase()).filter(Boolean);
}

/**
 * A fetch that keeps CORS as a browser does for a page at `origin`, for the SDK client's `fetch`
 * option: the request carries the `Origin`; a request that is not simple is preflighted
 * (`OPTIONS`) first and not sent unless the preflight allows its origin, method and headers; an
 * answer without a matching `Access-Control-Allow-Origin` is a network error; and the script
 * sees only safelisted and exposed response headers. Failures are `TypeError`s, as a browser's.
 */
export function browserFetch(origin: string): typeof fetch {
  return async (input, init = {}) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const headers = new Headers(init.headers);
    const method = (init.method ?? 'GET').toUpperCase();
    const unsafe: string[] = [];
    headers.forEach((value, name) => {
      if (!isSafelisted(name, value)) unsafe.push(name);
    });
    headers.set('origin', origin);
    if (!SIMPLE_METHODS.has(method) || unsafe.length > 0) {
      const preflight = await fetch(url, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': method, ...(unsafe.length > 0 ? { 'access-control-request-headers': unsafe.sort().join(',') } : {}) },
      });
      await preflight.arrayBuffer();
      const allowedHeaders = list(preflight.headers.get('access-control-allow-headers'));
      const allowedMethods = list(preflight.headers.get('access-control-allow-methods')).map((name) => name.toUpperCase());
      const refused =
        !preflight.ok ||
        preflight.headers.get('access-control-allow-origin') !== origin ||
        (!SIMPLE_METHODS.has(method) && !allowedMethods.includes(method)) ||
        unsafe.some((name) => !allowedHeaders.includes(name));
      if (refused) throw new TypeError(`Failed to fetch: CORS preflight of ${method} ${url.pathname} refused (HTTP ${preflight.status})`);
    }
    const response = await fetch(url, { ...init, headers });
    if (response.headers.get('access-control-allow-origin') !== origin) {
      await response.body?.cancel();
      throw new TypeError(`Failed to fetch: ${method} ${url.pathname} answered without Access-Control-Allow-Origin: ${origin}`);
    }
    const exposed = new Set(list(response.headers.get('access-control-expose-headers')));
    const visible = new Headers();
    response.headers.forEach((value, name) => {
      if (SAFELISTED_RESPONSE.has(name) || exposed.has(name)) visible.set(name, value);
    });
    const body = [101, 204, 205, 304].includes(response.status) ? null : response.body;
    return new Response(body, { status: response.status, statusText: response.statusText, headers: visible });
  };
}
