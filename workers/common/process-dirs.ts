import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A private temporary directory for this process, named `<prefix><pid>-XXXXXX`; `remove` deletes
 * it (on close or exit). Why the pid: a worker killed with -9 (how the pool ends one that hangs)
 * cannot remove its own, so each new one first removes those of processes that are gone
 * (sweepProcessDirs). Browser profiles were ~2.5 MB each; shell workers left ~60 FIFOs each.
 */
export function freshProcessDir(prefix: string, root = tmpdir()): { dir: string; remove(): void } {
  sweepProcessDirs(prefix, root);
  const dir = mkdtempSync(path.join(root, `${prefix}${process.pid}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Removes our user's `<prefix><pid>-…` directories in `root` whose process is gone. Never throws. */
export function sweepProcessDirs(prefix: string, root = tmpdir()): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(/^(\d+)-/.exec(name.slice(prefix.length))?.[1]);
    if (!pid || alive(pid)) continue;
    const dir = path.join(root, name);
    try {
      if (statSync(dir).uid === process.getuid?.()) rmSync(dir, { recursive: true, force: true });
    } catch {
      // Removed meanwhile, or not ours.
    }
  }
}

/** A pid reused by another process keeps the directory: the safe way to be wrong. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
