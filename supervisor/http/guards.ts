import type { IncomingMessage, ServerResponse } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import type { HttpConfig } from '../../config/schema';
import { listedOrigins } from './cors';

/**
 * A check run before an MCP request is handled: true lets it through, false means the check has
 * answered it (403, 401, 429…). Plain functions, so the MCP endpoint runs them without express.
 */
export type Check = (req: IncomingMessage, res: ServerResponse) => boolean;

/** A check as express middleware (for the legacy SSE routes). */
export function middleware(check: Check) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (check(req, res)) next();
  };
}

const LOCAL_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);
/**
 * Loopback IP literals in any spelling: 127.0.0.0/8, ::1 (`0:0:0:0:0:0:0:1` too) and the
 * IPv4-mapped ::ffff:127.x.x.x, which BlockList judges by its IPv4 part. Literals only, not a
 * name such as `127.0.0.1.example.com`, which DNS can point anywhere.
 */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

function isLoopbackLiteral(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const family = isIP(bare);
  return family !== 0 && LOOPBACK.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

/** The message of each refusal sent, for its log line (refusals.ts). */
const refusalMessages = new WeakMap<ServerResponse, string>();

/** The message `sendJsonRpcError` answered `res` with, if it did. */
export function refusalMessage(res: ServerResponse): string | undefined {
  return refusalMessages.get(res);
}

/** A JSON-RPC error body, as transports answer requests they refuse: with no id unless one is given. */
export function sendJsonRpcError(res: ServerResponse, status: number, code: number, message: string, id: string | number | null = null): void {
  if (res.headersSent) return;
  refusalMessages.set(res, message);
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id });
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
}

/** True for a loopback bind address (then Host headers must be local names too). */
export function isLoopback(host: string): boolean {
  return LOCAL_HOSTNAMES.has(host) || isLoopbackLiteral(host);
}

/**
 * DNS-rebinding protection, part one, on every request the server gets: when bound to loopback,
 * the `Host` header must name a loopback host (403 otherwise). A page on evil.example whose name
 * was rebound to 127.0.0.1 reads the server as its own origin, so /, /health and /metrics (tool
 * names, call counts, pool states and their reasons) are held to it as the MCP endpoints are.
 */
export function hostGuard(config: HttpConfig): Check {
  if (!isLoopback(config.host)) return oneHost;
  let lastLocalHost: string | undefined;
  return (req, res) => {
    if (!oneHost(req, res)) return false;
    // Clients send one Host header on every request: the URL parse runs once per value seen.
    if (req.headers.host !== undefined && req.headers.host === lastLocalHost) return true;
    const hostname = hostnameOf(req.headers.host);
    if (hostname === undefined || !isLoopback(hostname)) {
      sendJsonRpcError(res, 403, -32000, `Forbidden: host ${truncate(req.headers.host ?? '(none)')} is not allowed`);
      return false;
    }
    lastLocalHost = req.headers.host;
    return true;
  };
}

/**
 * RFC 9112 section 3.2: a request with more than one Host line gets 400, whatever the bind
 * address. Node keeps the first and drops the rest, so a proxy in front that routes by the last
 * one and this server would disagree about which host a request is for.
 */
function oneHost(req: IncomingMessage, res: ServerResponse): boolean {
  const raw = req.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 4 && raw[i].toLowerCase() === 'host' && ++seen > 1) {
      sendJsonRpcError(res, 400, -32000, 'Bad Request: more than one Host header');
      return false;
    }
  }
  return true;
}

/**
 * DNS-rebinding protection, part two, on every MCP request (the SDK's express helper checks only
 * Host): a browser `Origin` must be a local one or in `allowedOrigins` (403 otherwise). Requests
 * without an Origin (non-browser clients) pass.
 */
export function originGuard(config: HttpConfig): Check {
  const allowed = listedOrigins(config);
  return (req, res) => {
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin, allowed)) {
      sendJsonRpcError(res, 403, -32000, `Forbidden: origin ${truncate(origin)} is not allowed`);
      return false;
    }
    return true;
  };
}

function originAllowed(origin: string, allowed: Set<string>): boolean {
  if (allowed.has('*') || allowed.has(origin.toLowerCase())) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOCAL_HOSTNAMES.has(url.hostname);
  } catch {
    return false;
  }
}

function hostnameOf(host: string | undefined): string | undefined {
  if (!host) return undefined;
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return undefined;
  }
}

function truncate(text: string): string {
  return text.length > 100 ? `${text.slice(0, 97)}...` : text;
}
