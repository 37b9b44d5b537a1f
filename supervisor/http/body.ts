import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJsonRpcError } from './guards';

/** What reading a request body gave: the parsed JSON (undefined for a body that is not JSON), or answered. */
export type BodyRead = { ok: true; body: unknown } | { ok: false };

/**
 * Reads and parses a JSON request body of at most `limit` bytes. A body declared or found to be
 * larger answers 413 (reading stops at the limit, so it costs no memory); invalid JSON answers
 * 400 with -32700, and so does one that is not UTF-8; a `charset` other than UTF-8 answers 415.
 * A body whose Content-Type is not `application/json` is not read (`body`
 * undefined: the transport answers 415, as the SDK's does). A compressed body answers 415
 * (inflating is a zip-bomb risk for no gain).
 */
export function readJsonBody(req: IncomingMessage, res: ServerResponse, limit: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    if (!isJsonType(req.headers['content-type'])) {
      req.resume();
      return resolve({ ok: true, body: undefined });
    }
    // JSON-RPC over HTTP is UTF-8 (RFC 8259 8.1): a body declared Latin-1 was read as UTF-8 and its
    // `é` written as U+FFFD, silently. Refused, naming the charset (ASCII is UTF-8 already).
    const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(req.headers['content-type'] ?? '')?.[1];
    if (charset !== undefined && !/^(utf-?8|(us-)?ascii)$/i.test(charset)) {
      sendJsonRpcError(res, 415, -32600, `Unsupported charset ${charset.slice(0, 40)} in Content-Type: send the JSON as UTF-8`);
      drainThenClose(req);
      return resolve({ ok: false });
    }
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
      sendJsonRpcError(res, 415, -32600, `Unsupported Content-Encoding: ${encoding.slice(0, 40)} (send the body uncompressed)`);
      res.once('finish', () => req.destroy());
      return resolve({ ok: false });
    }
    const tooLarge = () => {
      sendJsonRpcError(res, 413, -32600, `Request body larger than ${limit} bytes`);
      drainThenClose(req);
      resolve({ ok: false });
    };
    const declared = Number(req.headers['content-length']);
    if (declared > limit) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        return tooLarge();
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      // Bytes that are not UTF-8 became U+FFFD in the arguments (a writeFile wrote them), silently.
      if (!isUtf8(bytes)) {
        sendJsonRpcError(res, 400, -32700, 'Parse error: the body is not valid UTF-8 (JSON-RPC messages are UTF-8)');
        return resolve({ ok: false });
      }
      // A byte order mark may start JSON text (RFC 8259 8.1): read past it.
      const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
      try {
        resolve({ ok: true, body: JSON.parse(text) });
      } catch {
        sendJsonRpcError(res, 400, -32700, 'Parse error: the body is not valid JSON');
        resolve({ ok: false });
      }
    });
    req.on('error', () => {
      if (done) return;
      done = true;
      resolve({ ok: false });
    });
  });
}

/** What is read and dropped of a refused body before its connection is closed (drainThenClose). */
const DRAIN_BYTES = 16 * 1024 * 1024;
const DRAIN_MS = 5_000;

/**
 * Reads and drops the rest of a refused body, so the client, still uploading, gets to read the
 * 413: a socket closed with unread data is reset, and the reset reached most clients before the
 * answer (7 in 10 fetches of 4.5 MB over a 4 MB limit). Once the body has ended the connection
 * serves the next request; past DRAIN_BYTES or DRAIN_MS it is closed after all (a client that
 * keeps sending is not owed more).
 */
function drainThenClose(req: IncomingMessage): void {
  let dropped = 0;
  const close = () => {
    clearTimeout(timer);
    req.destroy();
  };
  const timer = setTimeout(close, DRAIN_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DRAIN_BYTES) close();
  });
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

/** `application/json`, parameters allowed (the media type, not a substring). */
export function isJsonType(header: string | undefined): boolean {
  if (header === 'application/json') return true;
  return (header ?? '').split(';')[0].trim().toLowerCase() === 'application/json';
}
