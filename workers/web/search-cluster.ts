import { Cluster } from 'puppeteer-cluster';
import puppeteer from 'puppeteer-core';
import { McpvisorError } from '../../protocol/errors';
import { CHROMIUM_ARGS, findChromium, protocolTimeoutMs, relaunchingLauncher, type RelaunchingLauncherOptions } from './browser';
import { PageConcurrency } from './page-concurrency';

export interface SearchClusterOptions extends RelaunchingLauncherOptions {
  /** The browser executable (findChromium's rules when unset). */
  executablePath?: string;
  headless: boolean;
  /** Pages open at once in the one browser. */
  concurrency: number;
  /** Budget of one search in ms: each DevTools call is bounded by it plus a slack (protocolTimeoutMs). */
  searchTimeoutMs: number;
}

export type SearchLauncher = ReturnType<typeof relaunchingLauncher>;

/**
 * Launches the searcher's puppeteer-cluster: one Chromium, a page per job (PageConcurrency),
 * through a relaunchingLauncher, so every launch, the first and each relaunch, is bounded by
 * `launchTimeoutMs` and reported to `onLaunch` / `onLaunchError`. `cluster` rejects with
 * McpvisorError: the launch's own code (BROWSER_LAUNCH_TIMEOUT), else INTERNAL naming the cause
 * (no executable, a browser that exits at once); the launcher is disposed then.
 */
export function launchSearchCluster<Data, Result>(options: SearchClusterOptions): { cluster: Promise<Cluster<Data, Result>>; launcher: SearchLauncher } {
  // puppeteer-cluster rethrows a failed first launch as a plain Error ("Unable to launch browser,
  // error message: …"): the launch's own error keeps its code.
  let launchError: unknown;
  const launcher = relaunchingLauncher(puppeteer, {
    ...options,
    onLaunchError: (error, replacing) => {
      launchError = error;
      options.onLaunchError?.(error, replacing);
    },
  });
  let executablePath: string;
  try {
    executablePath = findChromium(options.executablePath);
  } catch (error) {
    // Not a launch of the launcher's, but a launch that failed all the same.
    options.onLaunchError?.(error as Error, false);
    return { cluster: Promise.reject(couldNotStart(error)), launcher };
  }
  const launching = Cluster.launch({
    concurrency: PageConcurrency,
    maxConcurrency: options.concurrency,
    puppeteer: launcher,
    puppeteerOptions: {
      executablePath,
      headless: options.headless,
      // A pipe, not a WebSocket: Chromium exits when this process dies, even by kill -9.
      pipe: true,
      args: CHROMIUM_ARGS,
      protocolTimeout: protocolTimeoutMs(options.searchTimeoutMs),
      // The worker runtime owns signals and shutdown.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    } as never,
    timeout: 24 * 3600_000, // our own deadline cuts a search; the cluster's must never fire first
    retryLimit: 0,
    monitor: false,
  }) as Promise<Cluster<Data, Result>>;
  const cluster = launching.catch((error: unknown) => {
    void launcher.dispose();
    throw couldNotStart(error, launchError);
  });
  return { cluster, launcher };
}

function couldNotStart(error: unknown, cause: unknown = error): McpvisorError {
  if (cause instanceof McpvisorError) return new McpvisorError(cause.code, `the browser could not start: ${cause.message}`);
  return new McpvisorError('INTERNAL', `the browser could not start: ${(error as Error).message}`);
}
