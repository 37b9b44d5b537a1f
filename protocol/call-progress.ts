/** What a tool's own code says of its progress (`context.progress`), as MCP's notifications/progress carries it. */
export interface ProgressReport {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * Reports of one call reach the supervisor at most this often; the last one of a burst always
 * does, at the end of its window or just before the call's answer. An author calling progress
 * 100,000 times in a loop sent 100,000 IPC messages, each a notification to the client.
 */
export const PROGRESS_MIN_INTERVAL_MS = 100;

/** Characters of a report's message kept; a longer one is cut, with `…`. */
export const PROGRESS_MESSAGE_MAX_CHARS = 1000;

/** Why `report` is unusable, or undefined. Checked in the worker, so its author's log says it. */
function problemOf(progress: unknown, total: unknown, message: unknown): string | undefined {
  if (typeof progress !== 'number' || !Number.isFinite(progress)) return `progress must be a finite number, got ${describe(progress)}`;
  if (total !== undefined && (typeof total !== 'number' || !Number.isFinite(total))) return `total must be a finite number or left out, got ${describe(total)}`;
  if (message !== undefined && typeof message !== 'string') return `message must be a string or left out, got ${describe(message)}`;
  return undefined;
}

function describe(value: unknown): string {
  return typeof value === 'number' || typeof value === 'bigint' ? String(value) : typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : value === null ? 'null' : typeof value;
}

/** A call's `progress(progress, total?, message?)`, and `finish()` to run before its answer is sent. */
export interface CallProgress {
  report(progress: number, total?: number, message?: string): void;
  /** Sends the report a window still holds, and makes later reports no-ops (nothing after the answer). */
  finish(): void;
}

/**
 * The progress reporter of one call: checks each report (an unusable one is dropped, with one
 * warning a call naming what was wrong: a progress bar is not worth failing a batch job for),
 * drops values not above the last one kept (MCP: progress "MUST increase"), and coalesces them
 * to one `send` per PROGRESS_MIN_INTERVAL_MS. `send` undefined (the client gave no progress
 * token, or the supervisor asked for none): every report is a no-op.
 */
export function callProgress(send: ((report: ProgressReport) => void) | undefined, warn: (msg: string) => void): CallProgress {
  if (!send) return { report: () => undefined, finish: () => undefined };
  let warned = false;
  let finished = false;
  let last = Number.NEGATIVE_INFINITY;
  let held: ProgressReport | undefined;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    if (!held) return;
    const report = held;
    held = undefined;
    send(report);
    // The window starts at each send: a steady flood sends one a window, the last at its end.
    timer = setTimeout(flush, PROGRESS_MIN_INTERVAL_MS);
    timer.unref?.();
  };
  return {
    report(progress, total, message) {
      if (finished) return;
      const problem = problemOf(progress, total, message);
      if (problem) {
        if (!warned) warn(`a progress report was dropped: ${problem} (later bad reports of this call are dropped silently)`);
        warned = true;
        return;
      }
      if (progress <= last) return;
      last = progress;
      const text = message === undefined || message.length <= PROGRESS_MESSAGE_MAX_CHARS ? message : `${message.slice(0, PROGRESS_MESSAGE_MAX_CHARS - 1)}…`;
      held = { progress, ...(total === undefined ? {} : { total }), ...(text === undefined ? {} : { message: text }) };
      if (!timer) flush();
    },
    finish() {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      timer = undefined;
      if (held) send(held);
      held = undefined;
    },
  };
}
