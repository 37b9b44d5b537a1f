import { McpvisorError } from '../../protocol/errors';

export interface SearchBudgetOptions {
  /** The search's own budget (web.search.timeoutMs). */
  searchMs: number;
  /** The caller's budget (what is left of the pool call's), which bounds everything; Infinity: none. */
  callMs: number;
  /** Time spent launching browsers so far (SearchCluster.launchedMs), read as the search goes. */
  launchedMs: () => number;
}

/**
 * The deadline of one search: `searchMs` from its start, moved later by the time browsers were
 * launching meanwhile, never past `callMs`. A launch (the first search's, a relaunch after a
 * crash or a hung browser) has its own bound, launchTimeoutMs, and is no part of a search's
 * work: counted in it, the first search after a worker's restart timed out whenever a launch on
 * a loaded machine (up to 5.3 s measured) ate a short budget. `signal` aborts with TIMEOUT at the
 * deadline; `deadline` (performance.now() ms) is the current one, read by page loads as they
 * start. `dispose` stops the timer.
 */
export class SearchBudget {
  readonly signal: AbortSignal;
  readonly #controller = new AbortController();
  readonly #options: SearchBudgetOptions;
  readonly #started = performance.now();
  readonly #launchedAtStart: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: SearchBudgetOptions) {
    this.#options = options;
    this.signal = this.#controller.signal;
    this.#launchedAtStart = options.launchedMs();
    this.#arm();
  }

  /** When the search ends, as things stand: later while a launch goes on. */
  get deadline(): number {
    const { searchMs, callMs } = this.#options;
    return this.#started + Math.min(callMs, searchMs + this.#launchWait());
  }

  dispose(): void {
    clearTimeout(this.#timer);
  }

  #launchWait(): number {
    return Math.max(0, this.#options.launchedMs() - this.#launchedAtStart);
  }

  /**
   * Fires at the deadline; one moved meanwhile (a launch began or went on) is waited for again.
   * While a launch goes on the deadline moves as fast as time: at least 20 ms between looks.
   */
  #arm(): void {
    const deadline = this.deadline;
    const left = deadline - performance.now();
    if (left > 1) {
      this.#timer = setTimeout(() => this.#arm(), Math.max(left, 20));
      return;
    }
    const waited = Math.round(this.#launchWait());
    const launch = waited >= 50 ? ` (${waited} ms of it waiting for a browser launch)` : '';
    this.#controller.abort(new McpvisorError('TIMEOUT', `the search did not finish within ${Math.round(deadline - this.#started)} ms${launch}`));
  }
}
