import { Cluster } from 'puppeteer-cluster';
import puppeteer from 'puppeteer-core';
import { McpvisorError } from '../../protocol/errors';
import type { WorkerHealth } from '../../protocol/pool';
import type { WorkerLogger } from '../../protocol/worker-runtime';
import { CHROMIUM_ARGS, findChromium, LAUNCH_TIMEOUT_MS, protocolTimeoutMs, relaunchingLauncher } from './browser';
import { LaunchHealth, launchFailure } from './launch-health';
import { NoPage, PageConcurrency } from './page-concurrency';
import { beforeTime } from './waiting';

/** How long `close` waits for the browser to close before it kills it. */
const CLOSE_WAIT_MS = 5_000;

export interface SearchClusterOptions {
  /** The browser executable (findChromium's rules when unset). */
  executablePath?: string;
  headless: boolean;
  /** Pages open at once in the one browser. */
  concurrency: number;
  /** Budget of one search in ms: each DevTools call is bounded by it plus a slack (protocolTimeoutMs). */
  searchTimeoutMs: number;
  /** Bound of one launch in ms (default LAUNCH_TIMEOUT_MS). */
  launchTimeoutMs?: number;
  /** Hears when the browser becomes unlaunchable and launchable again (LaunchHealth). */
  onHealth?: (health: WorkerHealth) => void;
  /** While degraded, the pause before the searcher's own launch (default RETRY_WHILE_DEGRADED_MS). */
  retryWhileDegradedMs?: number;
  log: WorkerLogger;
}

/**
 * The searcher's browser: a puppeteer-cluster over one Chromium, a page per job (PageConcurrency),
 * launched on first use through a relaunchingLauncher, so that every launch, the first and each
 * relaunch, is bounded by `launchTimeoutMs` and counted by a LaunchHealth. While launches keep
 * failing it reports itself degraded (`onHealth`) and tries a launch by itself now and then.
 */
export class SearchCluster<Data, Result> {
  readonly #options: SearchClusterOptions;
  readonly #health: LaunchHealth;
  #cluster: Promise<Cluster<Data, Result>> | undefined;
  #launcher: ReturnType<typeof relaunchingLauncher> | undefined;
  /** launchedMs of the launchers before the current one (a cluster that failed to launch is dropped). */
  #earlierLaunchersMs = 0;
  #stats = { launches: 0, launchMs: 0 };
  #closed = false;

  constructor(options: SearchClusterOptions) {
    this.#options = options;
    this.#health = new LaunchHealth({ onChange: options.onHealth, retry: () => void this.#retry(), retryWhileDegradedMs: options.retryWhileDegradedMs });
  }

  /**
   * The cluster, launched if it is not. Rejects with McpvisorError: the launch's own code
   * (BROWSER_LAUNCH_TIMEOUT), else BROWSER_LAUNCH_FAILED naming the cause (no executable, a
   * browser that exits at once); the next call launches again.
   */
  cluster(): Promise<Cluster<Data, Result>> {
    if (this.#cluster) return this.#cluster;
    const started = performance.now();
    // puppeteer-cluster rethrows a failed first launch as a plain Error ("Unable to launch
    // browser, error message: …"): the launch's own error keeps its code.
    let launchError: unknown;
    const launcher = relaunchingLauncher(puppeteer, {
      launchTimeoutMs: this.launchTimeoutMs,
      onLaunch: (replaced) => {
        this.#health.launched();
        if (!replaced) return;
        this.#stats.launches += 1;
        this.#options.log.warn('browser relaunched: the last one did not answer or had died', {});
      },
      onLaunchError: (error, replacing) => {
        launchError = error;
        this.#health.failed(error);
        if (replacing) this.#options.log.error('the browser could not be relaunched; the next search tries again', { error: error.message });
      },
    });
    this.#earlierLaunchersMs += this.#launcher?.launchedMs ?? 0;
    this.#launcher = launcher;
    this.#cluster = this.#launchCluster(launcher).then(
      (launched) => {
        this.#stats.launches += 1;
        this.#stats.launchMs = Math.round(performance.now() - started);
        this.#options.log.info('browser launched', { ms: this.#stats.launchMs });
        return launched;
      },
      (error: unknown) => {
        this.#cluster = undefined;
        void launcher.dispose();
        if (launchError === undefined) {
          // Not a launch of the launcher's (no executable found), but a launch that failed all the same.
          launchError = error;
          if (!this.#closed) this.#health.failed(error as Error);
        }
        if (launchError instanceof McpvisorError) throw new McpvisorError(launchError.code, `the browser could not start: ${launchError.message}`);
        throw new McpvisorError('BROWSER_LAUNCH_FAILED', `the browser could not start: ${launchFailure(error)}`);
      },
    );
    return this.#cluster;
  }

  get launchTimeoutMs(): number {
    return this.#options.launchTimeoutMs ?? LAUNCH_TIMEOUT_MS;
  }

  /** When the launch in flight began (performance.now() ms), if one is. */
  get launchingSince(): number | undefined {
    return this.#launcher?.launchingSince;
  }

  /**
   * Time spent launching browsers so far, the launch in flight included: what a search waited
   * for a browser is the growth of this while it ran (every search waits for every launch).
   */
  get launchedMs(): number {
    return this.#earlierLaunchersMs + (this.#launcher?.launchedMs ?? 0);
  }

  stats(): Record<string, unknown> {
    return { ...this.#stats, browser: this.#cluster ? 'launched' : 'not launched', failedLaunchesInARow: this.#health.failedInARow, health: this.#health.current };
  }

  /** Closes the browser and deletes its profile; one that does not close within CLOSE_WAIT_MS (hung) is killed. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#health.close();
    const cluster = this.#cluster;
    this.#cluster = undefined;
    // A launch in flight would hold the cluster's close until the launch timeout.
    this.#launcher?.stopLaunching();
    if (cluster) {
      const closing = (async () => (await cluster).close())().then(
        () => true,
        (error) => {
          this.#options.log.warn('closing the browser failed', { error: (error as Error).message });
          return true;
        },
      );
      if ((await beforeTime(closing, performance.now() + CLOSE_WAIT_MS)) === undefined) {
        this.#options.log.warn('the browser did not close; it is killed', { waitedMs: CLOSE_WAIT_MS });
      }
    }
    await this.#launcher?.dispose();
  }

  #launchCluster(launcher: ReturnType<typeof relaunchingLauncher>): Promise<Cluster<Data, Result>> {
    let executablePath: string;
    try {
      executablePath = findChromium(this.#options.executablePath);
    } catch (error) {
      return Promise.reject(error);
    }
    return Cluster.launch({
      concurrency: PageConcurrency,
      maxConcurrency: this.#options.concurrency,
      puppeteer: launcher,
      puppeteerOptions: {
        executablePath,
        headless: this.#options.headless,
        // A pipe, not a WebSocket: Chromium exits when this process dies, even by kill -9.
        pipe: true,
        args: CHROMIUM_ARGS,
        protocolTimeout: protocolTimeoutMs(this.#options.searchTimeoutMs),
        // The worker runtime owns signals and shutdown.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      } as never,
      timeout: 24 * 3600_000, // our own deadline cuts a search; the cluster's must never fire first
      retryLimit: 0,
      monitor: false,
    }) as Promise<Cluster<Data, Result>>;
  }

  /**
   * The searcher's own launch while degraded: the cluster if it never started, else a job that
   * only opens a page, which launches the browser the last failure left out. Its outcome reaches
   * the LaunchHealth through the launcher, as a search's would; nothing else is done with it.
   */
  async #retry(): Promise<void> {
    if (this.#closed) return;
    try {
      const cluster = await this.cluster();
      await cluster.execute(undefined as Data, async ({ page }) => {
        if (page instanceof NoPage) throw page.error;
        return undefined as Result;
      });
    } catch (error) {
      this.#options.log.debug('the browser still cannot be launched', { error: (error as Error).message });
    }
  }
}

