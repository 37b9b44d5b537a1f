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

/**
 * The `notifications/progress` of one call given a progress token: the supervisor's heartbeat
 * (every `intervalMs`, its progress the seconds so far) and the tool's own reports
 * (CallContext.progress), merged so that what the client sees always rises, as MCP requires.
 * Decision: once the tool has reported, the heartbeat stops (the tool says itself that it is
 * alive, in its own units, which seconds would only interleave with); a report at or below the
 * last value sent (a first report of 0.1 after a heartbeat of 15 s) is dropped, with one warning.
 * `beforeResult()` (await it before the result is written) and `stop()` end it: nothing is sent after the result.
 */
export function progressNotifier(options: ProgressNotifierOptions): { onProgress: (report: ProgressReport) => void; beforeResult: () => Promise<void>; stop: () => void } {
  const { name, token, notify, intervalMs } = options;
  const since = performance.now();
  let lastSent = 0;
  let stopped = false;
  let warned = false;
  let sentAt = Number.NEGATIVE_INFINITY;
  const send = (params: { progress: number; total?: number; message?: string }) => {
    lastSent = params.progress;
    sentAt = performance.now();
    notify({ method: 'notifications/progress', params: { progressToken: token, ...params } }).catch(() => undefined);
  };
  // Whole seconds repeat under an interval below one second (0, 0, 1, 1, 1…): the seconds so far
  // to the millisecond, on the monotonic clock, and always above the last value sent.
  const ticker =
    intervalMs > 0
      ? setInterval(() => {
          const ms = Math.max(Math.round(lastSent * 1000) + 1, Math.round(performance.now() - since));
          send({ progress: ms / 1000, message: `${name}: still running after ${Math.round(ms / 1000)} s` });
        }, intervalMs)
      : undefined;
  const stop = () => {
    stopped = true;
    clearInterval(ticker);
  };
  return {
    onProgress(report) {
      if (stopped) return;
      clearInterval(ticker);
      // Checked by the worker's runtime; checked again, as the IPC channel is a boundary.
      if (typeof report.progress !== 'number' || !Number.isFinite(report.progress)) return;
      if (report.progress <= lastSent) {
        if (!warned) options.onBackwards(report.progress, lastSent);
        warned = true;
        return;
      }
      const total = typeof report.total === 'number' && Number.isFinite(report.total) ? report.total : undefined;
      const message = typeof report.message === 'string' ? report.message : undefined;
      send({ progress: report.progress, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) });
    },
    async beforeResult() {
      stop();
      const waitMs = sentAt + PROGRESS_BEFORE_RESULT_MS - performance.now();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, Math.ceil(waitMs)));
    },
    stop,
  };
}
