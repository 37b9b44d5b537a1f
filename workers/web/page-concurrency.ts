import { EventEmitter } from 'node:events';
import type { Browser, Page } from 'puppeteer-core';
import ConcurrencyImplementation, { type JobInstance, type WorkerInstance } from 'puppeteer-cluster/dist/concurrency/ConcurrencyImplementation';
import { McpvisorError } from '../../protocol/errors';
import { beforeTime } from './waiting';

/**
 * A browser that opens no page within this (puppeteer-cluster's own limit) is asked whether it
 * still answers; one that does not answer within ANSWER_MS is taken as hung.
 */
const PAGE_OPEN_MS = 5_000;
/** The same for a page that does not close within this. */
const PAGE_CLOSE_MS = 5_000;
/** How long a slow browser gets to answer a ping (Browser.getVersion). */
const ANSWER_MS = 5_000;
/**
 * The most a browser that keeps answering gets to open or close a page: on a loaded machine the
 * first pages of a fresh Chromium can take longer than 5 s, and retiring that healthy browser
 * kills the searches on its other pages (the likely cause of a CI search that failed with
 * "Target closed" at load 8 on 2 cores).
 */
const SLOW_BROWSER_MS = 20_000;
/**
 * A browser that dies is relaunched at once, not by the next search, at most once per this: a
 * Chromium that keeps crashing is then relaunched by searches only, never in a loop of its own.
 */
const RELAUNCH_ON_CRASH_EVERY_MS = 60_000;

/**
 * What a job gets instead of a page when no browser could give it one: the task throws `error`
 * (WebSearcher does). An EventEmitter because the cluster's Worker listens on the page for
 * `error` before it runs the task.
 */
export class NoPage extends EventEmitter {
  constructor(readonly error: McpvisorError) {
    super();
  }
}

/** A launched browser, or one being launched (`browser` unset until it is up). */
interface Generation {
  ready: Promise<Browser>;
  browser?: Browser;
}

/**
 * puppeteer-cluster's CONCURRENCY_PAGE (one browser, a page per job) without its stalls. Its
 * SingleBrowserImplementation relaunches ("repairs") only once no page is open, so every job
 * waited for the pages of a dead or hung browser until their searches' deadlines; and a relaunch
 * that threw left it `repairing` for good, so every later job waited forever (the soak's "search
 * stays broken, /health ok"). Here there is no repair protocol at all:
 * - the browser is a single-flight launch, replaced when it has disconnected (died) or when it
 *   opened no page or closed none in time and then did not answer a ping (hung; one that answers
 *   is only slow, and gets up to SLOW_BROWSER_MS); the next job launches the next one, and the
 *   launcher (browser.ts) kills the last one's tree, which ends the searches still on it;
 * - a browser that dies (crash, OOM kill) is relaunched at once, so that the next search does not
 *   wait for a launch (1-2 s here, more than a short search budget on a loaded machine); at most
 *   once per RELAUNCH_ON_CRASH_EVERY_MS, and its failure counts as any failed launch does;
 * - a job that finds no usable browser tries once more on a fresh one, then gets a NoPage saying
 *   why; a failed launch is forgotten, so the next job launches again;
 * - a launch is bounded by the launcher's own timeout (browser.ts, LAUNCH_TIMEOUT_MS), not by a
 *   job's: the page rules' bounds start once a browser is up, so a slow launch is never taken for a
 *   hung browser, and a search whose deadline comes first leaves the launch to the next search;
 * - `jobInstance` and its `close` never throw, so the cluster's Worker never calls `repair` and
 *   never gives up on a job (its give-up rejects outside any caller and loses the worker).
 * `puppeteer` is the launcher (relaunchingLauncher); `options` are its launch options.
 */
export class PageConcurrency extends ConcurrencyImplementation {
  #generation: Generation | undefined;
  #closed = false;
  #lastCrashRelaunch = -Infinity;

  async init(): Promise<void> {
    await this.#browser();
  }

  /** Closes the browser; later jobs get a NoPage (SHUTTING_DOWN). The caller bounds the wait. */
  async close(): Promise<void> {
    this.#closed = true;
    const browser = await this.#generation?.ready.catch(() => undefined);
    this.#generation = undefined;
    await browser?.close();
  }

  async workerInstance(): Promise<WorkerInstance> {
    return {
      jobInstance: () => this.#jobInstance(),
      close: async () => {},
      // Called by the cluster only when jobInstance or a job's close throws, which they never do.
      repair: async () => {},
    };
  }

  async #jobInstance(): Promise<JobInstance> {
    let failure = '';
    let timedOut = false;
    // The second try is on a fresh browser: the first one was dead or hung, and was retired.
    for (let attempt = 0; attempt < 2; attempt++) {
      if (this.#closed) return noPage(new McpvisorError('SHUTTING_DOWN', 'the searcher is closed'));
      let browser: Browser;
      try {
        browser = await this.#browser();
      } catch (error) {
        // A launch that timed out keeps its code (BROWSER_LAUNCH_TIMEOUT); one that failed is BROWSER_LAUNCH_FAILED.
        const code = error instanceof McpvisorError ? error.code : 'BROWSER_LAUNCH_FAILED';
        return noPage(new McpvisorError(code, `the browser could not be (re)launched: ${(error as Error).message}`));
      }
      const opening = browser.newPage();
      let page: Page | undefined;
      try {
        const { value, late } = await whileAnswering(browser, opening, PAGE_OPEN_MS);
        page = value;
        failure = late;
        timedOut = true;
      } catch (error) {
        failure = (error as Error).message;
        timedOut = false;
      }
      if (page) return { resources: { page }, close: () => this.#closePage(browser, page) };
      // A page that opens after all is closed with its browser.
      this.#retire(browser);
    }
    return noPage(new McpvisorError(timedOut ? 'BROWSER_PAGE_TIMEOUT' : 'INTERNAL', `the browser opens no page, even relaunched: ${failure}`));
  }

  /** Never throws: a page that cannot be closed in time retires its browser instead. */
  async #closePage(browser: Browser, page: Page): Promise<void> {
    const closing = page.close().then(
      () => true,
      // Already gone (its tab crashed, its browser died): nothing left to close.
      () => true,
    );
    const { value: closed } = await whileAnswering(browser, closing, PAGE_CLOSE_MS);
    if (!closed) this.#retire(browser);
  }

  /** The current browser, launched if there is none or it has disconnected. */
  #browser(): Promise<Browser> {
    const current = this.#generation;
    if (current && (current.browser === undefined || current.browser.connected)) return current.ready;
    const next: Generation = { ready: this.puppeteer.launch(this.options) as Promise<Browser> };
    this.#generation = next;
    next.ready.then(
      (browser) => {
        next.browser = browser;
        browser.once('disconnected', () => this.#relaunchAfterCrash(next));
      },
      () => {
        if (this.#generation === next) this.#generation = undefined;
      },
    );
    return next.ready;
  }

  /** Launches the next browser if `dead` was the current one and died by itself (not retired, not closed). */
  #relaunchAfterCrash(dead: Generation): void {
    if (this.#closed || this.#generation !== dead) return;
    const now = performance.now();
    if (now - this.#lastCrashRelaunch < RELAUNCH_ON_CRASH_EVERY_MS) return;
    this.#lastCrashRelaunch = now;
    // The launcher reports a failure (LaunchHealth); the next job tries again.
    this.#browser().catch(() => {});
  }

  /** The next job launches a new browser, unless `browser` was replaced already. */
  #retire(browser: Browser): void {
    if (this.#generation?.browser === browser) this.#generation = undefined;
  }
}

/**
 * `work`'s value, waited for while `browser` shows it is alive: past each `stepMs` without it,
 * the browser must answer a ping within ANSWER_MS, for SLOW_BROWSER_MS at most. Otherwise no
 * value, and `late` says why (the browser is hung, or too slow to keep). Rejects as `work` does.
 */
async function whileAnswering<T>(browser: Browser, work: Promise<T>, stepMs: number): Promise<{ value?: T; late: string }> {
  const started = performance.now();
  const until = started + SLOW_BROWSER_MS;
  for (;;) {
    const value = await beforeTime(work, Math.min(until, performance.now() + stepMs));
    if (value !== undefined) return { value, late: '' };
    const waited = Math.round(performance.now() - started);
    if (performance.now() >= until) return { late: `the browser answers but did not do it within ${waited} ms` };
    const answered = await beforeTime(browser.version().then(() => true, () => false), performance.now() + ANSWER_MS);
    if (!answered) return { late: `not done within ${waited} ms, and the browser did not answer within ${ANSWER_MS} ms more` };
  }
}

function noPage(error: McpvisorError): JobInstance {
  // The cluster's type wants a Page; WebSearcher's task checks for a NoPage first.
  return { resources: { page: new NoPage(error) as unknown as Page }, close: async () => {} };
}
