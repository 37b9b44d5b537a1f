import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { McpvisorError } from '../../protocol/errors';
import { fdExhaustedError, hasFreeFds, isFdExhaustion, spawnFds } from '../../protocol/fd-limit';
import { killTree } from '../common/kill-tree';
import type { CommandCgroup } from './command-cgroups';
import { captureOutput } from './output-capture';
import type { OrphanGuard } from './orphan-guard';
import { outputPipes, releasePipes, type OutputPipes } from './output-pipes';
import type { SourceBytes } from './reply-budget';
import type { Readable } from 'node:stream';

export interface RunOptions {
  /** The program and its arguments: `/bin/sh -c CMD`, or bwrap's argv around it. */
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Wall-clock limit in ms; past it the whole tree is killed and `timedOut` is set. */
  timeoutMs: number;
  /** The output cap per stream in bytes (spec 002: 10 MB); the rest is read and dropped. */
  maxOutputBytes: number;
  /** Of the capped output, hold only the first and last `keepBytes` (default: all); see output-capture.ts. */
  keepBytes?: number;
  /** Aborting kills the whole tree and sets `isCanceled`. */
  signal?: AbortSignal;
  /** A process started ahead by `prepareCommand` (same file, args and env) that reads `input`. */
  prepared?: PreparedCommand;
  /** What `prepared` reads on its stdin (the command), then EOF. */
  input?: string;
  /** Kills the command's process group should the worker die first (orphan-guard.ts); unconfined mode. */
  guard?: OrphanGuard;
  /** Makes the cgroup a command started here (not `prepared`) runs in (command-cgroups.ts); none: no cgroup. */
  cgroups?: { create(): CommandCgroup };
}

/** A command process started ahead of its command, waiting on its stdin. */
export interface PreparedCommand {
  child: ChildProcess;
  commandId: string;
  /** Its stdout and stderr (output-pipes.ts, or Node's). */
  output: [Readable, Readable];
  /** The cgroup it runs in, when commands get one. */
  cgroup?: CommandCgroup;
}

export interface RunResult {
  stdout: string;
  stderr: string;
  /** Exit code, or null when the command ended on a signal. */
  exitCode: number | null;
  /** The signal that ended the command; always SIGKILL (and `exitCode` null) after a timeout or cancel. */
  signal: string | null;
  durationMs: number;
  timedOut: boolean;
  isCanceled: boolean;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** Bytes the command wrote to each stream, kept or not. */
  stdoutBytes: number;
  stderrBytes: number;
  pid: number | undefined;
  /** Whether the kernel killed a process of the command at its cgroup's memory limit. */
  oomKilled: boolean;
  /** Whether the command's cgroup refused it a process or thread (its pids.max). */
  processLimitReached: boolean;
  /** Output bytes a slice of `stdout` or `stderr` shows, for the cut markers of a reply (not sent). */
  sourceBytes: { stdout: SourceBytes; stderr: SourceBytes };
}

/** Every command's environment carries this variable with a fresh id, so its descendants can be found. */
export const COMMAND_ID_ENV = 'MCPVISOR_COMMAND_ID';

/** How long the pipes may stay open once the command's process group is gone (an escaped writer). */
const DRAIN_AFTER_EXIT_MS = 200;

/**
 * Runs one command to its end and never rejects for the command's own failure: a non-zero exit,
 * a signal, a timeout and a cancel are all fields of the result (execa's flags). Rejects only when
 * the program cannot be started (`INTERNAL`, with the spawn error).
 *
 * - stdin is `/dev/null`: a command that reads it gets EOF at once.
 * - The child is a process-group leader (detached). At the timeout or on abort the tree is killed
 *   with SIGKILL at once: tree-kill (which walks `ps`), the group (`kill(-pid)`), and every process
 *   whose environment still holds the command's `MCPVISOR_COMMAND_ID` (double-forked daemons that
 *   left both the tree and the group; Linux /proc only; a process that clears its environment
 *   escapes this, but not the sandbox's pid namespace). No SIGTERM
 *   grace, by decision: a timed-out command must not outlive the result. When the command exits
 *   normally its process group is killed too, so background jobs (`sleep 100 &`) do not outlive it;
 *   a process that left the group (setsid) survives unless the sandbox's pid namespace is in use.
 *   With `guard`, the group is also killed if the worker dies before the command (orphan-guard.ts).
 * - With a cgroup (`cgroups`, or the prepared process's), the command runs in it from its first
 *   instruction, and every process left in it is killed at the timeout, on abort and when the
 *   command exits, setsid and double-forked daemons included; then it is removed, or, found empty,
 *   kept for a later command (command-cgroups.ts).
 *   When it cannot be made, the call rejects with `INTERNAL` and nothing runs.
 * - Output is counted while it is read: up to `maxOutputBytes` per stream is kept (its head and
 *   tail when `keepBytes` is smaller), the rest is read and dropped: the command is not killed for
 *   writing much (a verbose build must not die of SIGPIPE) and its exit code stays meaningful; the
 *   timeout bounds a command that never stops writing. The kept bytes are decoded as UTF-8.
 */
export async function runCommand(options: RunOptions): Promise<RunResult> {
  const started = performance.now();
  const prepared = options.prepared && isWaiting(options.prepared.child) ? options.prepared : undefined;
  if (options.prepared && !prepared) discardPrepared(options.prepared);
  const pipes = prepared || options.signal?.aborted ? undefined : await outputPipes();
  if (options.signal?.aborted) {
    if (prepared) discardPrepared(prepared);
    releasePipes(pipes);
    throw new McpvisorError('CANCELLED', 'the call was cancelled before the command started');
  }
  let cgroup: CommandCgroup | undefined;
  try {
    cgroup = prepared ? prepared.cgroup : options.cgroups?.create();
  } catch (error) {
    releasePipes(pipes);
    throw error;
  }
  return new Promise<RunResult>((resolve, reject) => {
    const commandId = prepared?.commandId ?? randomUUID();
    const argv = cgroup && !prepared ? cgroup.wrap(options.file, options.args) : options;
    let proc: { child: ChildProcess; output: [Readable, Readable] };
    try {
      proc = prepared ?? startProcess(argv.file, argv.args, options.cwd, { ...options.env, [COMMAND_ID_ENV]: commandId }, options.input === undefined ? 'ignore' : 'pipe', pipes);
    } catch (error) {
      cgroup?.release();
      throw error;
    }
    const child = proc.child;
    options.guard?.watch(child.pid);
    if (options.input !== undefined) {
      child.stdin!.on('error', () => undefined); // a command that never reads its stdin is no error
      child.stdin!.end(options.input);
    }
    const stdout = captureOutput(proc.output[0], options.maxOutputBytes, options.keepBytes);
    const stderr = captureOutput(proc.output[1], options.maxOutputBytes, options.keepBytes);
    let timedOut = false;
    let isCanceled = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let spawnError: Error | undefined;
    let drainTimer: NodeJS.Timeout | undefined;

    const kill = () => {
      cgroup?.kill();
      void killTree(child.pid, 'SIGKILL').then(() => killMarked(commandId));
    };
    const timer = setTimeout(() => {
      // Exited, its group killed, only an escaped writer's pipes left to drain: nothing to stop.
      if (exit) return;
      timedOut = true;
      kill();
    }, options.timeoutMs);
    const onAbort = () => {
      if (exit) return;
      isCanceled = true;
      kill();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });

    const running = { pid: child.pid, commandId, cgroup };
    if (prepared) RUNNING.delete(PREPARED.get(prepared.child)!);
    RUNNING.add(running);
    const finish = () => {
      RUNNING.delete(running);
      clearTimeout(timer);
      clearTimeout(drainTimer);
      options.signal?.removeEventListener('abort', onAbort);
      const oomKilled = cgroup?.oomKilled() ?? false;
      const processLimitReached = cgroup?.processLimitReached() ?? false;
      cgroup?.release();
      if (spawnError) {
        reject(isFdExhaustion(spawnError) ? fdExhaustedError(`cannot start ${options.file}`, spawnError, { retry: true }) : new McpvisorError('INTERNAL', `cannot start ${options.file}: ${spawnError.message}`));
        return;
      }
      // A command we stopped reports the SIGKILL we sent, in both modes: killing a tree takes a
      // `ps` walk, and meanwhile its shell may exit 0 (a `wait` whose job was killed first) or, in
      // the sandbox, bwrap may report 137. Decision: that code is not the command's exit status.
      const stopped = timedOut || isCanceled;
      resolve({
        stdout: stdout.text(),
        stderr: stderr.text(),
        exitCode: stopped ? null : exit?.code ?? null,
        signal: stopped ? 'SIGKILL' : exit?.signal ?? null,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        timedOut,
        isCanceled,
        stdoutTruncated: stdout.truncated(),
        stderrTruncated: stderr.truncated(),
        stdoutBytes: stdout.total(),
        stderrBytes: stderr.total(),
        pid: child.pid,
        oomKilled,
        processLimitReached,
        sourceBytes: { stdout: stdout.sourceBytes, stderr: stderr.sourceBytes },
      });
    };
    let closed = 0;
    const onStreamClosed = () => {
      if (++closed === 2 && exit) finish();
    };
    stdout.closed.then(onStreamClosed);
    stderr.closed.then(onStreamClosed);

    child.on('error', (error) => {
      spawnError = error;
      exit = { code: null, signal: null };
      stdout.destroy();
      stderr.destroy();
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Background jobs of the command share its group: they end with it; what left the group, with its cgroup.
      if (child.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // The group is empty already.
        }
      }
      cgroup?.kill();
      options.guard?.release(child.pid);
      if (closed === 2) finish();
      else {
        drainTimer = setTimeout(() => {
          stdout.destroy();
          stderr.destroy();
        }, DRAIN_AFTER_EXIT_MS);
      }
    });
  });
}

interface Running {
  pid: number | undefined;
  commandId: string;
  cgroup?: CommandCgroup;
}

/** Commands started and not yet finished (prepared ones too), for `killAllCommands`. */
const RUNNING = new Set<Running>();
const PREPARED = new WeakMap<ChildProcess, Running>();

/**
 * Starts `file args` ahead of its command with a pipe for stdin, as `runCommand` would start it;
 * hand it to `runCommand` as `prepared` with the command as `input`. A process that fails to start
 * is simply not waiting when it is wanted, and a cold one is started instead; throws only `BUSY`
 * when the worker is out of file descriptors (nothing was started).
 * With `cgroup`, the process moves itself into it first (`CommandCgroup.wrap`); the cgroup is the
 * command's from then on (runCommand or discardPrepared removes it).
 */
export function prepareCommand(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, pipes?: OutputPipes, cgroup?: CommandCgroup): PreparedCommand {
  const commandId = randomUUID();
  const argv = cgroup ? cgroup.wrap(file, args) : { file, args };
  const { child, output } = startProcess(argv.file, argv.args, cwd, { ...env, [COMMAND_ID_ENV]: commandId }, 'pipe', pipes);
  child.on('error', () => undefined);
  const entry = { pid: child.pid, commandId, cgroup };
  PREPARED.set(child, entry);
  RUNNING.add(entry);
  child.once('exit', () => RUNNING.delete(entry));
  return { child, commandId, output, ...(cgroup ? { cgroup } : {}) };
}

/**
 * Spawns a command as a process-group leader, its stdout and stderr the real `pipes` of
 * output-pipes.ts when given (so `/dev/stdout` can be opened by name), else Node's.
 */
function startProcess(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, stdin: 'ignore' | 'pipe', pipes: OutputPipes | undefined): { child: ChildProcess; output: [Readable, Readable] } {
  let child: ChildProcess;
  try {
    if (!hasFreeFds(spawnFds((stdin === 'pipe' ? 1 : 0) + (pipes ? 0 : 2)))) throw fdExhaustedError(`cannot start ${file}`, undefined, { retry: true });
    child = spawn(file, args, { cwd, env, detached: true, stdio: [stdin, pipes?.fds[0] ?? 'pipe', pipes?.fds[1] ?? 'pipe'] });
    // Out of file descriptors, Node gives up before making the child's pipes (no `stdio` at all)
    // and says so only on the next tick: its stdin and stdout were then read as null, a
    // TypeError, and the 'error' that followed, with no listener yet, ended the worker.
    if (child.stdio === undefined) {
      child.on('error', () => undefined);
      throw fdExhaustedError(`cannot start ${file}`, undefined, { retry: true });
    }
  } catch (error) {
    for (const stream of pipes?.streams ?? []) stream.destroy();
    throw error;
  } finally {
    pipes?.closeWriteEnds();
  }
  return { child, output: pipes ? pipes.streams : [child.stdout!, child.stderr!] };
}

/** Kills a prepared process that will not be used. */
export function discardPrepared(prepared: PreparedCommand): void {
  const entry = PREPARED.get(prepared.child);
  if (entry) RUNNING.delete(entry);
  for (const stream of prepared.output) stream.destroy();
  if (prepared.child.pid) {
    try {
      process.kill(-prepared.child.pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  prepared.cgroup?.kill();
  prepared.cgroup?.release();
}

function isWaiting(child: ChildProcess): boolean {
  return child.pid !== undefined && child.exitCode === null && child.signalCode === null && child.stdin?.writable === true;
}

/**
 * Kills every command still running, synchronously (no `ps`): each process group, then every
 * process carrying a command's environment marker. For a worker about to exit. Never throws.
 */
export function killAllCommands(): void {
  for (const { pid } of RUNNING) {
    if (!pid) continue;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  for (const { cgroup } of RUNNING) cgroup?.kill();
  for (const { commandId } of RUNNING) killMarked(commandId);
}

/**
 * SIGKILLs every process whose environment holds `MCPVISOR_COMMAND_ID=<id>`; repeats (at most three
 * rounds) while it finds some, for processes forked during a round. Never throws.
 */
function killMarked(id: string): void {
  const needle = Buffer.from(`${COMMAND_ID_ENV}=${id}\0`);
  for (let round = 0; round < 3; round++) {
    let found = 0;
    let entries: string[];
    try {
      entries = readdirSync('/proc');
    } catch {
      return; // no /proc on this platform
    }
    for (const entry of entries) {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
      try {
        if (!readFileSync(`/proc/${entry}/environ`).includes(needle)) continue;
        process.kill(Number(entry), 'SIGKILL');
        found++;
      } catch {
        // Gone, or not ours to read.
      }
    }
    if (found === 0) return;
  }
}
