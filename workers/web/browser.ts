import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, LaunchOptions } from 'puppeteer-core';
import { McpvisorError } from '../../protocol/errors';
import { childrenWithArg, killGroup, killTree } from '../common/kill-tree';
import { freshProcessDir } from '../common/process-dirs';
import { beforeTime, raceSignal } from './waiting';

/** Where Chromium is looked for when no path is configured, in order. We never download one. */
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome-stable', '/usr/bin/google-chrome'];

/**
 * The browser executable: the configured path, else CHROMIUM_PATH, PUPPETEER_EXECUTABLE_PATH,
 * else the first of the usual system paths that exists. Throws an Error that names the Debian
 * package when there is none.
 */
export function findChromium(configured?: string): string {
  const wanted = configured ?? process.env.CHROMIUM_PATH ?? process.env.PUPPETEER_EXECUTABLE_PATH;
  if (wanted) {
    if (!existsSync(wanted)) throw new Error(`the browser ${wanted} does not exist; install Debian's chromium package or set CHROMIUM_PATH`);
    return wanted;
  }
  const found = CANDIDATES.find((candidate) => existsSync(candidate));
  if (!found) throw new Error(`no Chromium found (looked at ${CANDIDATES.join(', ')}); install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH`);
  return found;
}

/**
 * Flags for a server-side Chromium: no sandbox (containers rarely allow its namespaces; the
 * browser only ever renders search pages), no GPU, /tmp instead of a small /dev/shm, and none of
 * the background traffic (updates, sync, first-run) that would leave the machine.
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-extensions',
  '--mute-audio',
  '--lang=en-US',
];

/** What Chromium adds to its TMPDIR for its singleton socket, and the most a socket path may hold (sun_path less its NUL). */
const SINGLETON_SOCKET = '/org.chromium.Chromium.XXXXXX/SingletonSocket';
const MAX_SOCKET_PATH_BYTES = 107;

/**
 * Where browser profiles go: the temporary directory, unless the singleton socket Chromium makes
 * in a profile's `tmp` would not fit in a Unix socket path (107 bytes) under it; then /tmp.
 * Chromium stops at once on such a path ("Socket path too long"), so every launch failed with
 * "Target closed" on a TMPDIR past ~25 characters (a pm2 or systemd setup's own, macOS's).
 * Likewise when the server's user cannot write the temporary directory (a TMPDIR of another
 * user's): every search failed with `BROWSER_LAUNCH_FAILED` ("EACCES … mkdtemp").
 */
export function profileRoot(root = tmpdir()): string {
  const socket = path.join(root, `mcpvisor-chromium-${process.pid}-XXXXXX`, 'tmp') + SINGLETON_SOCKET;
  return (Buffer.byteLength(socket) <= MAX_SOCKET_PATH_BYTES && writable(root)) || !existsSync('/tmp') ? root : '/tmp';
}

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * A fresh profile directory per browser worker, named with its pid (common/process-dirs.ts: a
 * new one first removes those of workers killed with -9); `remove` deletes it (removeProfile).
 * Chromium's own temporary files (its `org.chromium.Chromium.*` singleton directories) go in
 * its `tmp`, given as TMPDIR (chromiumEnv), so they go with it.
 */
export function freshProfileDir(root = profileRoot()): { dir: string; remove(): Promise<void> } {
  const { dir } = freshProcessDir('mcpvisor-chromium-', root);
  mkdirSync(path.join(dir, 'tmp'));
  return { dir, remove: () => removeProfile(dir) };
}

/** The environment to launch Chromium with: ours, its temporary files inside `profileDir`. */
export function chromiumEnv(profileDir: string): NodeJS.ProcessEnv {
  return { ...process.env, TMPDIR: path.join(profileDir, 'tmp') };
}

/**
 * How long one launch may take (spawn, the DevTools pipe answering, the first page target) before
 * it counts as hung: puppeteer alone bounds it only by its protocolTimeout (180 s by default), and
 * a browser that never answered its pipe held every search for 3 minutes and was left running.
 * Measured on this 2-core machine: 0.55-1.2 s idle, up to 2 s with both cores busy, up to 5.3 s
 * with the cores three times oversubscribed and four launches at once. Decision: 20 s, about four
 * times the worst seen, and under the 30 s search budget so the search can say what timed out.
 */
export const LAUNCH_TIMEOUT_MS = 20_000;

/**
 * Added to the search budget to give puppeteer's protocolTimeout (the bound on each DevTools call).
 * Not less than the budget: Page.navigate answers only once the page's response has come (measured:
 * a 6 s answer under a 3 s protocolTimeout failed the navigation at 3 s), so a shorter bound would
 * cut a slow engine before the search's own deadline, which already ends every wait of a search.
 * What the bound is for is the calls nobody waits for any more (those of a search that has ended,
 * of a hung browser): they are dropped after budget + 5 s instead of 180 s.
 */
const PROTOCOL_SLACK_MS = 5_000;

/** puppeteer's `protocolTimeout` for searches of `searchTimeoutMs` (see PROTOCOL_SLACK_MS). */
export function protocolTimeoutMs(searchTimeoutMs: number): number {
  return searchTimeoutMs + PROTOCOL_SLACK_MS;
}

/** What puppeteer-cluster needs of `puppeteer`: its launcher. */
interface Launcher {
  launch(options: LaunchOptions): Promise<Browser>;
}

interface Launched {
  browser: Browser;
  profile: ReturnType<typeof freshProfileDir>;
}

export interface RelaunchingLauncherOptions {
  /** Bound of one launch in ms (default LAUNCH_TIMEOUT_MS); past it the launch fails with BROWSER_LAUNCH_TIMEOUT. */
  launchTimeoutMs?: number;
  /** Hears of each launch; `replaced`: not the first. */
  onLaunch?: (replaced: boolean) => void;
  /** Hears of each launch that failed or timed out (not of one ended by `dispose`); `replacing`: not the first. */
  onLaunchError?: (error: Error, replacing: boolean) => void;
}

/**
 * A `puppeteer` for puppeteer-cluster that gives each browser a fresh profile and, before it
 * launches the next one, kills the last one's process tree and removes its profile.
 * PageConcurrency relaunches the browser when it died or a page cannot be opened or closed
 * within 5 s; with the same options a hung Chromium (stopped, swapping) kept its profile's lock,
 * the new one handed itself over to it and exited, and every later search failed.
 * A launch that has not given a browser within `launchTimeoutMs` fails with McpvisorError
 * BROWSER_LAUNCH_TIMEOUT; it is killed with its process tree and group and its profile removed
 * first, so the next launch (the next search's) starts afresh. `stopLaunching` ends a launch in
 * flight the same way, at once, and makes later ones never complete (the cluster is being
 * dropped); `dispose` (after the cluster's close, or instead of it) does that, waits for the
 * launch, then kills and removes the current browser. `launchingSince` is when the launch in
 * flight began (performance.now() ms), if there is one; `launchedMs` the time spent launching
 * so far, the launch in flight included.
 */
export function relaunchingLauncher(
  base: Launcher,
  { launchTimeoutMs = LAUNCH_TIMEOUT_MS, onLaunch = () => {}, onLaunchError = () => {} }: RelaunchingLauncherOptions = {},
): Launcher & { stopLaunching(): void; dispose(): Promise<void>; readonly launchingSince: number | undefined; readonly launchedMs: number } {
  let current: Launched | undefined;
  // Not `current !== undefined`: a relaunch after one that failed replaces a browser too.
  let launchedBefore = false;
  let disposed = false;
  let inFlight: Promise<unknown> = Promise.resolve();
  let launching: { controller: AbortController; since: number } | undefined;
  // Time spent launching so far, ended launches and the one in flight (launchedMs).
  let endedLaunchesMs = 0;
  const retire = async () => {
    const last = current;
    current = undefined;
    if (last) await kill(last);
  };
  const start = async (options: LaunchOptions): Promise<Browser | undefined> => {
    if (disposed) return undefined;
    const replaced = launchedBefore;
    await retire();
    const profile = freshProfileDir();
    // Aborted, puppeteer kills the process group it spawned, at once; the signal stays attached
    // to a browser that launched, so it is aborted only while launching.
    const controller = new AbortController();
    const since = performance.now();
    launching = { controller, since };
    let browser: Browser | undefined;
    try {
      const starting = base.launch({ ...options, timeout: launchTimeoutMs, userDataDir: profile.dir, env: chromiumEnv(profile.dir), signal: controller.signal });
      browser = await beforeTime(raceSignal(starting, controller.signal), performance.now() + launchTimeoutMs);
      if (browser === undefined) {
        throw new McpvisorError('BROWSER_LAUNCH_TIMEOUT', `the browser launch did not finish within ${launchTimeoutMs} ms and was killed; the next search launches a new one`);
      }
    } catch (error) {
      controller.abort(error);
      await killLaunch(profile.dir);
      await profile.remove();
      if (!disposed) onLaunchError(error as Error, replaced);
      throw error;
    } finally {
      endedLaunchesMs += performance.now() - since;
      launching = undefined;
    }
    if (disposed) {
      await kill({ browser, profile });
      return undefined;
    }
    current = { browser, profile };
    launchedBefore = true;
    onLaunch(replaced);
    return browser;
  };
  return {
    launch(options) {
      const starting = start(options);
      inFlight = starting.catch(() => {});
      return starting.then((browser) => browser ?? new Promise<never>(() => {}));
    },
    stopLaunching() {
      disposed = true;
      launching?.controller.abort(new McpvisorError('SHUTTING_DOWN', 'the searcher closed while its browser was launching'));
    },
    async dispose() {
      this.stopLaunching();
      await inFlight;
      await retire();
    },
    get launchingSince() {
      return launching?.since;
    },
    get launchedMs() {
      return endedLaunchesMs + (launching ? performance.now() - launching.since : 0);
    },
  };
}

/**
 * Kills what a failed or hung launch left running, found by its profile directory (each launch has
 * its own): puppeteer, aborted, kills the group it spawned only while its first process lives, and
 * a browser stopped mid-launch kept its children and its profile otherwise.
 */
async function killLaunch(profileDir: string): Promise<void> {
  for (const pid of childrenWithArg(`--user-data-dir=${profileDir}`)) await killTree(pid, 'SIGKILL');
}

async function kill({ browser, profile }: Launched): Promise<void> {
  const child = browser.process();
  // puppeteer stops listening on its pipes once it has closed the connection, and a killed
  // browser's pipe then errors (ECONNRESET) with nobody to hear it, which ends the process.
  for (const stream of child?.stdio ?? []) stream?.on('error', () => {});
  // A browser killed from outside (-9) is gone, but not its children (zygote, renderers, network
  // service): re-parented away from it, they are still in its process group, and for a moment
  // still write into the profile; removing it then failed (ENOTEMPTY), and so did the relaunch.
  if (child && child.exitCode === null && child.signalCode === null) await killTree(child.pid, 'SIGKILL');
  else killGroup(child?.pid);
  await profile.remove();
}

/**
 * Removes a profile, retried (5 times, 100 ms apart and more) while its killed processes have not
 * quite died yet. Never throws: a profile left over is not worth failing a launch for; the next
 * worker's freshProfileDir removes it once this process is gone.
 */
async function removeProfile(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }).catch(() => {});
}
