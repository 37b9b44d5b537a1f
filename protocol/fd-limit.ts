import { closeSync, openSync, readFileSync } from 'node:fs';
import { McpvisorError } from './errors';

/**
 * This process's soft limit of open file descriptors (RLIMIT_NOFILE), read once at load: at the
 * limit, reading /proc/self/limits would itself fail. Undefined where there is no /proc.
 */
const NOFILE_LIMIT = readNofileLimit();

function readNofileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((row) => row.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    return soft && /^\d+$/.test(soft) ? Number(soft) : undefined;
  } catch {
    return undefined;
  }
}

/** True for the errors of a process or a system out of file descriptors (EMFILE, ENFILE). */
export function isFdExhaustion(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EMFILE' || code === 'ENFILE';
}

/**
 * The error a caller sees when `what` (`cannot start /bin/sh`) failed for want of file
 * descriptors: `BUSY` (it works again once other calls have closed theirs), naming the limit and
 * where it is raised; `retry` adds that a later try may work (a call, not a start). `error`
 * without a code (a spawn Node gave up before making its pipes, which it does only on EMFILE and
 * ENFILE) counts as EMFILE, by far the likelier.
 */
export function fdExhaustedError(what: string, error?: unknown, options: { retry?: boolean } = {}): McpvisorError {
  return new McpvisorError('BUSY', `${what}: ${fdExhaustedReason(error, options)}`);
}

/** The text of fdExhaustedError after its `what`: which limit, and where it is raised. */
export function fdExhaustedReason(error?: unknown, options: { retry?: boolean } = {}): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const retry = options.retry ? '; try again when other calls have finished' : '';
  if (code === 'ENFILE') return `the system's table of open files is full (ENFILE; sysctl fs.file-max)${retry}`;
  const limit = NOFILE_LIMIT === undefined ? 'its limit of' : `its limit of ${NOFILE_LIMIT}`;
  return (
    `too many open files (EMFILE): process ${process.pid} reached ${limit} open file descriptors ` +
    `(RLIMIT_NOFILE: raise it with ulimit -n, or LimitNOFILE= in a systemd unit)${retry}`
  );
}

/**
 * The descriptors a spawn holds at once for `pipes` stdio pipes (Node makes each a socket pair;
 * the IPC channel is one too), with libuv's pipe that reports a failed exec.
 */
export function spawnFds(pipes: number): number {
  return 2 * pipes + 2;
}

/**
 * True when `count` more descriptors can be opened now (each is opened on /dev/null and closed
 * again, a few µs). Checked before a spawn: one that fails for want of descriptors halfway
 * leaks the ends of the socket pairs libuv had made (Node 20; seen as `socket:` entries that no
 * handle owns), so every failure took more, and a worker once at its limit stayed there.
 */
export function hasFreeFds(count: number): boolean {
  const opened: number[] = [];
  try {
    for (let i = 0; i < count; i += 1) opened.push(openSync('/dev/null', 'r'));
    return true;
  } catch (error) {
    if (isFdExhaustion(error)) return false;
    return true; // no /dev/null here: let the spawn say what is wrong
  } finally {
    for (const fd of opened) closeSync(fd);
  }
}
