import { fork, type ChildProcess } from 'node:child_process';
import { BULK_FD, BULK_FD_ENV } from '../../protocol/bulk-text';
import { moveExtraCaCerts } from '../../protocol/extra-ca-certs';
import { watchOomKills } from '../../protocol/exit-reason';
import { fdExhaustedError, hasFreeFds, spawnFds } from '../../protocol/fd-limit';
import path from 'node:path';

/**
 * A worker process forked before the supervisor has loaded anything, so that Node's own start
 * and the worker's module loading (~90 ms) overlap the supervisor's (~150 ms of config schema and
 * SDK) instead of following them. A CLI that knows its one worker module forks it first thing
 * (openapi-mcp-server); the pool adopts it for its first worker when it would have forked the
 * same thing. A spare nobody adopts dies with the supervisor: workers exit when their IPC channel
 * closes.
 */
const spares = new Map<string, { child: ChildProcess; env: NodeJS.ProcessEnv }>();

/** Environment variables a worker never inherits: our own secrets. */
const SECRET_ENV = /^(MCPVISOR_AUTH_TOKEN|API_HEADERS)$/;

/** The environment workers get by default: ours without our secrets. */
export function workerEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !SECRET_ENV.test(name)));
}

/**
 * The fork options every pool worker gets (process-pool.ts), with the defaults for env and execArgv.
 * Throws `BUSY` (protocol/fd-limit.ts) when the supervisor is out of file descriptors: Node then
 * makes neither the IPC channel nor the pipes, and the 'error' it emits a tick later, found by no
 * listener yet, ended the supervisor with a stack trace.
 */
export function forkWorker(module: string, env: NodeJS.ProcessEnv = process.env, execArgv: string[] = []): ChildProcess {
  if (!hasFreeFds(spawnFds(4))) throw forkFailed(module); // the IPC channel, the bulk pipe, stdout and stderr
  const child = fork(module, [], {
    // Worker stdout and stderr are read into log lines (worker-output.ts): in stdio mode our
    // stdout carries only JSON-RPC, and raw output reached our stderr unbounded, naming no
    // toolset. Its fd BULK_FD is the pipe of its large tool list (protocol/bulk-text.ts).
    stdio: ['ignore', 'pipe', 'pipe', 'ipc', 'pipe'],
    // Its own process group, so the whole group can be killed at once.
    detached: true,
    // NODE_EXTRA_CA_CERTS is moved aside: Node would read it at the worker's start (~50-90 ms).
    env: { ...moveExtraCaCerts(env, execArgv), [BULK_FD_ENV]: String(BULK_FD) },
    execArgv,
  });
  if (child.stdio === undefined) {
    child.on('error', () => undefined);
    throw forkFailed(module);
  }
  watchOomKills(child);
  // Read when the worker announces a list on it; never what keeps the supervisor alive.
  (child.stdio[BULK_FD] as { unref?: () => void } | null)?.unref?.();
  return child;
}

const FORK_FAILED = Symbol('fork failed');

function forkFailed(module: string): Error {
  return Object.assign(fdExhaustedError(`cannot start a worker (${path.basename(module)})`), { [FORK_FAILED]: true });
}

/** A fork's error, with what it means for the errors a fork fails with when the machine is at a limit. */
export function forkErrorText(error: NodeJS.ErrnoException): string {
  if (error.code === 'EAGAIN') return `${error.message}: no process could be made, the machine, the user (ulimit -u) or the server's cgroup (pids.max) is at its limit of processes and threads`;
  if (error.code === 'ENOMEM') return `${error.message}: no process could be made, out of memory`;
  return error.message;
}

/** True for forkWorker's error: no process was made, so no exit will come to schedule a retry. */
export function isForkFailure(error: unknown): boolean {
  return typeof error === 'object' && error !== null && FORK_FAILED in error;
}

/** Output pipes keep the supervisor alive only once a pool holds the worker (adoptSpare). */
function refOutput(child: ChildProcess, ref: boolean): void {
  for (const pipe of [child.stdout, child.stderr] as Array<{ ref?: () => void; unref?: () => void } | null>) {
    if (ref) pipe?.ref?.();
    else pipe?.unref?.();
  }
}

/** Forks a spare worker of `module` now (with workerEnv() and no execArgv). */
export function forkSpare(module: string): void {
  if (spares.has(module)) return;
  const env = workerEnv();
  let child: ChildProcess;
  try {
    child = forkWorker(module, env);
  } catch {
    return; // the pool forks its own and says why it cannot
  }
  // Unreferenced until adopted: a CLI that exits early (--help, a bad flag) is not kept alive.
  child.unref();
  (child.channel as { unref?: () => void } | undefined)?.unref?.();
  refOutput(child, false);
  spares.set(module, { child, env });
}

/**
 * The spare of `module` if there is one, alive, and forked as the caller would fork it (the same
 * environment, no execArgv); else undefined, and a spare that does not fit is killed.
 */
export function adoptSpare(module: string, env: NodeJS.ProcessEnv | undefined, execArgv: string[] | undefined): ChildProcess | undefined {
  const spare = spares.get(module);
  if (!spare) return undefined;
  spares.delete(module);
  const { child } = spare;
  const fits = sameEnv(env ?? process.env, spare.env) && (execArgv === undefined || execArgv.length === 0);
  if (!fits || child.exitCode !== null || child.signalCode !== null || !child.connected) {
    child.kill('SIGKILL');
    return undefined;
  }
  child.ref();
  (child.channel as { ref?: () => void } | undefined)?.ref?.();
  refOutput(child, true);
  return child;
}

function sameEnv(a: NodeJS.ProcessEnv, b: NodeJS.ProcessEnv): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}
