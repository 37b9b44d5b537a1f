/** Methods RFC 9110 calls safe: sending one again changes nothing on the server. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** undici's codes for a connection the other side reset or closed under a request. */
const STALE_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * Sends a request once more when its connection was reset or closed before any answer came, for
 * a safe method whose body (none, a string or a Buffer) can be sent again, unless `signal` gave
 * up. That is what reusing a keep-alive connection gives when the server closes it as idle at the
 * same moment (HTTP/1.1's known race; RFC 9110 9.2.2 lets a client retry such a request): the
 * soak saw one fetch in ~24,000 fail so, and undici retried it only now and then. A second
 * failure is the caller's to report.
 */
export async function sendRetryingStale<T>(send: () => Promise<T>, method: string, body: unknown, signal?: { aborted: boolean }): Promise<T> {
  try {
    return await send();
  } catch (error) {
    const replayable = body === undefined || body === null || typeof body === 'string' || Buffer.isBuffer(body);
    if (!SAFE_METHODS.has(method.toUpperCase()) || !replayable || signal?.aborted || !isStaleConnection(error)) throw error;
    return send();
  }
}

function isStaleConnection(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code ?? (error as { cause?: { code?: string } } | null)?.cause?.code;
  return code !== undefined && STALE_CODES.has(code);
}
