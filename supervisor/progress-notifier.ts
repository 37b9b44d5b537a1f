import type { ProgressToken, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { ProgressReport } from '../protocol/call-progress';

export interface ProgressNotifierOptions {
  /** The tool's name, in the heartbeat's message. */
  name: string;
  token: ProgressToken;
  notify: (notification: ServerNotification) => Promise<void>;
  /** The heartbeat's interval (`pools.progressIntervalMs`); 0: none. */
  intervalMs: number;
  /** Told once a call when a report of the tool's is dropped for not rising above what the client has seen. */
  onBackwards: (progress: number, lastSent: number) => void;
}

/**
 * How long a call's result waits after a progress notification sent just before it. Why: the SDK
 * client (1.32) handles a notification a microtask late but a response at once, and forgets the
 * progress token with the response: a call's last report, written with its result and read in
 * the same chunk, was dropped ("Received a progress notification for an unknown token"). Read
 * apart, both arrive; 20 ms is long enough for a client that is not blocked, and only calls
 * whose last report came at their very end pay it.
 */
export const PROGRESS_BEFORE_RESULT_MS = 20;

/** A heartbeat after the tool's report of `value`: as little above it as tells the client it rose. */
function justAbove(value: number): number {
  return value + Math.max(Math.abs(value), 1) * 1e-9;
}

/**
 * The `notifications/progress` of one call given a progress token: the supervisor's heartbeat
 * (every `intervalMs`) and the tool's own reports (CallContext.progress), merged so that what
 * the client sees always rises, as MCP requires. Decisions: until the tool reports, a heartbeat's
 * progress is the seconds so far; once it has, a heartbeat comes only after a whole interval
 * without a report (a slow item of a batch: a client that restarts its timeout on progress still
 * waits), its progress a hair above the tool's last (3 → 3.000000003) with the tool's total, so a
 * progress bar stays where the tool put it. A tool's report at or below the last value sent (a
 * first report of 0.1 after a heartbeat of 15 s) is dropped, with one warning.
 * `beforeResult()` (await it before the result is written) and `stop()` end it: nothing is sent after the result.
 */
export function progressNotifier(options: ProgressNotifierOptions): { onProgress: (report: ProgressReport) => void; beforeResult: () => Promise<void>; stop: () => void } {
  const { name, token, notify, intervalMs } = options;
  const since = performance.now();
  let lastSent = 0;
  let stopped = false;
  let warned = false;
  let sentAt = Number.NEGATIVE_INFINITY;
  /** The tool's last report sent, once there is one. */
  let reported: { total?: number } | undefined;
  const send = (params: { progress: number; total?: number; message?: string }) => {
    lastSent = params.progress;
    sentAt = performance.now();
    notify({ method: 'notifications/progress', params: { progressToken: token, ...params } }).catch(() => undefined);
  };
  const heartbeat = () => {
    const now = performance.now();
    const message = `${name}: still running after ${Math.round((now - since) / 1000)} s`;
    if (!reported) {
      // Whole seconds repeat under an interval below one second (0, 0, 1, 1, 1…): the seconds so
      // far to the millisecond, on the monotonic clock, and always above the last value sent.
      send({ progress: Math.max(Math.round(lastSent * 1000) + 1, Math.round(now - since)) / 1000, message });
    } else if (now - sentAt >= intervalMs * 0.9) {
      send({ progress: justAbove(lastSent), ...reported, message });
    }
  };
  const ticker = intervalMs > 0 ? setInterval(heartbeat, intervalMs) : undefined;
  const stop = () => {
    stopped = true;
    clearInterval(ticker);
  };
  return {
    onProgress(report) {
      if (stopped) return;
      // Checked by the worker's runtime; checked again, as the IPC channel is a boundary.
      if (typeof report.progress !== 'number' || !Number.isFinite(report.progress)) return;
      if (report.progress <= lastSent) {
        if (!warned) options.onBackwards(report.progress, lastSent);
        warned = true;
        return;
      }
      const total = typeof report.total === 'number' && Number.isFinite(report.total) ? report.total : undefined;
      const message = typeof report.message === 'string' ? report.message : undefined;
      reported = total === undefined ? {} : { total };
      send({ progress: report.progress, ...reported, ...(message === undefined ? {} : { message }) });
    },
    async beforeResult() {
      stop();
      const waitMs = sentAt + PROGRESS_BEFORE_RESULT_MS - performance.now();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, Math.ceil(waitMs)));
    },
    stop,
  };
}
