import { setPriority } from 'node:os';
import { receiveMessageOnPort, threadId, workerData, type MessagePort } from 'node:worker_threads';
import { McpvisorError, toErrorInfo, type ErrorInfo } from './errors';
import { jsonResult, unserialisableAt } from './json-safe';
import { OUTPUT_WINDOW_MAX_CHARS, OutputLines, type OutputStream } from './output-lines';
import { ThreadCrash } from './thread-crash';
import { callProgress } from './call-progress';
import type { ToolCall, ToolDescriptor, ToolResult } from './tool';
import type { ToolTexts } from './tool-text';
import type { WorkerInit, WorkerLogger, WorkerService } from './worker-runtime';

/**
 * A task handed to a piscina thread. `cancel` is the thread's end of a channel: the thread posts
 * its `threadId` on it when the task starts, then `{ progress }` for each report of the call's own
 * (when `progress` is set: the client gave a progress token), and the pool posts one message
 * when the caller gives up (cancellation or deadline).
 */
/** A call's `deadlineMs` is its whole budget; `deadlineAt` (`threadClockMs()`) is when it ends, queueing included. */
/** `callId` is the supervisor's, carried by the call's log lines. */
export type ThreadTask = { op: 'describe' } | { op: 'call'; call: ToolCall; deadlineMs: number; deadlineAt?: number; cancel?: MessagePort; callId?: string; progress?: boolean };

/**
 * Milliseconds on CLOCK_MONOTONIC, which every thread of the process reads alike: a time sent to a
 * thread. Not Date.now(): a wall clock stepped (NTP after a VM resumes, `date -s`) while a call
 * queued made its budget spent, or an hour longer; not performance.now(): its origin is the
 * thread's own start.
 */
export function threadClockMs(): number {
  return Number(process.hrtime.bigint() / 1000n) / 1000;
}

/** Its answer. Errors travel as `{ code, message }`: piscina's clone of an Error drops `code`. */
export type ThreadAnswer =
  | { ok: true; tools: ToolDescriptor[] | ToolTexts }
  | { ok: true; result: ToolResult }
  | { ok: false; error: ErrorInfo }
  /** The thread crashed before this call started on it (thread-crash.ts): run it on another. */
  | { ok: false; retry: true; threadId: number; error: ErrorInfo };

/**
 * Turns a worker service into a piscina task handler: export the returned function as the
 * module's default. The service is initialised once per thread, on its first task, from
 * `workerData.config`. A thread may run several tasks at once (their awaits interleave); a task
 * is cancelled cooperatively through its `cancel` port, and the pool terminates the thread only
 * when a task ignores that (CPU-bound work that never yields).
 */
export function threadWorker(init: WorkerInit): (task: ThreadTask) => Promise<ThreadAnswer> {
  let service: Promise<WorkerService> | undefined;
  const data = workerData as { config?: unknown; pool?: string; debug?: boolean } | undefined;
  const write = captureOutput(data?.pool);
  const log = stderrLogger(write, data?.pool, data?.debug === true);
  const crash = new ThreadCrash(log, data?.pool);
  lowerThreadPriority();
  return async (task) => {
    if (crash.crashed !== undefined) return { ok: false, retry: true, threadId, error: { code: 'WORKER_CRASHED', message: crash.crashed } };
    try {
      // The same init a process worker takes (README): its health reports have no pool to go to
      // here, so they become log lines. Typed as WorkerInit, a shared init did not compile.
      service ??= init(data?.config, log, (health) => log[health.status === 'degraded' ? 'warn' : 'info'](`the service reports itself ${health.status}`, { ...health }));
      const ready = await service;
      if (task.op === 'describe') {
        crash.describing();
        // Checked here, as a process worker's is by its channel: a BigInt default failed the
        // start later with JSON.stringify's bare "Do not know how to serialize a BigInt".
        const unwritable = unserialisableAt(ready.tools);
        if (unwritable) return { ok: false, error: { code: 'BAD_INPUT', message: `the worker's tool list cannot be written as JSON: ${unwritable}` } };
        return { ok: true, tools: ready.tools };
      }
      // What the queue left of the budget: a call that waited for its thread gets the rest, so
      // its own timeouts (a fetch's) still come before the pool's and say what happened.
      const left = task.deadlineAt === undefined ? task.deadlineMs : Math.max(0, Math.min(task.deadlineMs, Math.floor(task.deadlineAt - threadClockMs())));
      // A call given up while it waited for a thread (its cancel is on the port already, or its
      // budget is spent) never starts: it would have run unwatched, the pool having answered it
      // and looked for its thread before it had one (a CPU-bound call then held the thread).
      if (task.cancel && receiveMessageOnPort(task.cancel) !== undefined) return { ok: false, error: { code: 'CANCELLED', message: 'the call was cancelled before it started' } };
      if (left <= 0) return { ok: false, error: { code: 'TIMEOUT', message: `the call waited past its ${task.deadlineMs} ms deadline for a thread` } };
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new McpvisorError('TIMEOUT', `the call ran past its ${task.deadlineMs} ms deadline`)), left);
      task.cancel?.once('message', () => controller.abort(new McpvisorError('CANCELLED', 'the call was cancelled')));
      task.cancel?.postMessage({ threadId });
      const callLog = task.callId === undefined ? log : callLogger(log, task.callId);
      const port = task.progress ? task.cancel : undefined;
      // Posted before the answer, which the pool reads after draining this port (thread-pool.ts).
      const progress = callProgress(port && ((report) => port.postMessage({ progress: report })), (msg) => callLog.warn(msg, { tool: task.call.tool }));
      try {
        return await crash.run<ThreadAnswer>(
          { tool: task.call.tool, ...(task.callId === undefined ? {} : { callId: task.callId }) },
          async () => ({ ok: true, result: jsonResult(task.call.tool, await ready.handle(task.call, { signal: controller.signal, deadlineMs: left, log: callLog, progress: progress.report })) }),
          (error) => ({ ok: false, error }),
        );
      } finally {
        progress.finish();
        clearTimeout(timer);
        task.cancel?.close();
      }
    } catch (error) {
      return { ok: false, error: jsonData(toErrorInfo(error)) };
    }
  };
}

/** An error whose `data` would not clone or write as JSON (a custom tool's) goes without it. */
function jsonData(info: ErrorInfo): ErrorInfo {
  if (info.data === undefined) return info;
  try {
    return { ...info, data: JSON.parse(JSON.stringify(info.data) ?? 'null') };
  } catch {
    return { code: info.code, message: info.message };
  }
}

/** Nice value of pool threads: above the supervisor's 0, below nothing else that matters. */
const THREAD_NICE = 10;

/**
 * Threads run batch work (HTML to Markdown) on the cores the supervisor's event loop needs to
 * answer every session. On Linux a thread's nice value is its own (setpriority on the calling
 * thread), so this thread yields to the event loop without slowing the process's other threads;
 * measured: bench/web/fetch-threads.ts, event-loop lag. Elsewhere it may apply to the process,
 * so it is Linux only.
 */
function lowerThreadPriority(): void {
  if (process.platform !== 'linux') return;
  try {
    setPriority(THREAD_NICE);
  } catch {
    // Not allowed (a container without CAP_SYS_NICE can still raise nice; a seccomp profile may not): keep the default.
  }
}

/** pino's numbers for the levels a thread logs at, so its lines read as the supervisor's do. */
const PINO_LEVELS = { debug: 20, info: 30, warn: 40, error: 50 } as const;

/**
 * Threads share the process's stderr; one JSON line per entry, like pino's, naming the pool (the
 * toolset). `debug` lines are written when the supervisor logs at debug (workerData.debug): they
 * were dropped at every level, a process worker's being written.
 */
function stderrLogger(write: (line: string) => void, pool: string | undefined, debug: boolean): WorkerLogger {
  const at = (level: keyof typeof PINO_LEVELS) => (msg: string, fields?: Record<string, unknown>) =>
    write(`${JSON.stringify({ level: PINO_LEVELS[level], time: Date.now(), pool, thread: threadId, msg, ...fields })}\n`);
  return { debug: debug ? at('debug') : () => {}, info: at('info'), warn: at('warn'), error: at('error') };
}

/** A call's logger: its lines carry the supervisor's `callId`, as a process worker's do (worker-runtime.ts). */
function callLogger(log: WorkerLogger, callId: string): WorkerLogger {
  const at = (write: WorkerLogger['info']) => (msg: string, fields?: Record<string, unknown>) => write(msg, { ...fields, callId });
  return { debug: at(log.debug), info: at(log.info), warn: at(log.warn), error: at(log.error) };
}

/**
 * Turns what the thread's code writes to process.stdout and process.stderr (console.log) into
 * bounded log lines on the process's stderr (output-lines.ts), and returns the writer of stderr
 * itself. A thread's stdout is the supervisor's, which carries JSON-RPC in stdio mode: a thread
 * toolset's console.log there broke the session ("Unexpected token … is not valid JSON").
 */
function captureOutput(pool: string | undefined): (line: string) => void {
  const stderr = process.stderr;
  const write = stderr.write.bind(stderr) as (line: string, done?: () => void) => boolean;
  const line = (level: keyof typeof PINO_LEVELS, msg: string, fields: Record<string, unknown>) =>
    write(`${JSON.stringify({ level: PINO_LEVELS[level], time: Date.now(), pool, thread: threadId, ...fields, msg })}\n`);
  const lines = new OutputLines({
    line: (stream, text, cutChars) => line(stream === 'stderr' ? 'warn' : 'info', text, { stream, ...(cutChars > 0 ? { cutChars } : {}) }),
    dropping: (windowMs) => line('warn', `the thread wrote over ${OUTPUT_WINDOW_MAX_CHARS} characters of output in ${windowMs} ms: dropping the rest until the ${windowMs} ms are over`, {}),
    dropped: (chars) => line('warn', `dropped ${chars} characters of the thread's output`, { droppedChars: chars }),
  });
  for (const stream of ['stdout', 'stderr'] as const satisfies OutputStream[]) {
    const target = process[stream] as NodeJS.WriteStream & { write: (...args: unknown[]) => boolean };
    target.write = (chunk: unknown, encoding?: unknown, callback?: unknown) => {
      lines.write(stream, typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      const done = typeof encoding === 'function' ? encoding : callback;
      // Called once stderr has passed it on: piscina waits so (`write('', resolve)`) before its
      // thread sleeps in Atomics.wait, where a buffered stream is never flushed.
      if (typeof done === 'function') write('', done as () => void);
      return true;
    };
  }
  process.once('exit', () => lines.end());
  return write;
}
