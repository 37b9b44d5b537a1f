import { spawn } from 'node:child_process';
import { chownSync, existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { connectStdioProcess, type StdioConnection } from './mcp';
import { bin, ROOT } from './processes';
import { tempDir } from './temp';

const isRoot = process.getuid?.() === 0;

/** nobody's uid and gid (every Debian system has them): the user a test run as root drops to. */
export const NOBODY = 65534;

/** The uid the servers of these tests run as: nobody as root, else the test's own user. */
export const ORDINARY_UID = isRoot ? NOBODY : process.getuid!();

/**
 * A command line that runs `argv` as an ordinary user: as root, as nobody (setpriv, no
 * supplementary groups); else as the test's own user. With `userNamespaces: false` it runs inside
 * a user namespace of its own whose `user.max_user_namespaces` is 0, which the kernel checks for
 * every namespace made inside it: a host where user namespaces are turned off, without touching
 * the host's setting. The user is mapped to itself, so it keeps its uid and file access.
 */
export function asOrdinaryUser(argv: string[], options: { userNamespaces?: boolean } = {}): { command: string; args: string[] } {
  const drop = isRoot ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'] : [];
  const noNamespaces =
    options.userNamespaces === false
      ? // --keep-caps keeps the namespace's capabilities for the write; the program gets none.
        ['unshare', '--user', '--map-current-user', '--keep-caps', '/bin/sh', '-c', 'echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --inh-caps=-all "$@"', 'sh']
      : [];
  const full = [...reachPrefix(), ...drop, ...noNamespaces, ...argv];
  return { command: full[0], args: full.slice(1) };
}

/** A fresh directory the ordinary user owns (mode 0700), removed after the file's tests. */
export function ordinaryUserDir(prefix: string): string {
  const dir = tempDir(prefix);
  if (isRoot) chownSync(dir, NOBODY, NOBODY);
  return dir;
}

/** True when every user may enter every directory from `/` down to `dir`. */
function reachable(dir: string): boolean {
  for (let at = dir; ; at = path.dirname(at)) {
    if ((statSync(at).mode & 0o001) === 0) return false;
    if (at === '/') return true;
  }
}

/** The directory closest to `/` on the way to `dir` that other users may not enter. */
function topBlocking(dir: string): string {
  const chain: string[] = [];
  for (let at = dir; ; at = path.dirname(at)) {
    chain.unshift(at);
    if (at === '/') break;
  }
  return chain.find((at) => (statSync(at).mode & 0o001) === 0)!;
}

/**
 * What a server run as nobody loads must be reachable by nobody: the checkout (its dist/ and
 * node_modules), ../shared beside it and the node binary. A checkout cloned under /root (mode
 * 0700) is not, and CI may clone anywhere: then the server starts in a mount namespace of its
 * own where each blocking directory is a tmpfs (mode 0755) holding bind mounts of just those
 * paths, at the same paths, so nothing on the host changes and every path a test gives still works.
 */
function reachPrefix(): string[] {
  if (!isRoot) return [];
  const shared = path.join(ROOT, '..', 'shared');
  const needed = [ROOT, ...(existsSync(shared) ? [shared] : []), path.dirname(process.execPath)].map((dir) => realpathSync(dir)).filter((dir) => !reachable(dir));
  if (needed.length === 0) return [];
  const lines = ['set -e'];
  const byBlocking = new Map<string, string[]>();
  for (const dir of needed) byBlocking.set(topBlocking(dir), [...(byBlocking.get(topBlocking(dir)) ?? []), dir]);
  for (const [blocking, dirs] of byBlocking) {
    // The host's directory is kept reachable at a stage while the tmpfs covers it, then let go.
    lines.push(`stage=$(mktemp -d /tmp/mcpvisor-reach-XXXXXX)`, `mount --bind ${quote(blocking)} "$stage"`, `mount -t tmpfs -o mode=0755 tmpfs ${quote(blocking)}`);
    for (const dir of dirs) lines.push(`mkdir -p ${quote(dir)}`, `mount --bind "$stage"${quote(dir.slice(blocking.length))} ${quote(dir)}`);
    lines.push('umount "$stage"', 'rmdir "$stage"');
  }
  lines.push('exec "$@"');
  return ['unshare', '--mount', '--propagation', 'private', '/bin/sh', '-c', lines.join('\n'), 'sh'];
}

function quote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * Runs `argv` as the ordinary user to its end, stdin empty (a stdio server stops at its end),
 * with `env` alone besides PATH; resolves with its exit code (or signal) and stderr.
 */
export function runAsOrdinaryUser(argv: string[], env: Record<string, string> = {}): Promise<{ code: number | string | null; stderr: string }> {
  const { command, args } = asOrdinaryUser(argv);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: signal ?? code, stderr }));
  });
}

/**
 * A built entry point over stdio as the ordinary user (see asOrdinaryUser), connected with the SDK
 * client; its environment is `env` alone besides PATH and a HOME that does not exist (nobody's).
 */
export function connectStdioAsOrdinaryUser(entry: string, env: Record<string, string>, options: { userNamespaces?: boolean } = {}): Promise<StdioConnection> {
  const { command, args } = asOrdinaryUser([process.execPath, bin(entry)], options);
  return connectStdioProcess(command, args, { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', ...env });
}
