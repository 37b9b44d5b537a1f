import { MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import type { Logger } from 'pino';
import type { ProgressReport } from '../../protocol/call-progress';
import { McpvisorError } from '../../protocol/errors';
import type { Pool, PoolCallOptions, PoolState, PoolStats } from '../../protocol/pool';
import { errorResult } from '../../protocol/results';
import type { ThreadRetiring } from '../../protocol/thread-crash';
import { threadClockMs, type ThreadAnswer, type ThreadTask } from '../../protocol/thread-runtime';
import type { ToolCall, ToolResult } from '../../protocol/tool';
import type { AnnouncedTool } from '../../protocol/tool-text';
import { RestartPolicy } from '../restart-policy';
import { AnnouncedList } from './announced-list';
import { QUEUE_OPTIONS, type SessionTag } from './fair-task-queue';
import { ThreadEnds } from './thread-ends';
import { rejectedCall, repeatable } from './thread-failure';
import { WaitQueue } from './wait-queue';
import { admit } from './admission';
import { launchThreads, noLiveThread, startThreads, threadStartError, type ThreadLaunch, type ThreadPoolOptions } from './thread-launch';

export type { ThreadPoolOptions } from './thread-launch';

/** Times a call is handed to a thread: more than once only when its thread was being replaced after a crash. */
const MAX_TRIES = 3;

/**
 * The pool contract over piscina threads, for CPU-bound work in the supervisor's process (HTML to
 * Markdown). piscina owns the threads and the queue; each thread runs up to `concurrency` calls
 * at once. A call given up (deadline or cancellation) is answered at once and cancelled in its
 * thread through a message port; a call that runs on past `cancelGraceMs` (CPU-bound work never
 * yields) gets its thread terminated, which piscina replaces; that thread's other calls run again
 * on another thread when they had not started or their tool is read-only or idempotent (its
 * annotations), else answer WORKER_CRASHED.
 * A task that crashes its thread answers WORKER_CRASHED; the thread's end counts once as a
 * restart, against the restart intensity only when no call caused it, like a process crash.
 * While no new thread can start (its module removed, its init throwing), calls answer
 * POOL_UNAVAILABLE naming why, and new threads are tried with the restart backoff (#noThreadStarts).
 */
export class ThreadPool implements Pool {
  readonly name: string;
  #options: ThreadPoolOptions;
  #launch: ThreadLaunch;
  #log: Logger;
  #piscina: Piscina | undefined;
  #list: AnnouncedList;
  #state: PoolState = 'stopped';
  #policy: RestartPolicy;
  #restarts = 0;
  #inFlight = 0;
  #lastError: string | undefined;
  /** Why no thread could start, while none can: calls answer POOL_UNAVAILABLE with it. */
  #cannotStart: string | undefined;
  /** When the next start is tried (performance.now()); undefined while one is being tried. */
  #nextStartAt: number | undefined;
  #startTimer: NodeJS.Timeout | undefined;
  /** A #checkThreads is waiting for its answer. */
  #checking = false;
  /** Threads no longer given calls: the ones that could not start, finishing what they run, and a start being tried. */
  #retired = new Set<Piscina>();
  /**
   * True from terminating a runaway's thread until piscina has failed that thread's calls (they
   * fail in its 'exit' handler): those calls did nothing wrong and are not counted as crashes.
   */
  #terminating = false;
  /** Threads being replaced after a crash (#retire): a call piscina fails as one ends never ran there. */
  #retiring = new Set<number>();
  #ends = new ThreadEnds();
  /**
   * The calls' slots, threads × concurrency, taken before piscina has a call (admission.ts); the
   * slots a session holds are its calls handed to piscina, from which piscina's own queue (a call
   * whose thread is being replaced) tells the session running fewest.
   */
  #queue: WaitQueue;

  constructor(options: ThreadPoolOptions) {
    this.name = options.name;
    this.#options = options;
    this.#log = options.logger.child({ pool: options.name });
    this.#policy = new RestartPolicy(options.restart);
    this.#list = new AnnouncedList(options.name);
    const { module, threads, concurrency, workerConfig, maxQueue, maxOldGenerationSizeMb } = options;
    this.#queue = new WaitQueue(options.maxQueue, { reservedSlots: 0, openSessions: () => 1, ...options.sharing, slots: () => options.threads * options.concurrency });
    this.#launch = { name: options.name, module, threads, concurrency, workerConfig, maxQueue, maxOldGenerationSizeMb, debug: this.#log.isLevelEnabled('debug') };
  }

  get tools(): readonly AnnouncedTool[] {
    return this.#list.tools;
  }

  async start(): Promise<void> {
    this.#state = 'starting';
    const piscina = this.#newThreads();
    this.#piscina = piscina;
    const failure = (await startThreads(piscina, this.#launch, this.#options.startTimeoutMs ?? 60_000, (tools) => this.#list.accept(tools)))?.error;
    if (failure) {
      this.#state = 'failed';
      this.#lastError = failure.message;
      await piscina.destroy();
      throw McpvisorError.fromInfo(failure);
    }
    this.#state = 'ready';
    this.#log.debug({ threads: this.#options.threads, tools: this.#list.tools.length }, 'pool ready');
  }

  /** New threads with the pool's listeners: only the threads serving calls speak for the pool. */
  #newThreads(): Piscina {
    const { piscina } = launchThreads(this.#launch, (session, queue) => this.#queue.heldBy(session) - queue.waiting(session));
    const serving = () => piscina === this.#piscina && this.#state === 'ready';
    piscina.on('error', (error: Error) => {
      this.#log.error({ err: error.message }, 'thread pool error');
      // A thread that failed as it started (its module removed or throwing since): piscina starts
      // no other by itself, and rejects none it queued: they waited out their deadline.
      if (serving() && piscina.threads.length === 0) this.#noThreadStarts(threadStartError(error, this.#options.module));
    });
    // A thread that ended as it started without an error (process.exit as the module loads): no
    // 'error', and piscina, which replaces a thread in the same turn, is left without any.
    const unstarted = () => {
      if (serving() && piscina.threads.length === 0 && this.#cannotStart === undefined) this.#noThreadStarts(`a new thread ended as it loaded ${this.#options.module}, with no error (process.exit in it?)`);
    };
    piscina.on('workerDestroy', () => setImmediate(unstarted));
    piscina.on('message', (message: Partial<ThreadRetiring>) => {
      if (message?.mcpvisorThreadRetiring) void this.#retire(message.mcpvisorThreadRetiring);
    });
    return piscina;
  }

  /**
   * No new thread could start (`cause`: its error's own words). Queued calls and new ones answer
   * POOL_UNAVAILABLE (piscina's close rejects what no thread took), running ones end as they would.
   * Decision: new threads are tried after the restart backoff (counted, as a process pool's failed
   * replacement), not at the next call: a `degraded` pool is out of a balancer's rotation (/health
   * 503), where no call would come to bring it back.
   */
  #noThreadStarts(cause: string): void {
    this.#cannotStart = cause;
    this.#lastError = `no thread could start: ${cause}`;
    const piscina = this.#piscina;
    this.#piscina = undefined;
    if (piscina) {
      this.#retired.add(piscina);
      void piscina.close({ force: true }).finally(() => this.#retired.delete(piscina));
    }
    const { delayMs, overIntensity } = this.#policy.next(performance.now());
    this.#log[overIntensity ? 'error' : 'warn']({ err: cause, delayMs, overIntensity }, 'no thread could start; trying again');
    this.#nextStartAt = performance.now() + delayMs;
    this.#startTimer = setTimeout(() => void this.#startAgain(), delayMs);
    this.#queue.rejectAll(this.#unavailable());
  }

  /** New threads, asked for their tools as at the start; they serve once they answered the same list. */
  async #startAgain(): Promise<void> {
    this.#nextStartAt = undefined;
    if (this.#state !== 'ready') return;
    this.#restarts++;
    const piscina = this.#newThreads();
    this.#retired.add(piscina); // stop() ends it
    const cause = (await startThreads(piscina, this.#launch, this.#options.startTimeoutMs ?? 60_000, (tools) => this.#list.accept(tools)))?.cause;
    this.#retired.delete(piscina);
    if (cause !== undefined || this.#state !== 'ready') {
      await piscina.destroy();
      if (cause !== undefined && this.#state === 'ready') this.#noThreadStarts(cause);
      return;
    }
    this.#piscina = piscina;
    this.#cannotStart = undefined;
    this.#log.warn({ threads: this.#options.threads }, 'threads start again; the pool serves calls');
  }

  #unavailable(): McpvisorError {
    return noLiveThread(this.name, this.#cannotStart ?? '', this.#nextStartAt === undefined ? undefined : this.#nextStartAt - performance.now(), this.#list.refused);
  }

  /**
   * After a thread ended, asks for the tools as at the start: a lone thread's replacement answers,
   * so one whose init throws or never ends (startTimeoutMs) says so now, not at a call's deadline.
   */
  #checkThreads(): void {
    const piscina = this.#piscina;
    if (!piscina || this.#checking || this.#state !== 'ready') return;
    this.#checking = true;
    void startThreads(piscina, this.#launch, this.#options.startTimeoutMs ?? 60_000, () => undefined).then((failure) => {
      this.#checking = false;
      // WORKER_CRASHED: it reached a thread ending after a crash of its own (thread-crash.ts), not a start.
      if (failure && failure.error.code !== 'WORKER_CRASHED' && piscina === this.#piscina && this.#state === 'ready') this.#noThreadStarts(failure.cause);
    });
  }

  /** A thread serving calls or finishing them. */
  #thread(threadId: number | undefined) {
    return threadId === undefined ? undefined : [this.#piscina, ...this.#retired].flatMap((piscina) => piscina?.threads ?? []).find((worker) => worker.threadId === threadId);
  }

  /** Takes one of the pool's slots first (admission.ts), then runs. */
  call(call: ToolCall, options: PoolCallOptions): Promise<ToolResult> {
    return admit(this.#queue, `the ${this.name} pool`, options, () => this.#refusal(), (admitted, budgetMs) => this.#run(call, admitted, budgetMs));
  }

  /** Why a call is answered without running: no thread can start, or the pool stops. */
  #refusal(): ToolResult | undefined {
    if (this.#state === 'ready' && this.#cannotStart !== undefined) return errorResult(this.#unavailable());
    if (!this.#piscina || this.#state === 'stopping' || this.#state === 'stopped') return errorResult(new McpvisorError('SHUTTING_DOWN', 'the server is shutting down'));
    return undefined;
  }

  /** An admitted call; its slot is freed when its thread is done with it. `budgetMs`: named at its deadline. */
  #run(call: ToolCall, options: PoolCallOptions, budgetMs: number): Promise<ToolResult> {
    const piscina = this.#piscina!;
    // No piscina signal: piscina runs an abortable task alone on its thread. The thread names
    // itself on the channel when the task starts, so a runaway can still be terminated. A call
    // handed to a thread being replaced after a crash never ran there: it runs again on another
    // (a new channel each time: the old one went to that thread).
    let channel: MessagePort;
    let thread: number | undefined;
    let ended = false;
    /** The caller has its answer (the thread's, or TIMEOUT or CANCELLED while the thread runs on). */
    let settled = false;
    // The call's own progress reports come on the same port; none once the caller is answered.
    const onMessage = (message: { threadId?: number; progress?: ProgressReport }) => {
      thread ??= message.threadId;
      if (message.progress && !settled) options.onProgress?.(message.progress);
    };
    let runaway = false;
    let grace: NodeJS.Timeout | undefined;
    this.#inFlight++;
    const session = options.session ?? '';
    const deadlineAt = threadClockMs() + options.deadlineMs;
    const attempt = (tries: number): Promise<ToolResult> => {
      const { port1, port2: channelInThread } = new MessageChannel();
      channel = port1;
      port1.on('message', onMessage);
      const task = {
        op: 'call',
        call,
        deadlineMs: options.deadlineMs,
        deadlineAt,
        cancel: channelInThread,
        progress: options.onProgress !== undefined,
        ...(options.callId === undefined ? {} : { callId: options.callId }),
      } satisfies ThreadTask;
      const again = () => {
        port1.close();
        return attempt(tries + 1);
      };
      const canRetry = () => tries < MAX_TRIES && !settled;
      // The session rides on the task as piscina's queue options (a symbol key: not sent to the thread).
      const tagged = Object.assign(task, { [QUEUE_OPTIONS]: { session } satisfies SessionTag });
      return piscina.run(tagged, { transferList: [channelInThread] }).then(
        (answer: ThreadAnswer) => {
          // Reports the thread posted before its answer, which came by piscina's own port: the last one of the call first.
          for (let queued = receiveMessageOnPort(port1); queued !== undefined; queued = receiveMessageOnPort(port1)) onMessage(queued.message as Parameters<typeof onMessage>[0]);
          // Run again once the crashed thread is gone: piscina would hand it to that thread again.
          if (!answer.ok && 'retry' in answer && canRetry()) return this.#gone(answer.threadId).then(again);
          // Failed before its thread named itself, and not given up: the thread's init failed
          // (thread-runtime.ts), and fails each call it gets, the same code and config in every thread.
          if (!answer.ok && !('retry' in answer) && thread === undefined && !['CANCELLED', 'TIMEOUT'].includes(answer.error.code)) {
            if (piscina === this.#piscina && this.#state === 'ready') this.#noThreadStarts(answer.error.message);
            if (this.#cannotStart !== undefined) return errorResult(this.#unavailable());
          }
          if (!answer.ok) return errorResult(answer.error);
          return 'result' in answer ? answer.result : errorResult(new McpvisorError('INTERNAL', 'the thread answered without a result'));
        },
        (error: Error) => {
          // The thread's first message (its id) may still wait on the port.
          for (let queued = receiveMessageOnPort(port1); queued !== undefined; queued = receiveMessageOnPort(port1)) onMessage(queued.message as Parameters<typeof onMessage>[0]);
          // Queued on threads that could not start: closed with the reason.
          if (thread === undefined && piscina !== this.#piscina && this.#cannotStart !== undefined && this.#state === 'ready') return errorResult(this.#unavailable());
          if (thread === undefined && this.#retiring.size > 0 && !runaway && canRetry()) return again();
          // Its thread was terminated under it for another call's runaway: a call that had not
          // started, or whose tool says running it twice is harmless, runs again on another thread.
          if (this.#terminating && !runaway && canRetry() && (thread === undefined || repeatable(this.#list.tools, call.tool))) return this.#gone(thread ?? -1).then(again);
          return this.#failed(error, runaway, thread);
        },
      );
    };
    const finished = attempt(1).finally(() => {
      ended = true;
      this.#inFlight--;
      this.#queue.freed(session);
      clearTimeout(grace);
      channel.close();
    });
    return new Promise<ToolResult>((resolve) => {
      const settle = (result: ToolResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        options.signal?.removeEventListener('abort', onAbort);
        resolve(result);
      };
      // Answered now; the thread is asked to stop, and made to if it has not within the grace.
      const giveUp = (error: McpvisorError) => {
        if (settled) return;
        settle(errorResult(error));
        channel.postMessage('cancel');
        // Judged after the event loop has read what came meanwhile (setImmediate runs after I/O,
        // the thread's answer included): a supervisor blocked past the grace (a long GC pause)
        // would otherwise terminate a thread whose call did end.
        grace = setTimeout(() => {
          setImmediate(() => {
            if (ended) return;
            runaway = true;
            this.#terminate(thread, call.tool);
          });
        }, this.#options.cancelGraceMs);
      };
      const deadline = setTimeout(() => giveUp(new McpvisorError('TIMEOUT', `the call ran past its ${budgetMs} ms deadline and was stopped`)), options.deadlineMs);
      const onAbort = () => giveUp(new McpvisorError('CANCELLED', 'the call was cancelled'));
      if (options.signal?.aborted) onAbort();
      else options.signal?.addEventListener('abort', onAbort, { once: true });
      void finished.then(settle);
    });
  }

  /**
   * Replaces a thread that crashed outside what a call awaited (thread-crash.ts), its running calls
   * answered by the thread itself: counted once, however many calls it ran.
   */
  #retire({ threadId, message, fromCall }: ThreadRetiring['mcpvisorThreadRetiring']): void {
    const worker = this.#thread(threadId);
    if (!worker || this.#retiring.has(threadId)) return;
    this.#retiring.add(threadId);
    this.#crashed(message, threadId, !fromCall);
    void this.#gone(threadId).then(() => this.#retiring.delete(threadId));
    void worker.terminate();
  }

  /** Resolves once a thread has ended (at once if it has). */
  #gone(threadId: number): Promise<void> {
    const worker = this.#thread(threadId);
    return worker ? new Promise<void>((resolve) => worker.once('exit', () => setImmediate(resolve))) : Promise.resolve();
  }

  /** Terminates the thread of a call that ignored its cancel; piscina replaces it. */
  #terminate(thread: number | undefined, tool: string): void {
    const worker = this.#thread(thread);
    if (!worker) return;
    this.#log.warn({ tool, graceMs: this.#options.cancelGraceMs }, 'a cancelled call kept its thread busy; terminating the thread');
    this.#terminating = true;
    worker.once('exit', () => setImmediate(() => (this.#terminating = false)));
    void worker.terminate();
  }

  /** The answer for a call piscina rejected (thread-failure.ts), its thread's end counted if it crashed. */
  #failed(error: Error, runaway: boolean, thread: number | undefined): ToolResult {
    const stopping = this.#state === 'stopping' || this.#state === 'stopped';
    const { maxQueue, maxOldGenerationSizeMb: heapMb } = this.#options;
    const answer = rejectedCall({ error, pool: this.name, maxQueue, heapMb, stopping, runaway, terminating: this.#terminating });
    if (answer.crash !== undefined) this.#crashed(answer.crash, thread, false);
    return errorResult(answer.error);
  }

  sessionsChanged(): void {
    this.#queue.release(0);
  }

  stats(): PoolStats {
    const piscina = this.#piscina;
    const state = this.#currentState();
    return {
      name: this.name,
      kind: 'thread',
      // As a process pool's: with no live thread it serves nothing, whatever its restarts.
      state: state === 'ready' && (piscina?.threads.length ?? 0) === 0 ? 'degraded' : state,
      workers: this.#options.threads,
      alive: piscina ? piscina.threads.length : 0,
      busy: Math.max(0, this.#inFlight - (piscina?.queueSize ?? 0)),
      queued: this.#queue.length + (piscina?.queueSize ?? 0),
      restarts: this.#restarts,
      ...(this.#lastError ? { lastError: this.#lastError } : {}),
    };
  }

  async stop(graceMs: number): Promise<void> {
    if (this.#state === 'stopped') return;
    this.#state = 'stopping';
    clearTimeout(this.#startTimer);
    this.#queue.rejectAll(new McpvisorError('SHUTTING_DOWN', 'the server is shutting down'));
    const deadline = performance.now() + graceMs;
    while (this.#inFlight > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await Promise.all([this.#piscina, ...this.#retired].map((piscina) => piscina?.destroy()));
    this.#state = 'stopped';
  }

  /**
   * Counts a thread's end once (ThreadEnds), against the restart intensity only when `counted`: as
   * in a process pool (process-pool.ts #scheduleRestart), an end caused by a call is that call's
   * failure, and a handful of them made the pool `degraded`.
   */
  #crashed(message: string, thread: number | undefined, counted: boolean): void {
    if (!this.#ends.first(thread)) return;
    this.#restarts++;
    this.#lastError = `a thread crashed: ${message}`;
    void this.#gone(thread ?? -1).then(() => this.#checkThreads());
    const overIntensity = counted ? this.#policy.next(performance.now()).overIntensity : this.#policy.isOverIntensity(performance.now());
    this.#log.warn({ err: message, overIntensity, ...(counted ? {} : { byCall: true }) }, 'thread crashed; piscina replaces it');
  }

  #currentState(): PoolState {
    if (this.#state !== 'ready') return this.#state;
    return this.#policy.isOverIntensity(performance.now()) ? 'degraded' : 'ready';
  }
}
