import type { Piscina } from 'piscina';
import type { Logger } from 'pino';
import type { RestartConfig } from '../../config/schema';
import { McpvisorError, toErrorInfo, type ErrorInfo } from '../../protocol/errors';
import type { ThreadAnswer, ThreadTask } from '../../protocol/thread-runtime';
import type { ToolDescriptor } from '../../protocol/tool';
import type { ToolTexts } from '../../protocol/tool-text';
import { FairTaskQueue } from './fair-task-queue';
import type { SlotSharing } from './wait-queue';

export interface ThreadPoolOptions {
  name: string;
  /** Absolute path of the compiled module whose default export is `threadWorker(init)`. */
  module: string;
  threads: number;
  /** Calls one thread runs at once: more than 1 lets their network waits overlap. */
  concurrency: number;
  workerConfig: unknown;
  /** How long a cancelled call may run on before its thread (and its other calls) is terminated. */
  cancelGraceMs: number;
  maxQueue: number;
  /** Free slots kept for a session holding none (wait-queue.ts); none given: nothing is kept. */
  sharing?: SlotSharing;
  /** How long the threads may take to load the module and initialise (`pools.startTimeoutMs`); default 60 s. */
  startTimeoutMs?: number;
  /** V8 old-generation heap of each thread in MB (config `pools.threadMaxOldGenerationSizeMb`). */
  maxOldGenerationSizeMb: number;
  restart: RestartConfig;
  logger: Logger;
}

/** What a set of threads is made from: the ThreadPool's options that piscina takes. */
export type ThreadLaunch = Pick<ThreadPoolOptions, 'name' | 'module' | 'threads' | 'concurrency' | 'workerConfig' | 'maxQueue' | 'maxOldGenerationSizeMb'> & { debug: boolean };

const EXPORT_RULE = (module: string) => `${module} must export threadWorker(init) from 'mcpvisor', as module.exports or the default export`;

/**
 * A new piscina over the module, with its own fair queue (`running(session, queue)`: that
 * session's calls the pool runs now). One per set of threads: the pool starts a new one when no
 * thread of the old could start, as piscina, once a thread failed as it started, never starts
 * another by itself (its `workerFailsDuringBootstrap`) and rejects nothing it queued.
 */
export function launchThreads(launch: ThreadLaunch, running: (session: string, queue: FairTaskQueue) => number): { piscina: Piscina; queue: FairTaskQueue } {
  // Loaded here: a configuration without thread pools never pays for piscina.
  const { Piscina: PiscinaClass } = require('piscina') as typeof import('piscina');
  const queue: FairTaskQueue = new FairTaskQueue((session) => running(session, queue));
  const piscina = new PiscinaClass({
    filename: launch.module,
    minThreads: launch.threads,
    maxThreads: launch.threads,
    concurrentTasksPerWorker: launch.concurrency,
    maxQueue: launch.maxQueue,
    taskQueue: queue,
    idleTimeout: Number.POSITIVE_INFINITY,
    // Idle threads run their event loop: asleep in Atomics.wait, a rejection from an earlier
    // call's timer came when the next call woke the thread, and that call took the blame.
    atomics: 'disabled',
    // The threads share the supervisor's process: without a limit each may grow to V8's default.
    resourceLimits: { maxOldGenerationSizeMb: launch.maxOldGenerationSizeMb },
    // `pool` names the toolset in the thread's log lines (thread-runtime.ts).
    workerData: { config: launch.workerConfig, pool: launch.name, debug: launch.debug },
  });
  return { piscina, queue };
}

/**
 * Why a thread could not start, in the error's own words: a module that does not load (removed, a
 * syntax error, a package not found) named neither itself nor the kind of error.
 */
export function threadStartError(error: Error | undefined, module: string): string {
  // An answer that cannot leave its thread (a function in it) ends the thread with an error that
  // arrives as `{}`: the start said "failed to start: undefined".
  if (error?.message === undefined) return `its thread ended with an error that has no message (an answer it could not send, such as a function?); ${EXPORT_RULE(module)}`;
  return `${error.name && error.name !== 'Error' ? `${error.name}: ` : ''}${error.message} (loading ${module})`;
}

/**
 * POOL_UNAVAILABLE for a call while no thread of the pool can start: why (`cause`), and in how
 * long new threads are tried (`nextInMs`; undefined: being tried now). `refused`: they announced
 * other tools, which only a restart of the server helps (announced-list.ts).
 */
export function noLiveThread(pool: string, cause: string, nextInMs: number | undefined, refused: boolean): McpvisorError {
  const next = nextInMs === undefined ? '; new threads are being started' : `; the next start is tried in ${Math.max(0, Math.ceil(nextInMs))} ms`;
  return new McpvisorError('POOL_UNAVAILABLE', `the ${pool} pool has no live thread (no thread could start: ${cause})${next}${refused ? '' : '; try again shortly'}`);
}

/**
 * Starts new threads (describeThreads) and hands their tool list to `accept`, which throws when
 * the pool cannot take it. Resolves with the start's failure (`cause`: its own words, without
 * "the … threads failed to start"), or undefined when it worked.
 */
export async function startThreads(
  piscina: Piscina,
  launch: ThreadLaunch,
  startTimeoutMs: number,
  accept: (tools: ToolDescriptor[] | ToolTexts) => void,
): Promise<{ error: ErrorInfo; cause: string } | undefined> {
  const answer = await describeThreads(piscina, launch, startTimeoutMs);
  let error: ErrorInfo | undefined = answer.ok ? undefined : answer.error;
  try {
    if (answer.ok) accept('tools' in answer ? answer.tools : []);
  } catch (thrown) {
    error = toErrorInfo(thrown);
  }
  const failed = `the ${launch.name} threads failed to start: `;
  return error && { error, cause: error.message.startsWith(failed) ? error.message.slice(failed.length) : error.message };
}

/**
 * Asks new threads for their tool list: loads the module and runs `init` in a thread. Answers
 * `{ ok: false }` (never rejects) with the start's failure: the module's, init's own message, or
 * POOL_UNAVAILABLE after `startTimeoutMs` (a thread whose init never ends held the whole start;
 * a process pool's start gives up then, a thread pool's waited without end).
 */
async function describeThreads(piscina: Piscina, launch: ThreadLaunch, startTimeoutMs: number): Promise<ThreadAnswer> {
  const { name, module } = launch;
  let startTimer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<ThreadAnswer>((resolve) => {
    startTimer = setTimeout(
      () => resolve({ ok: false, error: { code: 'POOL_UNAVAILABLE', message: `the ${name} threads did not become ready within ${startTimeoutMs} ms (pools.startTimeoutMs): its init has not finished` } }),
      startTimeoutMs,
    );
  });
  const described = piscina.run({ op: 'describe' } satisfies ThreadTask).catch(
    (error: Error | undefined): ThreadAnswer => ({ ok: false, error: { code: 'POOL_UNAVAILABLE', message: `the ${name} threads failed to start: ${threadStartError(error, module)}` } }),
  );
  return describeAnswer(await Promise.race([described, timedOut]).finally(() => clearTimeout(startTimer)), name, module);
}

/**
 * The answer of a thread module to `describe`, checked: a module whose export is not
 * `threadWorker(init)` (an init function exported as it is, as `runWorker` takes one) answered
 * something else, and the start failed with "the … threads failed to start: undefined".
 */
function describeAnswer(answer: unknown, name: string, module: string): ThreadAnswer {
  const fields = typeof answer === 'object' && answer !== null ? (answer as Record<string, unknown>) : undefined;
  if (fields?.ok === true && 'tools' in fields) return answer as ThreadAnswer;
  if (fields?.ok === false && typeof (fields.error as { message?: unknown } | undefined)?.message === 'string') return answer as ThreadAnswer;
  const got = fields ? `an object with ${Object.keys(fields).map((key) => `'${key}'`).join(', ') || 'no keys'}` : String(answer);
  return {
    ok: false,
    error: {
      code: 'BAD_INPUT',
      message: `the ${name} threads failed to start: its function answered ${got}, not a thread worker's answer; ${EXPORT_RULE(module)}`,
    },
  };
}
