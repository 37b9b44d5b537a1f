import type { ProgressReport } from './call-progress';
import type { Channel } from './channel';
import { McpvisorError, type ErrorInfo } from './errors';
import type { SupervisorMessage, WorkerMessage } from './messages';
import type { ToolCall, ToolResult } from './tool';

const deadlineErrors = new WeakSet<Error>();
/**
 * How long a worker past a cancel's grace may keep its channel silent before it is given up on
 * (at least the grace): one large answer takes a loaded supervisor a while to read.
 */
const PING_QUIET_MS = 1000;

/** True for the TIMEOUT of a call's own deadline; a worker's TIMEOUT (an upstream's) is not one. */
export function isDeadlineError(error: unknown): boolean {
  return error instanceof Error && deadlineErrors.has(error);
}

export interface RpcCallOptions {
  /** Aborting cancels the call in the worker and rejects with CANCELLED. */
  signal?: AbortSignal;
  /** Budget of the call in ms; past it the call is cancelled and rejects with TIMEOUT. */
  deadlineMs: number;
  /** How long a cancelled call may take to stop before `onUnresponsive` fires. Default 1000 ms. */
  cancelGraceMs?: number;
  /** The worker ignored a cancel for `cancelGraceMs`: the owner should kill it. */
  onUnresponsive?: () => void;
  /**
   * Called once when the call no longer holds a slot (`inFlight`): at its answer, or, for a
   * cancelled call, once the worker confirms it stopped (or is given up on), which can be well
   * after the call settled.
   */
  onFreed?: () => void;
  /** The supervisor's id of the call, which the worker puts on the lines its call logs. */
  callId?: string;
  /** The worker's progress reports of the call while it is pending (asked for in the `call` message). */
  onProgress?: (report: ProgressReport) => void;
}

interface Pending {
  resolve(result: ToolResult): void;
  reject(error: McpvisorError): void;
  progress?: (report: ProgressReport) => void;
}

/**
 * Supervisor side of the request/response RPC over one channel. Every call settles exactly once:
 * with the worker's answer, at its deadline (TIMEOUT), on abort (CANCELLED), or when the channel
 * closes (WORKER_CRASHED). A cancelled call keeps its slot (`inFlight`) until the worker confirms
 * it stopped, so a worker that ignores cancels is seen and can be killed.
 */
export class RpcClient {
  #channel: Channel<SupervisorMessage, WorkerMessage>;
  #nextId = 1;
  #pending = new Map<number, Pending>();
  /** Cancelled calls the worker has not confirmed: their grace timer, and their `onFreed`. */
  #stopping = new Map<number, { grace: NodeJS.Timeout; freed: () => void }>();
  #statsWaiters = new Map<number, (stats: Record<string, unknown>) => void>();
  #warmWaiters = new Map<number, () => void>();
  #closedReason: string | undefined;
  /** When the worker's last message arrived (performance.now()). */
  #lastMessageAt = 0;
  #detach: Array<() => void>;

  /** `onOther` receives the messages that are not answers (ready, fatal, log). */
  constructor(channel: Channel<SupervisorMessage, WorkerMessage>, onOther: (message: WorkerMessage) => void) {
    this.#channel = channel;
    // After close, log lines still pass: a stopping worker's last words (a summary of what it
    // held back, a failure to close its service) came after the pool closed its client and were lost.
    channel.onMessage((message) => {
      this.#lastMessageAt = performance.now();
      if (this.#closedReason === undefined) this.#receive(message, onOther);
      else if (message.type === 'log') onOther(message);
    });
    this.#detach = [channel.onClose((reason) => this.close(reason))];
  }

  /** Calls not yet answered, including cancelled ones the worker has not confirmed. */
  get inFlight(): number {
    return this.#pending.size + this.#stopping.size;
  }

  get closed(): boolean {
    return this.#closedReason !== undefined;
  }

  call(call: ToolCall, options: RpcCallOptions): Promise<ToolResult> {
    let wasFreed = false;
    const freed = () => {
      if (wasFreed) return;
      wasFreed = true;
      options.onFreed?.();
    };
    if (this.#closedReason !== undefined) {
      freed();
      return Promise.reject(new McpvisorError('WORKER_CRASHED', `the worker is gone (${this.#closedReason})`));
    }
    const { signal, deadlineMs } = options;
    if (signal?.aborted) {
      freed();
      return Promise.reject(new McpvisorError('CANCELLED', 'the call was cancelled'));
    }
    const id = this.#nextId++;
    return new Promise<ToolResult>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const stop = (reason: 'timeout' | 'cancelled', error: McpvisorError) => {
        if (!this.#pending.has(id)) return;
        settle();
        reject(error);
        this.#channel.send({ type: 'cancel', id, reason });
        const graceMs = options.cancelGraceMs ?? 1000;
        const giveUp = () => {
          if (!this.#stopping.delete(id)) return;
          options.onUnresponsive?.();
          freed();
        };
        // Judged after the event loop has read what came meanwhile (setImmediate runs after I/O):
        // a supervisor blocked past the grace (a long GC pause) has the worker's confirmation
        // waiting, and would otherwise kill a worker that did stop. Past the grace, the worker is
        // asked for a sign of life: its answer may still be crossing the channel behind large
        // answers (8 of 16 MiB took longer than a 300 ms grace, and a healthy worker was killed
        // with every call it held).
        const grace = setTimeout(() => {
          setImmediate(() => {
            if (!this.#stopping.has(id)) return;
            void this.#ping(Math.max(graceMs, PING_QUIET_MS)).then(giveUp);
          });
        }, graceMs);
        grace.unref();
        this.#stopping.set(id, { grace, freed });
      };
      const onAbort = () => stop('cancelled', new McpvisorError('CANCELLED', 'the call was cancelled'));
      const settle = () => {
        this.#pending.delete(id);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      this.#pending.set(id, {
        resolve: (result) => {
          settle();
          resolve(result);
          freed();
        },
        reject: (error) => {
          settle();
          reject(error);
          freed();
        },
        progress: options.onProgress,
      });
      timer = setTimeout(() => {
        const error = new McpvisorError('TIMEOUT', `the call ran past its ${deadlineMs} ms deadline and was stopped`);
        deadlineErrors.add(error);
        stop('timeout', error);
      }, deadlineMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#channel.send({ type: 'call', id, call, deadlineMs, ...(options.callId === undefined ? {} : { callId: options.callId }), ...(options.onProgress ? { progress: true } : {}) });
    });
  }

  /** Asks the worker for its own statistics; resolves `undefined` if it does not answer in time. */
  stats(timeoutMs = 1000): Promise<Record<string, unknown> | undefined> {
    if (this.#closedReason !== undefined) return Promise.resolve(undefined);
    const id = this.#nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#statsWaiters.delete(id);
        resolve(undefined);
      }, timeoutMs);
      this.#statsWaiters.set(id, (stats) => {
        clearTimeout(timer);
        resolve(stats);
      });
      this.#channel.send({ type: 'stats', id });
    });
  }

  /**
   * Resolves once the worker answers a ping sent now, or once the channel has brought nothing
   * for `quietMs`. One pipe carries everything in order, so the answer comes after whatever the
   * worker sent before it: a call's answer still on its way has arrived by then. A worker stuck
   * in code that never yields does not answer, and its channel falls quiet.
   */
  #ping(quietMs: number): Promise<void> {
    if (this.#closedReason !== undefined) return Promise.resolve();
    const id = this.#nextId++;
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.#statsWaiters.delete(id);
        resolve();
      };
      const watch = () => {
        if (done) return;
        const quietForMs = performance.now() - this.#lastMessageAt;
        if (quietForMs >= quietMs) return finish();
        timer = setTimeout(() => setImmediate(watch), quietMs - quietForMs);
        timer.unref();
      };
      this.#statsWaiters.set(id, finish);
      this.#channel.send({ type: 'stats', id });
      timer = setTimeout(() => setImmediate(watch), quietMs);
      timer.unref();
    });
  }

  /**
   * Asks the worker to load what its first call needs (WorkerService.warmUp); resolves when it
   * has, when it is gone, or after `timeoutMs` (a worker busy elsewhere holds no one up).
   */
  warmUp(timeoutMs = 10_000): Promise<void> {
    if (this.#closedReason !== undefined) return Promise.resolve();
    const id = this.#nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#warmWaiters.delete(id);
        resolve();
      }, timeoutMs);
      this.#warmWaiters.set(id, () => {
        clearTimeout(timer);
        resolve();
      });
      this.#channel.send({ type: 'warm-up', id });
    });
  }

  /**
   * Fails every pending call with WORKER_CRASHED (`reason` says why), or with SHUTTING_DOWN when
   * the server is stopping the worker on purpose; later calls reject at once. Idempotent.
   */
  close(reason: string, code: 'WORKER_CRASHED' | 'SHUTTING_DOWN' = 'WORKER_CRASHED'): void {
    if (this.#closedReason !== undefined) return;
    this.#closedReason = reason;
    for (const detach of this.#detach) detach();
    const stopping = [...this.#stopping.values()];
    this.#stopping.clear();
    for (const { grace, freed } of stopping) {
      clearTimeout(grace);
      freed();
    }
    for (const resolve of this.#statsWaiters.values()) resolve({});
    this.#statsWaiters.clear();
    for (const resolve of this.#warmWaiters.values()) resolve();
    this.#warmWaiters.clear();
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const entry of pending) {
      entry.reject(code === 'SHUTTING_DOWN' ? new McpvisorError('SHUTTING_DOWN', reason) : new McpvisorError('WORKER_CRASHED', `the worker running this call crashed (${reason})`));
    }
  }

  #receive(message: WorkerMessage, onOther: (message: WorkerMessage) => void): void {
    switch (message.type) {
      case 'result':
      case 'error': {
        const pending = this.#pending.get(message.id);
        if (pending) {
          if (message.type === 'result') pending.resolve(message.result);
          else pending.reject(McpvisorError.fromInfo(message.error as ErrorInfo));
        } else {
          // A cancelled call the worker has now stopped: its slot is free.
          const stopping = this.#stopping.get(message.id);
          if (!stopping) return;
          this.#stopping.delete(message.id);
          clearTimeout(stopping.grace);
          stopping.freed();
        }
        return;
      }
      case 'progress':
        // Dropped once the call has settled (answered, cancelled, timed out): nothing after its result.
        this.#pending.get(message.id)?.progress?.(message.report);
        return;
      case 'stats':
        this.#statsWaiters.get(message.id)?.(message.stats);
        this.#statsWaiters.delete(message.id);
        return;
      case 'warmed':
        this.#warmWaiters.get(message.id)?.();
        this.#warmWaiters.delete(message.id);
        return;
      default:
        onOther(message);
    }
  }
}
