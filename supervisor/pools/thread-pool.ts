import type { Piscina } from 'piscina';
import type { Logger } from 'pino';
import type { RestartConfig } from '../../config/schema';
import { McpvisorError } from '../../protocol/errors';
import type { Pool, PoolCallOptions, PoolState, PoolStats } from '../../protocol/pool';
import { errorResult } from '../../protocol/results';
import type { ThreadAnswer, ThreadTask } from '../../protocol/thread-runtime';
import type { ToolCall, ToolDescriptor, ToolResult } from '../../protocol/tool';
import { RestartPolicy } from '../restart-policy';

export interface ThreadPoolOptions {
  name: string;
  /** Absolute path of the compiled module whose default export is `threadWorker(init)`. */
  module: string;
  threads: number;
  workerConfig: unknown;
  maxQueue: number;
  restart: RestartConfig;
  logger: Logger;
}

/**
 * The pool contract over piscina threads, for CPU-bound work in the supervisor's process (HTML to
 * Markdown). piscina owns the threads and the queue; aborting a running task terminates its
 * thread, which piscina replaces. A task that crashes its thread answers WORKER_CRASHED and
 * counts against the restart intensity like a process crash.
 */
export class ThreadPool implements Pool {
  readonly name: string;
  #options: ThreadPoolOptions;
  #log: Logger;
  #piscina: Piscina | undefined;
  #tools: ToolDescriptor[] = [];
  #state: PoolState = 'stopped';
  #policy: RestartPolicy;
  #restarts = 0;
  #inFlight = 0;
  #lastError: string | undefined;

  constructor(options: ThreadPoolOptions) {
    this.name = options.name;
    this.#options = options;
    this.#log = options.logger.child({ pool: options.name });
    this.#policy = new RestartPolicy(options.restart);
  }

  get tools(): readonly ToolDescriptor[] {
    return this.#tools;
  }

  async start(): Promise<void> {
    this.#state = 'starting';
    // Loaded here: a configuration without thread pools never pays for piscina.
    const { Piscina: PiscinaClass } = require('piscina') as typeof import('piscina');
    const piscina = new PiscinaClass({
      filename: this.#options.module,
      minThreads: this.#options.threads,
      maxThreads: this.#options.threads,
      maxQueue: this.#options.maxQueue,
      idleTimeout: Number.POSITIVE_INFINITY,
      workerData: { config: this.#options.workerConfig },
    });
    piscina.on('error', (error: Error) => this.#log.error({ err: error.message }, 'thread pool error'));
    this.#piscina = piscina;
    const answer = (await piscina.run({ op: 'describe' } satisfies ThreadTask).catch((error: Error) => ({
      ok: false,
      error: { code: 'POOL_UNAVAILABLE', message: `the ${this.name} threads failed to start: ${error.message}` },
    }))) as ThreadAnswer;
    if (!answer.ok) {
      this.#state = 'failed';
      this.#lastError = answer.error.message;
      await piscina.destroy();
      throw McpvisorError.fromInfo(answer.error);
    }
    this.#tools = 'tools' in answer ? answer.tools : [];
    this.#state = 'ready';
    this.#log.debug({ threads: this.#options.threads, tools: this.#tools.length }, 'pool ready');
  }

  async call(call: ToolCall, options: PoolCallOptions): Promise<ToolResult> {
    const piscina = this.#piscina;
    if (!piscina || this.#state === 'stopping' || this.#state === 'stopped') {
      return errorResult(new McpvisorError('SHUTTING_DOWN', 'the server is shutting down'));
    }
    const deadline = AbortSignal.timeout(options.deadlineMs);
    const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    this.#inFlight++;
    try {
      const answer = (await piscina.run({ op: 'call', call, deadlineMs: options.deadlineMs } satisfies ThreadTask, { signal })) as ThreadAnswer;
      if (!answer.ok) return errorResult(answer.error);
      return 'result' in answer ? answer.result : errorResult(new McpvisorError('INTERNAL', 'the thread answered without a result'));
    } catch (error) {
      if (deadline.aborted) {
        return errorResult(new McpvisorError('TIMEOUT', `the call ran past its ${options.deadlineMs} ms deadline and was stopped`));
      }
      if (options.signal?.aborted) return errorResult(new McpvisorError('CANCELLED', 'the call was cancelled'));
      const message = (error as Error).message ?? String(error);
      if (/queue is at limit/i.test(message)) {
        // piscina's own bound on waiting tasks (maxQueue).
        return errorResult(new McpvisorError('BUSY', `the ${this.name} pool is busy (${this.#options.maxQueue} calls already waiting); try again later`));
      }
      this.#crashed(message);
      return errorResult(new McpvisorError('WORKER_CRASHED', `the thread running this call crashed (${message})`));
    } finally {
      this.#inFlight--;
    }
  }

  stats(): PoolStats {
    const piscina = this.#piscina;
    return {
      name: this.name,
      kind: 'thread',
      state: this.#currentState(),
      workers: this.#options.threads,
      alive: piscina ? piscina.threads.length : 0,
      busy: this.#inFlight - (piscina?.queueSize ?? 0),
      queued: piscina?.queueSize ?? 0,
      restarts: this.#restarts,
      ...(this.#lastError ? { lastError: this.#lastError } : {}),
    };
  }

  async stop(graceMs: number): Promise<void> {
    if (this.#state === 'stopped') return;
    this.#state = 'stopping';
    const deadline = Date.now() + graceMs;
    while (this.#inFlight > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await this.#piscina?.destroy();
    this.#state = 'stopped';
  }

  #crashed(message: string): void {
    this.#restarts++;
    this.#lastError = `a thread crashed: ${message}`;
    const decision = this.#policy.next(Date.now());
    this.#log.warn({ err: message, overIntensity: decision.overIntensity }, 'thread crashed; piscina replaces it');
  }

  #currentState(): PoolState {
    if (this.#state !== 'ready') return this.#state;
    return this.#policy.isOverIntensity(Date.now()) ? 'degraded' : 'ready';
  }
}
