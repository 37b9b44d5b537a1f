import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { sendJsonRpcError, type Check } from './guards';

/**
 * Bearer-token check for MCP endpoints. The comparison is constant-time over SHA-256 digests, so
 * neither content nor length leaks through timing. No token configured: everything passes (the
 * server then only listens on loopback, or the operator opted out loudly).
 */
export function bearerAuth(token: string | undefined): Check {
  const expected = token === undefined ? undefined : digest(token);
  return (req, res) => {
    if (expected === undefined || hasToken(req, expected)) return true;
    const given = req.headers.authorization !== undefined;
    res.setHeader('WWW-Authenticate', given ? 'Bearer realm="mcpvisor", error="invalid_token"' : 'Bearer realm="mcpvisor"');
    sendJsonRpcError(res, 401, -32001, given ? 'Unauthorized: the bearer token is not valid' : 'Unauthorized: send Authorization: Bearer <token>');
    return false;
  };
}

/** True when the request carries the token (also used for /health and /metrics set to `token`). */
export function hasToken(req: IncomingMessage, expected: Buffer): boolean {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(.+)$/i.exec(header);
  return match !== null && timingSafeEqual(digest(match[1].trim()), expected);
}

export function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
