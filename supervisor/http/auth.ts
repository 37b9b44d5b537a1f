import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { sendJsonRpcError } from './guards';

/**
 * Bearer-token check for MCP endpoints. The comparison is constant-time over SHA-256 digests, so
 * neither content nor length leaks through timing. No token configured: everything passes (the
 * server then only listens on loopback, or the operator opted out loudly).
 */
export function bearerAuth(token: string | undefined) {
  const expected = token === undefined ? undefined : digest(token);
  return (req: Request, res: Response, next: NextFunction): void => {
    if (expected === undefined || hasToken(req, expected)) return next();
    const given = req.headers.authorization !== undefined;
    res.setHeader('WWW-Authenticate', given ? 'Bearer realm="mcpvisor", error="invalid_token"' : 'Bearer realm="mcpvisor"');
    sendJsonRpcError(res, 401, -32001, given ? 'Unauthorized: the bearer token is not valid' : 'Unauthorized: send Authorization: Bearer <token>');
  };
}

/** True when the request carries the token (also used for /health and /metrics set to `token`). */
export function hasToken(req: Request, expected: Buffer): boolean {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(.+)$/i.exec(header);
  return match !== null && timingSafeEqual(digest(match[1].trim()), expected);
}

export function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
