import type { HttpConfig } from '../../config/schema';
import type { Check } from './guards';

/** What a browser client sends beyond the CORS-safelisted headers (Streamable HTTP, legacy SSE, auth). */
const ALLOWED_HEADERS = 'Accept, Authorization, Content-Type, Last-Event-ID, Mcp-Protocol-Version, Mcp-Session-Id';
/** Response headers a browser client must read: the session id above all, without which it cannot go on. */
const EXPOSED_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate';

/**
 * CORS for browser clients (the MCP Inspector's Direct connection, web apps on the SDK) whose
 * origin is listed in `allowedOrigins` (or `*`): a preflight (`OPTIONS`) is answered 204 before
 * the bearer-token check, which a preflight cannot pass (it carries no `Authorization`), and
 * every answer to such an origin says `Access-Control-Allow-Origin` and exposes `Mcp-Session-Id`.
 * Without them a browser refused the preflight (405) and, past it, hid the session id from the
 * client, whose next request then had none (400).
 *
 * Decision: the local origins the origin guard lets in without a listing (`http://localhost:*`,
 * 127.0.0.1, [::1]) get no CORS answer. Any page a browser opens on another local port (a dev
 * server, a local app) would otherwise drive the tools of a server that needs no token on
 * loopback; a browser client on localhost is listed like any other.
 */
export function corsCheck(config: HttpConfig): Check {
  const listed = listedOrigins(config);
  const any = listed.has('*');
  return (req, res) => {
    const origin = req.headers.origin;
    if (origin === undefined || !(any || listed.has(origin.toLowerCase()))) return true;
    // Set on the response now: the transports' writeHead keeps headers set before it.
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
    res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    if (req.method !== 'OPTIONS') return true;
    req.resume();
    res
      .writeHead(204, {
        'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
        'Access-Control-Allow-Headers': ALLOWED_HEADERS,
        'Access-Control-Max-Age': '600',
      })
      .end();
    return false;
  };
}

/**
 * `allowedOrigins` as browsers write an Origin: serialised by the URL parser, so a listed
 * `http://[0:0::1]:5173` matches the `http://[::1]:5173` a browser sends (and `http://Host:80/`
 * matches `http://host`). What does not parse (`*`, `null`) stays as written, lower-cased.
 */
export function listedOrigins(config: HttpConfig): Set<string> {
  return new Set(
    config.allowedOrigins.map((origin) => {
      const text = origin.replace(/\/+$/, '');
      try {
        const url = new URL(text);
        return url.origin === 'null' ? text.toLowerCase() : url.origin;
      } catch {
        return text.toLowerCase();
      }
    }),
  );
}
