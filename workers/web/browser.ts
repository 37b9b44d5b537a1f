import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
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
 * new one first removes those of workers killed with -9); `remove` deletes it (call on close).
 * Chromium's own temporary files (its `org.chromium.Chromium.*` singleton directories) go in
 * its `tmp`, given as TMPDIR (chromiumEnv), so they go with it.
 */
export function freshProfileDir(root = tmpdir()): { dir: string; remove(): void } {
  const profile = freshProcessDir('mcpvisor-chromium-', root);
  mkdirSync(path.join(profile.dir, 'tmp'));
  return profile;
}

/** The environment to launch Chromium with: ours, its temporary files inside `profileDir`. */
export function chromiumEnv(profileDir: string): NodeJS.ProcessEnv {
  return { ...process.env, TMPDIR: path.join(profileDir, 'tmp') };
}
