import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

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

const PROFILE_PREFIX = 'mcpvisor-chromium-';

/**
 * A fresh profile directory per browser worker, named with its pid; `remove` deletes it (call on
 * close). A worker killed with -9 cannot remove its own (~2.5 MB each), so each new one first
 * removes those of workers that are gone (sweepProfiles).
 */
export function freshProfileDir(root = tmpdir()): { dir: string; remove(): void } {
  sweepProfiles(root);
  const dir = mkdtempSync(path.join(root, `${PROFILE_PREFIX}${process.pid}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Removes our user's profile directories in `root` whose process is gone. Never throws. */
export function sweepProfiles(root = tmpdir()): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^mcpvisor-chromium-(\d+)-/.exec(name)?.[1]);
    if (!pid || alive(pid)) continue;
    const dir = path.join(root, name);
    try {
      if (statSync(dir).uid === process.getuid?.()) rmSync(dir, { recursive: true, force: true });
    } catch {
      // Removed meanwhile, or not ours.
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
