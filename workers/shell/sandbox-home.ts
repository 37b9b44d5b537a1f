import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isAtOrUnder } from './protected-paths';

/**
 * HOME inside the sandbox: a path that names nothing of the host. The second when the workspace
 * is at, above or below the first (`/home` as the workspace): its mount point would be made in the
 * user's directory. bubblewrap makes both in its own root, which holds only what it is told to.
 */
const HOME_INSIDE = ['/home/sandbox', '/sandbox-home'];

/**
 * The sandbox's home directory. Sandboxed commands used the workspace as HOME, so `git config
 * --global` wrote `.gitconfig` into the project, shells and `less` their histories, `npm config set`
 * its `.npmrc`, and an assistant's `git add -A` committed them. Now it is a directory of its own,
 * bound read-write at `inside` for every command.
 *
 * Decision: kept across commands and server restarts, one per workspace and server user, under
 * `$XDG_STATE_HOME/mcpvisor/sandbox-home/` (else `~/.local/state/…`), mode 0700, never removed by
 * the server: stdio clients (Claude Desktop) start a new server each session, and a home cleaned
 * at each stop lost the git identity set in the last one. It holds what commands put there on
 * purpose: caches go to each command's private /tmp (command-env.ts), so it stays small unless a
 * command fills it, which it can as it can the workspace (each file up to the file-size limit).
 *
 * Without a host directory (`host` undefined, `problem` says why) each command gets an empty home
 * of its own (a tmpfs, the size of /tmp) instead: the sandbox is as tight, only nothing is kept.
 */
export interface SandboxHome {
  /** HOME inside the sandbox. */
  inside: string;
  /** Real path of the host directory bound at `inside`; undefined: an empty tmpfs per command. */
  host?: string;
  /** Why there is no host directory, naming it, when there is none. */
  problem?: string;
}

export function homeInside(workspace: string): string {
  return HOME_INSIDE.find((dir) => !isAtOrUnder(dir, workspace) && !isAtOrUnder(workspace, dir))!;
}

/** The host directory a workspace's sandbox home lives in (not created); undefined without a home directory. */
export function sandboxHomeDir(workspace: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const xdg = env.XDG_STATE_HOME;
  let state: string | undefined;
  if (xdg && path.isAbsolute(xdg)) state = xdg;
  else {
    try {
      const home = os.homedir();
      if (home) state = path.join(home, '.local', 'state');
    } catch {
      // No home directory (a uid without a passwd entry and no HOME).
    }
  }
  if (!state) return undefined;
  // The workspace's last name for people who look, its hash so that two workspaces never share one.
  const name = (path.basename(workspace).replace(/[^A-Za-z0-9._-]/g, '_') || 'workspace').slice(0, 40);
  const hash = createHash('sha256').update(workspace).digest('hex').slice(0, 16);
  return path.join(state, 'mcpvisor', 'sandbox-home', `${name}-${hash}`);
}

/**
 * Finds or makes the host directory of the workspace's sandbox home. It must lie outside the
 * workspace, by real path, with every directory above it: bubblewrap follows a symlink given as
 * the source of a bind, so a command that replaced a home inside the workspace (the workspace being
 * the user's own home directory) with a link to `/` had the host's root mounted writable at HOME in
 * the next sandbox, as root a way out. A directory that exists must be this user's and no symlink;
 * its mode is set to 0700.
 */
export function prepareSandboxHome(workspace: string, env: NodeJS.ProcessEnv = process.env): SandboxHome {
  const inside = homeInside(workspace);
  const dir = sandboxHomeDir(workspace, env);
  const fallback = (problem: string): SandboxHome => ({ inside, problem });
  if (!dir) return fallback('the server\'s user has no home directory and XDG_STATE_HOME is not set, so there is no place to keep it');
  // The last name is not followed: a symlink there is refused below, its target never chmod'ed.
  const real = path.join(realPathAhead(path.dirname(dir)), path.basename(dir));
  if (isAtOrUnder(real, workspace) || isAtOrUnder(workspace, real)) {
    return fallback(`${dir} would lie in the workspace ${workspace}, where a command could replace it with a symlink to the host (set XDG_STATE_HOME to a directory outside the workspace)`);
  }
  try {
    mkdirSync(real, { recursive: true, mode: 0o700 });
  } catch (error) {
    return fallback(`${dir} cannot be made: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message} (set XDG_STATE_HOME to a directory the server's user can write)`);
  }
  try {
    const stat = lstatSync(real);
    if (stat.isSymbolicLink()) return fallback(`${dir} is a symlink`);
    if (!stat.isDirectory()) return fallback(`${dir} is not a directory`);
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid) return fallback(`${dir} belongs to uid ${stat.uid}, not to the server's user (uid ${uid})`);
    if ((stat.mode & 0o777) !== 0o700) chmodSync(real, 0o700);
    // Made between the check above and here by someone else: look again by real path.
    if (realpathSync(real) !== real) return fallback(`${dir} became a symlink while it was made`);
  } catch (error) {
    return fallback(`${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return { inside, host: real };
}

/**
 * Makes the home again when it has gone (an operator's `rm -rf ~/.local/state`): bubblewrap
 * cannot bind a missing source, and every sandbox failed to start until the worker restarted.
 */
export function ensureSandboxHome(home: SandboxHome): void {
  if (!home.host) return;
  try {
    mkdirSync(home.host, { recursive: true, mode: 0o700 });
  } catch {
    // The sandbox's own start says what is wrong.
  }
}

/** `file`'s real path, following symlinks in the part of it that exists. */
function realPathAhead(file: string): string {
  const rest: string[] = [];
  for (let dir = path.resolve(file); ; dir = path.dirname(dir)) {
    try {
      return path.join(realpathSync(dir), ...rest);
    } catch {
      if (dir === path.dirname(dir)) return path.resolve(file);
      rest.unshift(path.basename(dir));
    }
  }
}
