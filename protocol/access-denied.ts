import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Why a file (or directory) the operator named could not be opened, for a message that follows
 * "<file>: ": for EACCES and EPERM, which directory on its path or the file itself refuses this process's user,
 * with its owner and mode, and how to fix it; for any other error, its code. The server often runs
 * as another user than the one who wrote its config (a service account, pm2 under its own
 * user), and a bare "EACCES" left them to find which of the directories was to blame.
 */
export function describeOpenError(file: string, error: unknown, kind: 'file' | 'directory' = 'file'): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== 'EACCES' && code !== 'EPERM') return code ?? String((error as Error | undefined)?.message ?? error);
  const who = typeof process.getuid === 'function' ? `this server's user (uid ${process.getuid()})` : "this server's user";
  const absolute = path.resolve(file);
  // The first directory on the way that does not let us through is the one to fix.
  const dirs: string[] = [];
  for (let dir = path.dirname(absolute); ; dir = path.dirname(dir)) {
    dirs.unshift(dir);
    if (dir === path.dirname(dir)) break;
  }
  for (const dir of dirs) {
    try {
      accessSync(dir, constants.X_OK);
    } catch {
      return `permission denied (${code}): the directory ${dir}${ownerAndMode(dir)} does not let ${who} through; give that user search (x) permission on it, or run the server as a user that has it`;
    }
  }
  if (kind === 'directory') {
    return `permission denied (${code}): ${absolute}${ownerAndMode(absolute)} cannot be entered and listed by ${who}; give that user read and search (r, x) permission on it (chmod, chown), or run the server as a user that has it`;
  }
  return `permission denied (${code}): ${absolute}${ownerAndMode(absolute)} is not readable by ${who}; make it readable by that user (chmod, chown), or run the server as a user that can read it`;
}

/**
 * Why this process's user cannot use `dir` as a directory to work in (enter and list it), as
 * describeOpenError words it; undefined when it can (or it does not exist: the caller says so).
 */
export function directoryAccessProblem(dir: string): string | undefined {
  try {
    accessSync(dir, constants.R_OK | constants.X_OK);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : describeOpenError(dir, error, 'directory');
  }
}

/** Why this process's user cannot write in `dir` (with its owner and mode), or undefined when it can. */
export function directoryWriteProblem(dir: string): string | undefined {
  try {
    accessSync(dir, constants.W_OK);
    return undefined;
  } catch (error) {
    const who = typeof process.getuid === 'function' ? `this server's user (uid ${process.getuid()})` : "this server's user";
    return `${dir}${ownerAndMode(dir)} is not writable by ${who} (${(error as NodeJS.ErrnoException).code})`;
  }
}

function ownerAndMode(target: string): string {
  try {
    const st = statSync(target);
    return ` (owner uid ${st.uid}, gid ${st.gid}, mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')})`;
  } catch {
    return '';
  }
}
