import { lstatSync, opendirSync } from 'node:fs';
import path from 'node:path';

/** Lock files git makes in its directory while it changes the file of that name; a git killed meanwhile leaves them. */
const LOCK_FILES = ['index.lock', 'HEAD.lock', 'ORIG_HEAD.lock', 'config.lock', 'packed-refs.lock', 'shallow.lock'];
/** Directories of the workspace looked at for a repository of their own (`cd app && git add .`). */
const MAX_DIRS = 1000;
/** File times come from the kernel's coarse clock, a tick behind Date.now(). */
const CLOCK_SLACK_MS = 100;

/**
 * git lock files made since `sinceMs` and still there, in the workspace's repository and in those
 * of its directories one level down. A command stopped at its timeout or cancelled kills a git
 * that holds one (a slow `git add`, a clean filter, a large commit), and then every git command in
 * that repository failed with "Unable to create '…/index.lock': File exists" and no word of why.
 * Only reported, never removed: another git, of another session, may hold it. Only looked for
 * after a command was stopped; symlinks are not followed (a command could point `.git` anywhere).
 */
export function gitLocksLeft(workspace: string, sinceMs: number): string[] {
  const found: string[] = [];
  const look = (dir: string) => {
    const git = path.join(dir, '.git');
    if (!isDirectory(git)) return;
    for (const name of LOCK_FILES) {
      try {
        const stat = lstatSync(path.join(git, name));
        if (stat.isFile() && stat.mtimeMs >= sinceMs - CLOCK_SLACK_MS) found.push(path.join(git, name));
      } catch {
        // Not there: the usual case.
      }
    }
  };
  look(workspace);
  let listing;
  try {
    listing = opendirSync(workspace);
  } catch {
    return found;
  }
  try {
    for (let seen = 0, entry = listing.readSync(); entry && seen < MAX_DIRS; entry = listing.readSync(), seen++) {
      if (entry.isDirectory() && entry.name !== '.git') look(path.join(workspace, entry.name));
    }
  } catch {
    // The workspace changed under us: what was found so far.
  } finally {
    listing.closeSync();
  }
  return found;
}

/** The note of an exec result that names them and what to do. */
export function gitLockNote(locks: readonly string[]): string {
  const list = locks.join(', ');
  return `git was stopped while it held ${locks.length === 1 ? 'a lock file' : 'lock files'}: ${list} ${locks.length === 1 ? 'was' : 'were'} made while the command ran and ${locks.length === 1 ? 'is' : 'are'} still there, so the next git command in that repository fails with "File exists"; if no other git runs there, remove ${locks.length === 1 ? 'it' : 'them'} (rm ${locks.join(' ')}) and check the repository with git status`;
}

function isDirectory(file: string): boolean {
  try {
    return lstatSync(file).isDirectory();
  } catch {
    return false;
  }
}
