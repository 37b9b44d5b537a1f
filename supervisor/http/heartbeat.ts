import type { ServerResponse } from 'node:http';

/**
 * Writes a named SSE event `heartbeat` with `{"type":"heartbeat","timestamp":…}` on an SSE response
 * every `intervalMs` (DESIGN.md: standard clients skip events not named `message`). Starts
 * writing only once the stream's headers are out, stops when the response closes, and destroys
 * the stream of a client that no longer reads (more than `maxBufferedBytes` waiting).
 */
export function startHeartbeat(res: ServerResponse, intervalMs: number, maxBufferedBytes = 4 * 1024 * 1024): void {
  const timer = setInterval(() => {
    if (res.writableEnded || res.destroyed) return clearInterval(timer);
    // The SDK writes its headers with writeHead (invisible to getHeader): a 200 here is the stream.
    if (!res.headersSent || res.statusCode !== 200) return;
    // A client that stopped reading: its unsent output only grows, so end the stream.
    if (res.writableLength > maxBufferedBytes) {
      clearInterval(timer);
      res.destroy();
      return;
    }
    res.write(`event: heartbeat\ndata: ${JSON.stringify({ type: 'heartbeat', timestamp: new Date().toISOString() })}\n\n`);
  }, intervalMs);
  timer.unref();
  res.on('close', () => clearInterval(timer));
}
