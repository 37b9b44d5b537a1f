import type { IncomingMessage, ServerResponse } from 'node:http';
import { RepeatSummary, windowWords } from '../../protocol/repeat-summary';
import type { Logger } from '../logger';
import type { Metrics } from '../metrics';
import { refusalMessage } from './guards';

/**
 * Statuses that say the client should look at what it sends (a wrong token, a foreign Origin or
 * Host, too fast): `warn`. Other refusals (a stale session id after a restart, a malformed or
 * oversized body) are the client's own business: `info`. A 500 is logged where it happens.
 */
const WARN_STATUSES = new Set([401, 403, 429, 503]);

/**
 * Counts and logs every HTTP request answered 4xx or 503: `mcpvisor_http_requests_refused_total`
 * by status, and a log line per status and minute with the first refusal whole (status, method,
 * path without its query, client address, the message answered), then one line with how many
 * more came. Refusals logged nothing before, so a flood of bad tokens or a rate-limited client
 * was invisible at every level; a line per refusal would have been a disk-filling flood instead.
 */
export function refusalRecorder(metrics: Metrics, logger: Logger, clientOf: (req: IncomingMessage) => string | undefined) {
  const log = logger.child({ component: 'http' });
  const summary = new RepeatSummary((kind, more, windowMs) => {
    const status = Number(kind);
    log[WARN_STATUSES.has(status) ? 'warn' : 'info']({ status, more }, `requests refused: ${more} more answered ${status} ${windowWords(windowMs)}`);
  });
  const record = (req: IncomingMessage, res: ServerResponse) => {
    const status = res.statusCode;
    if (status < 400 || (status >= 500 && status !== 503)) return;
    metrics.refused(status);
    if (!summary.first(String(status))) return;
    const path = (req.url ?? '').split('?', 1)[0];
    // Never the query (a session id, a key someone put there) nor any header value but the
    // Host and Origin that were refused, which the answer names anyway.
    log[WARN_STATUSES.has(status) ? 'warn' : 'info'](
      { status, method: req.method, path: path.length > 200 ? `${path.slice(0, 197)}...` : path, client: clientOf(req), reason: refusalMessage(res) },
      'request refused',
    );
  };
  return {
    /** Watches one request's answer. */
    watch(req: IncomingMessage, res: ServerResponse): void {
      res.once('finish', () => record(req, res));
    },
    /** Writes the counts of the current minute now (before an exit). */
    flush: () => summary.flush(),
  };
}
