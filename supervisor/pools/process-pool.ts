import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { RestartConfig } from '../../config/schema';
import { childProcessChannel } from '../../protocol/channel';
import { McpvisorError, toErrorInfo } from '../../protocol/errors';
import type { SupervisorMessage, WorkerMessage } from '../../protocol/messages';
import type { DegradedReason, Pool, PoolCallOptions, PoolState, PoolStats } from '../../protocol/pool';
import { errorResult } from '../../protocol/results';
import { isDeadlineError, RpcClient } from '../../protocol/rpc';
import type { ToolCall, ToolDescriptor, ToolResult } from '../../protocol/tool';
import type { AnnouncedTool, ToolTexts } from '../../protocol/tool-text';
import { AnnouncedList } from './announced-list';
import { killGroup, killTree } from '../../workers/common/kill-tree';
import { RestartPolicy } from '../restart-policy';
import { LivenessCheck } from './liveness';
import { isReportedStartFailure, type PoolWorker, workerMessages } from './pool-worker';
import { adoptSpare, forkErrorText, forkWorker, isForkFailure } from './spare-worker';
import { exitReason } from '../../protocol/exit-reason';
import { captureOutput, exitedBeforeReady } from './worker-output';
import { type SlotSharing, WaitQueue } from './wait-queue';

export interface ProcessPoolOptions {
  name: string;
  /** Absolute path of the compiled worker module; it must call `runWorker`. */
  module: string;
  size: number;
  /** Calls one worker runs at once. */
  concurrency: number;
  /** Sent to each worker as its `init` message. */
  workerConfig: unknown;
  env?: NodeJS.ProcessEnv;
  execArgv?: string[];
  maxQueue: number;
  /** Free slots kept for a session holding none (wait-queue.ts); none given: nothing is kept. */
  sharing?: SlotSharing;
  cancelGraceMs: number;
  startTimeoutMs: number;
  /** A ready worker is asked every `intervalMs` (0: never) and killed when it has not answered within `timeoutMs`. */
  liveness?: { intervalMs: number; timeoutMs: number };
  restart: RestartConfig;
  logger: Logger;
}

/**
 * A supervised pool of forked worker processes. Each worker runs up to `concurrency` calls; more
 * wait in a bounded queue. A call past its deadline is cancelled in the worker, and a worker that
 * ignores the cancel is killed with its process tree. A worker that dies fails its calls with
 * WORKER_CRASHED and is replaced after a backoff (RestartPolicy).
 */
export class ProcessPool implements Pool {
  readonly name: string;
  #options: ProcessPoolOptions;
  #log: Logger;
  #workers = new Map<number, PoolWorker>();
  #nextWorkerId = 1;
  #queue: WaitQueue;
  #policy: RestartPolicy;
  #saidOverIntensity = false;
  #restarts = 0;
  #pendingRestarts = new Set<NodeJS.Timeout>();
  /** Replacement starts that failed since a worker was last ready: calls then fail at once with why. */
  #failedStarts = 0;
  /** When the pending replacement is due (performance.now()), named to calls refused meanwhile. */
  #nextRestartAt: number | undefined;
  #state: PoolState = 'stopped';
  #lastError: string | undefined;
  #list: AnnouncedList;
  #liveness: LivenessCheck;
  /** warmUp() was asked: a replacement worker warms up as soon as it is ready. */
  #warm = false;

  constructor(options: ProcessPoolOptions) {
    this.name = options.name;
    this.#options = options;
    this.#log = options.logger.child({ pool: options.name });
    this.#list = new AnnouncedList(options.name);
    this.#queue = new WaitQueue(options.maxQueue, options.sharing && { ...options.sharing, slots: () => this.#liveWorkers() * options.concurrency });
    this.#policy = new RestartPolicy(options.restart);
    const liveness = options.liveness ?? { intervalMs: 0, timeoutMs: 1 };
    this.#liveness = new LivenessCheck({
      ...liveness,
      workers: () => [...this.#workers.values()].filter((worker) => worker.ready),
      onUnresponsive: (id) => this.#killUnresponsive(id, liveness.timeoutMs),
    });
  }

  get tools(): readonly AnnouncedTool[] {
    return this.#list.tools;
  }

  async start(): Promise<void> {
    this.#state = 'starting';
    this.#log.debug({ module: this.#options.module, size: this.#options.size }, 'starting pool');
    const results = await Promise.allSettled(Array.from({ length: this.#options.size }, () => this.#spawn()));
    const failure = results.find((result) => result.status === 'rejected');
    if (failure) {
      this.#state = 'failed';
      await this.#killAll();
      throw failure.reason;
    }
    this.#state = 'ready';
    this.#liveness.start();
    this.#log.debug({ tools: this.#list.tools.length }, 'pool ready');
  }

  async warmUp(): Promise<void> {
    this.#warm = true;
    for (const worker of [...this.#workers.values()]) {
      if (worker.ready && !worker.rpc.closed) await worker.rpc.warmUp();
    }
  }

  call(call: ToolCall, options: PoolCallOptions): Promise<ToolResult> {
    const deadlineAt = performance.now() + options.deadlineMs;
    if (this.#state === 'stopping' || this.#state === 'stopped') {
      return Promise.resolve(errorResult(new McpvisorError('SHUTTING_DOWN', 'the server is shutting down')));
    }
    const tenant = options.session ?? '';
    const worker = this.#freeWorker();
    // A session holding a slot already waits rather than take the last ones kept for another.
    if (worker && this.#queue.admits(tenant)) {
      this.#queue.hold(tenant);
      return this.#run(worker, call, options, deadlineAt);
    }
    if (this.#cannotServe()) {
      return Promise.resolve(errorResult(this.#unavailable(this.#lastError ?? 'restarting')));
    }
    return this.#queue
      .wait(options.signal, deadlineAt, `the ${this.name} pool`, tenant)
      .then(
        () => {
          const next = this.#freeWorker();
          if (next) return this.#run(next, call, options, deadlineAt);
          // The queue only releases a waiter when a slot is free; re-check in case it was taken.
          this.#queue.drop(tenant);
          return this.call(call, { ...options, deadlineMs: Math.max(1, Math.floor(deadlineAt - performance.now())) });
        },
        (error: unknown) => errorResult(error),
      );
  }

  sessionsChanged(): void {
    this.#queue.release(0);
  }

  stats(): PoolStats {
    let busy = 0;
    let degradedBy: DegradedReason | undefined;
    for (const worker of this.#workers.values()) {
      busy += worker.rpc.inFlight;
      if (worker.ready && !worker.rpc.closed) degradedBy ??= worker.degradedBy;
    }
    const state = this.#currentState();
    return {
      name: this.name,
      kind: 'process',
      // A pool with no live worker serves nothing, whatever its restarts: a monitor reading the
      // state (an API with affectsHealth: false, docs/production.md) must not see `ready` then.
      // Decision: one degraded worker degrades the pool too; its calls still go to it (each one
      // tries again), as it is alive: not POOL_UNAVAILABLE, and not restarted, which would not help.
      state: state === 'ready' && (degradedBy || this.#liveWorkers() === 0) ? 'degraded' : state,
      workers: this.#options.size,
      alive: this.#liveWorkers(),
      busy,
      queued: this.#queue.length,
      restarts: this.#restarts,
      ...(this.#lastError ? { lastError: this.#lastError } : {}),
      ...(degradedBy ? { degradedBy } : {}),
    };
  }

  async stop(graceMs: number): Promise<void> {
    if (this.#state === 'stopped') return;
    this.#state = 'stopping';
    this.#liveness.stop();
    for (const timer of this.#pendingRestarts) clearTimeout(timer);
    this.#pendingRestarts.clear();
    this.#queue.rejectAll(new McpvisorError('SHUTTING_DOWN', 'the server is shutting down'));
    const deadline = performance.now() + graceMs;
    while (performance.now() < deadline && [...this.#workers.values()].some((worker) => worker.rpc.inFlight > 0)) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const workers = [...this.#workers.values()];
    // Calls still running past the grace end here, as what they are: not a crash (a monitor
    // counting WORKER_CRASHED would see one on every deploy).
    for (const worker of workers) worker.rpc.close('the server shut down before this call finished', 'SHUTTING_DOWN');
    const shutdown: SupervisorMessage = { type: 'shutdown', graceMs: 0 };
    for (const worker of workers) if (worker.child.connected) worker.child.send(shutdown, () => undefined);
    // A polite shutdown first; whatever is still alive after a short grace is killed with its tree.
    await Promise.race([Promise.all(workers.map((worker) => worker.exited)), sleep(1000, undefined, { ref: false })]);
    await this.#killAll();
    this.#state = 'stopped';
  }

  #currentState(): PoolState {
    if (this.#state !== 'ready' && this.#state !== 'degraded') return this.#state;
    return this.#policy.isOverIntensity(performance.now()) ? 'degraded' : 'ready';
  }

  /**
   * No live worker, and none is expected soon: the pool failed or is over its intensity, or its
   * last replacement could not start (a fork refused, a module gone). A call then waited in the
   * queue for the next try, which may come after its own deadline (TIMEOUT, naming nothing);
   * after a crash whose replacement is starting it still waits for that worker.
   */
  #cannotServe(): boolean {
    return this.#liveWorkers() === 0 && (this.#failedStarts > 0 || ['failed', 'degraded'].includes(this.#currentState()));
  }

  /** POOL_UNAVAILABLE for a call that finds no live worker; `reason`: why there is none. */
  #unavailable(reason: string): McpvisorError {
    const next = this.#nextRestartAt === undefined ? '' : `; the next start is tried in ${Math.max(0, Math.ceil(this.#nextRestartAt - performance.now()))} ms`;
    return new McpvisorError('POOL_UNAVAILABLE', `the ${this.name} pool has no live worker (${reason})${next}${this.#list.refused ? '' : '; try again shortly'}`);
  }

  #liveWorkers(): number {
    let alive = 0;
    for (const worker of this.#workers.values()) if (worker.ready && !worker.rpc.closed) alive++;
    return alive;
  }

  #freeWorker(): PoolWorker | undefined {
    let best: PoolWorker | undefined;
    for (const worker of this.#workers.values()) {
      if (!worker.ready || worker.ending || worker.rpc.closed || worker.rpc.inFlight >= this.#options.concurrency) continue;
      if (!best || worker.rpc.inFlight < best.rpc.inFlight) best = worker;
    }
    return best;
  }

  async #run(worker: PoolWorker, call: ToolCall, options: PoolCallOptions, deadlineAt: number): Promise<ToolResult> {
    const { signal, callId, onProgress, deadlineMs: budgetMs } = options;
    try {
      return await worker.rpc.call(call, {
        signal,
        deadlineMs: Math.max(1, Math.floor(deadlineAt - performance.now())),
        callId,
        onProgress,
        cancelGraceMs: this.#options.cancelGraceMs,
        onUnresponsive: () => {
          // No new call may reach a worker we are about to kill.
          worker.ready = false;
          this.#log.warn({ workerId: worker.id, pid: worker.child.pid, tool: call.tool, callId }, 'worker ignored a cancel; killing it with its tree');
          void killTree(worker.child.pid);
        },
        // Not when the call settles: a cancelled call holds its slot until the worker confirms it
        // stopped, and a waiter let go before that found no slot and queued again, with nothing
        // left to wake it (it waited out its deadline beside an idle worker).
        onFreed: () => this.#queue.freed(options.session ?? ''),
      });
    } catch (error) {
      if (isDeadlineError(error)) {
        // Name the call's whole budget, not what was left of it after queueing. A worker's own
        // TIMEOUT (an upstream request's) keeps its message.
        return errorResult(new McpvisorError('TIMEOUT', `the call ran past its ${budgetMs} ms deadline and was stopped`));
      }
      return errorResult(error);
    }
  }

  /** Forks one worker and resolves when it says `ready`; rejects with its `fatal` reason. */
  async #spawn(): Promise<void> {
    const id = this.#nextWorkerId++;
    const { module, env, execArgv } = this.#options;
    const spare = adoptSpare(module, env, execArgv);
    const child = spare ?? forkWorker(module, env, execArgv);
    const log = this.#log.child({ workerId: id, pid: child.pid });
    log.debug({ forkedEarly: spare !== undefined }, 'worker started');
    const output = captureOutput(child, log);
    let exitedResolve: () => void = () => undefined;
    const exited = new Promise<void>((resolve) => (exitedResolve = resolve));
    const worker: PoolWorker = { id, child, ready: false, exited, rpc: undefined as unknown as RpcClient };
    this.#workers.set(id, worker);

    return new Promise<void>((resolve, reject) => {
      const startTimer = setTimeout(() => {
        fail(new McpvisorError('POOL_UNAVAILABLE', `worker of ${this.name} did not become ready within ${this.#options.startTimeoutMs} ms (pools.startTimeoutMs): its init has not finished`));
        void killTree(child.pid);
      }, this.#options.startTimeoutMs);
      let settled = false;
      const fail = (error: McpvisorError) => {
        if (settled) return;
        settled = true;
        clearTimeout(startTimer);
        this.#lastError = error.message;
        reject(error);
      };
      const onReady = (tools: ToolDescriptor[] | ToolTexts) => {
        // The start may have timed out or the worker died while a bulk list was read.
        if (settled) return;
        try {
          this.#list.accept(tools);
        } catch (error) {
          fail(error as McpvisorError);
          void killTree(child.pid);
          return;
        }
        settled = true;
        clearTimeout(startTimer);
        worker.ready = true;
        this.#failedStarts = 0;
        log.debug('worker ready');
        if (this.#warm) void worker.rpc.warmUp();
        resolve();
        this.#queue.release(this.#options.concurrency);
      };
      // Before the RPC's own listeners, which fail the calls it held at once.
      const noteCalls = () => (worker.callsAtEnd ??= worker.rpc.inFlight);
      child.once('disconnect', noteCalls);
      child.once('exit', noteCalls);
      worker.rpc = new RpcClient(childProcessChannel<SupervisorMessage, WorkerMessage>(child), workerMessages(worker, log, { starting: () => !settled, onReady, fail }));
      child.on('error', (error: NodeJS.ErrnoException) => {
        // A process was made: its exit comes and says why. The init sent to one that had already
        // died as its module loaded failed with EPIPE, and the start said "write EPIPE" instead
        // of Node's error (a missing package), under load.
        if (child.pid !== undefined) return void log.warn({ err: toErrorInfo(error) }, 'worker process error');
        log.error({ err: toErrorInfo(error) }, 'worker process error');
        fail(new McpvisorError('POOL_UNAVAILABLE', `cannot start worker of ${this.name}: ${forkErrorText(error)}`));
        // No process was made (fork EAGAIN, ENOMEM): no exit will come. The pool kept the
        // worker and never tried again: its calls waited out their deadlines for good.
        if (!this.#workers.delete(id)) return;
        worker.rpc.close(`no worker process could be started: ${error.message}`);
        exitedResolve();
        if (this.#state === 'ready') this.#scheduleRestart(true);
      });
      child.on('exit', (code, signal) => {
        const reason = exitReason(child, code, signal);
        worker.rpc.close(`worker exited with ${reason}`);
        this.#workers.delete(id);
        exitedResolve();
        // Exit 0 before ready: nothing held the process, so the module never ran runWorker's IPC loop.
        // Not the pool's lastError: a replacement's failed start was named by the crash before it.
        void output.closed.then(() => fail(new McpvisorError('POOL_UNAVAILABLE', exitedBeforeReady(this.name, this.#options.module, reason, code, output))));
        // Leftover children of the dead worker (its group) go with it, before we might exit.
        killGroup(child.pid);
        // During start() a failure fails the start; nothing is restarted.
        if (this.#state !== 'ready') return;
        if (worker.ready) this.#lastError = worker.killedFor ?? `worker ${id} exited with ${reason}`;
        const calls = worker.ready ? (worker.callsAtEnd ?? 0) : 0;
        // A crash-looping start wrote four lines per attempt, the same error twice among them.
        log[worker.failedStart ? 'debug' : 'warn']({ code, signal, reason, ...(calls > 0 ? { calls } : {}) }, 'worker exited; restarting');
        this.#scheduleRestart(calls === 0);
      });
      child.send({ type: 'init', config: this.#options.workerConfig } satisfies SupervisorMessage);
    });
  }

  /**
   * Starts a replacement after the backoff. `counted` false: the worker died running calls (it
   * exited or was killed in one, ran out of memory, ignored a cancel, hung in one), which is
   * those calls' failure, answered WORKER_CRASHED: replaced at once and not counted against the
   * restart intensity. Decision: counted, a handful of bad calls (or one client sending them)
   * made the pool `degraded`, /health 503 on every instance behind a balancer, and held the next
   * replacement back by the growing backoff, the pool serving nothing meanwhile. What degrades
   * a pool is what says it cannot serve: workers that die idle, replacements that cannot start,
   * no live worker, a worker reporting itself degraded. A crash per call still shows in
   * `restarts`, `lastError` and the calls' WORKER_CRASHED.
   */
  #scheduleRestart(counted = true): void {
    if (this.#state === 'failed' || this.#state === 'starting') return;
    const decision = counted ? this.#policy.next(performance.now()) : { delayMs: 0, overIntensity: false };
    // Said when the pool turns degraded; each slow retry after that only at debug (/health shows the state).
    if (decision.overIntensity) {
      this.#log[this.#saidOverIntensity ? 'debug' : 'error']({ delayMs: decision.delayMs }, 'restart intensity exceeded; pool degraded, retrying slowly');
    }
    if (counted) this.#saidOverIntensity = decision.overIntensity;
    this.#nextRestartAt = performance.now() + decision.delayMs;
    const timer = setTimeout(() => {
      this.#pendingRestarts.delete(timer);
      if (this.#pendingRestarts.size === 0) this.#nextRestartAt = undefined;
      if (this.#state === 'stopping' || this.#state === 'stopped') return;
      this.#restarts++;
      this.#spawn().catch((error: unknown) => {
        this.#failedStarts++;
        const info = toErrorInfo(error);
        this.#lastError = info.message;
        if (!isReportedStartFailure(error)) this.#log.error({ code: info.code }, `replacement worker failed to start: ${info.message}`);
        // Calls waiting for a worker would wait out their deadline while restarts keep failing
        // (a changed description fails every one): they get the reason now.
        if (this.#liveWorkers() === 0) {
          this.#queue.rejectAll(this.#unavailable((error as Error).message));
        }
        if (isForkFailure(error)) this.#scheduleRestart(); // no process, so no exit to retry after
      });
    }, decision.delayMs);
    this.#pendingRestarts.add(timer);
  }

  /** Ends a worker that stopped answering: its calls fail now, and the restart replaces it. */
  #killUnresponsive(id: number, timeoutMs: number): void {
    const worker = this.#workers.get(id);
    if (!worker || worker.rpc.closed || this.#state === 'stopping' || this.#state === 'stopped') return;
    worker.killedFor = `worker ${id} stopped answering (no reply to a liveness check within ${timeoutMs} ms) and was killed`;
    worker.callsAtEnd = worker.rpc.inFlight;
    this.#log.error({ workerId: id, pid: worker.child.pid, timeoutMs }, 'worker stopped answering; killing it');
    worker.rpc.close(`it stopped answering for ${timeoutMs} ms and was killed`);
    void killTree(worker.child.pid);
  }

  async #killAll(): Promise<void> {
    await Promise.all([...this.#workers.values()].map((worker) => killTree(worker.child.pid)));
    await Promise.race([Promise.all([...this.#workers.values()].map((worker) => worker.exited)), sleep(2000, undefined, { ref: false })]);
  }
}
