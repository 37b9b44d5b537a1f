import { existsSync, mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, LaunchOptions } from 'puppeteer-core';
import { killGroup, killTree } from '../common/kill-tree';
import { freshProcessDir } from '../common/process-dirs';

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

/**
 * A fresh profile directory per browser worker, named with its pid (common/process-dirs.ts: a
 * new one first removes those of workers killed with -9); `remove` deletes it (removeProfile).
 * Chromium's own temporary files (its `org.chromium.Chromium.*` singleton directories) go in
 * its `tmp`, given as TMPDIR (chromiumEnv), so they go with it.
 */
export function freshProfileDir(root = tmpdir()): { dir: string; remove(): Promise<void> } {
  const { dir } = freshProcessDir('mcpvisor-chromium-', root);
  mkdirSync(path.join(dir, 'tmp'));
  return { dir, remove: () => removeProfile(dir) };
}

/** The environment to launch Chromium with: ours, its temporary files inside `profileDir`. */
export function chromiumEnv(profileDir: string): NodeJS.ProcessEnv {
  return { ...process.env, TMPDIR: path.join(profileDir, 'tmp') };
}

/** What puppeteer-cluster needs of `puppeteer`: its launcher. */
interface Launcher {
  launch(options: LaunchOptions): Promise<Browser>;
}

interface Launched {
  browser: Browser;
  profile: ReturnType<typeof freshProfileDir>;
}

/**
 * A `puppeteer` for puppeteer-cluster that gives each browser a fresh profile and, before it
 * launches the next one, kills the last one's process tree and removes its profile.
 * PageConcurrency relaunches the browser when it died or a page cannot be opened or closed
 * within 5 s; with the same options a hung Chromium (stopped, swapping) kept its profile's lock,
 * the new one handed itself over to it and exited, and every later search failed. `onLaunch`
 * hears of each launch (`replaced`: not the first), `onLaunchError` of each that failed
 * (`replacing`: likewise). `dispose` (after the cluster's close, or instead of it) kills and
 * removes the current browser, waiting for a launch in flight; a launch asked for after it never
 * completes, as the cluster is being dropped.
 */
export function relaunchingLauncher(
  base: Launcher,
  onLaunch: (replaced: boolean) => void = () => {},
  onLaunchError: (error: Error, replacing: boolean) => void = () => {},
): Launcher & { dispose(): Promise<void> } {
  let current: Launched | undefined;
  // Not `current !== undefined`: a relaunch after one that failed replaces a browser too.
  let launchedBefore = false;
  let disposed = false;
  let inFlight: Promise<unknown> = Promise.resolve();
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
    let browser: Browser;
    try {
      browser = await base.launch({ ...options, userDataDir: profile.dir, env: chromiumEnv(profile.dir) });
    } catch (error) {
      await profile.remove();
      onLaunchError(error as Error, replaced);
      throw error;
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
    async dispose() {
      disposed = true;
      await inFlight;
      await retire();
    },
  };
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
