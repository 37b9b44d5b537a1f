import type { ServerResponse } from 'node:http';
import type { StreamBudget } from './stream-budget';

/**
 * Writes a named SSE event `heartbeat` with `{"type":"heartbeat","timestamp":…}` on an SSE response
 * every `intervalMs` (DESIGN.md: standard clients skip events not named `message`). Starts
 * writing only once the stream's headers are out, stops when the response closes; `budget`
 * closes the stream of a client that no longer reads (stream-budget.ts).
 */
export function startHeartbeat(res: ServerResponse, intervalMs: number, budget: StreamBudget): void {
  const timer = setInterval(() => {
    if (res.writableEnded || res.destroyed) return clearInterval(timer);
    // The SDK writes its headers with writeHead (invisible to getHeader): a 200 here is the stream.
    if (!res.headersSent || res.statusCode !== 200) return;
    res.write(`event: heartbeat\ndata: ${JSON.stringify({ type: 'heartbeat', timestamp: new Date().toISOString() })}\n\n`);
    budget.wrote(res);
  }, intervalMs);
  timer.unref();
  res.on('close', () => clearInterval(timer));
}
