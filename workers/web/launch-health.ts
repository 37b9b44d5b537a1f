import { McpvisorError } from '../../protocol/errors';
import type { DegradedReason, WorkerHealth } from '../../protocol/pool';

/**
 * Failed launches in a row after which the searcher reports itself degraded. Decision: 3, so one
 * transient failure (a launch timing out under a burst of load) does not flap /health, while a
 * browser that is gone (uninstalled, a broken update, a machine out of memory) shows by the third
 * search; any launch that succeeds ends the count.
 */
export const DEGRADED_AFTER_FAILED_LAUNCHES = 3;

/**
 * While degraded, how long after the last failed launch the searcher tries one by itself.
 * Decision: a slow retry, as a pool over its restart intensity keeps retrying (DESIGN.md): an
 * instance that /health shows 503 is taken out of rotation, gets no searches, and without it would
 * stay degraded after the browser was fixed. 30 s: a launch that fails costs a spawn, or one
 * launch timeout (20 s) of a process that is then killed.
 */
export const RETRY_WHILE_DEGRADED_MS = 30_000;

/** The longest message of a launch error put into /health: puppeteer's carry the browser's output. */
const MAX_REASON_CHARS = 300;

export interface LaunchHealthOptions {
  /** Hears each change: degraded (again with each later failure, its message updated), or ok. */
  onChange?: (health: WorkerHealth) => void;
  /** Tries a launch (the searcher's own, not a search's); called while degraded only. */
  retry: () => void;
  retryWhileDegradedMs?: number;
}

/**
 * Counts the searcher's browser launches that failed in a row and reports `degraded` from the
 * DEGRADED_AFTER_FAILED_LAUNCHES-th on, with the last failure's code and message, until a launch
 * succeeds. It only listens to launches that happen anyway (searches, its own slow retry): asking
 * for the health never launches anything.
 */
export class LaunchHealth {
  readonly #options: LaunchHealthOptions;
  #failedInARow = 0;
  #reason: DegradedReason | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: LaunchHealthOptions) {
    this.#options = options;
  }

  get current(): WorkerHealth {
    return this.#reason ? { status: 'degraded', reason: this.#reason } : { status: 'ok' };
  }

  get failedInARow(): number {
    return this.#failedInARow;
  }

  launched(): void {
    this.#failedInARow = 0;
    clearTimeout(this.#retryTimer);
    if (this.#reason === undefined || this.#closed) return;
    this.#reason = undefined;
    this.#options.onChange?.(this.current);
  }

  failed(error: Error): void {
    this.#failedInARow += 1;
    if (this.#failedInARow < DEGRADED_AFTER_FAILED_LAUNCHES || this.#closed) return;
    this.#reason = {
      code: error instanceof McpvisorError ? error.code : 'BROWSER_LAUNCH_FAILED',
      message: `${this.#failedInARow} browser launches in a row failed; the last: ${summary(launchFailure(error))}`,
      since: this.#reason?.since ?? new Date().toISOString(),
    };
    this.#options.onChange?.(this.current);
    clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(() => this.#options.retry(), this.#options.retryWhileDegradedMs ?? RETRY_WHILE_DEGRADED_MS);
    // A retry pending must not keep a library user's process alive.
    this.#retryTimer.unref();
  }

  /** No more reports or retries. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
  }
}

/** One line, without puppeteer's troubleshooting link, cut at MAX_REASON_CHARS. */
function summary(message: string): string {
  const line = message.replace(/TROUBLESHOOTING: \S+/g, '').replace(/\s+/g, ' ').trim();
  return line.length <= MAX_REASON_CHARS ? line : `${line.slice(0, MAX_REASON_CHARS - 1)}…`;
}

/**
 * A failed launch's message for people. Puppeteer reports a browser that exits while it is being
 * connected to as "Protocol error (…): Target closed" or "Connection closed", which names neither.
 */
export function launchFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return /\b(Target|Connection) closed\b/.test(message) ? `${message} (the browser process exited while starting)` : message;
}
