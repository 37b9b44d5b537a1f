import { AsyncLocalStorage } from 'node:async_hooks';
import { parentPort, threadId } from 'node:worker_threads';
import { toErrorInfo, type ErrorInfo } from './errors';
import type { WorkerLogger } from './worker-runtime';

/** What a thread posts on its parent port once it must be replaced and no call runs on it (thread-pool.ts terminates it). */
export interface ThreadRetiring {
  /** `fromCall`: it came from a call's code, that call's failure (the pool does not count it against its restart intensity). */
  mcpvisorThreadRetiring: { threadId: number; message: string; fromCall: boolean };
}

interface RunningCall {
  id: number;
  tool: string;
  callId?: string;
  fail?: (error: ErrorInfo) => void;
}

/**
 * What a thread does when a rejection nobody handled or a throw from a timer comes. Node ended
 * the thread, piscina failing every call then on it with the bare error; and, idle threads
 * asleep in Atomics.wait, a rejection from an earlier call's timer came when the next call woke
 * the thread, and that call took the blame. Now the call whose code it came from (its async
 * context, AsyncLocalStorage) is answered WORKER_CRASHED naming the error; when it came from no
 * call's code (context lost, or code of the module's own) and calls run, each of them is, saying
 * which one cannot be told. Calls not blamed run to their end; calls handed to the thread
 * afterwards are answered `retry` (they run on another thread); then the pool replaces it.
 */
export class ThreadCrash {
  #calls = new AsyncLocalStorage<RunningCall>();
  #running = new Map<number, RunningCall>();
  #next = 0;
  #crashed: string | undefined;
  #crashedFromCall = false;
  /** From describing the tools until the first call: a throw then ends the thread as Node would, and the start says why. */
  #describing = false;

  constructor(log: WorkerLogger, pool: string | undefined) {
    process.on('uncaughtException', (error, origin) => {
      const what = origin === 'unhandledRejection' ? 'a promise rejection nobody handled' : 'an exception thrown outside a call (a timer, an event)';
      const { message } = toErrorInfo(error);
      const stack = error instanceof Error ? error.stack : undefined;
      if (this.#describing && this.#running.size === 0) {
        // Piscina's own failures (an answer it cannot send) end the thread this way, and the start names them.
        process.removeAllListeners('uncaughtException');
        queueMicrotask(() => {
          throw error;
        });
        return;
      }
      const from = this.#calls.getStore();
      const source = from ? `, from the code of call ${from.callId ?? from.id} (tool ${from.tool})` : '';
      if (this.#crashed !== undefined) {
        log.error(`${what}${source} came again on a thread being replaced: ${message}`, { stack });
        return;
      }
      const crashed = `${what} ended the thread${source}: ${message}`;
      this.#crashed = crashed;
      this.#crashedFromCall = from !== undefined;
      const running = [...this.#running.values()];
      const blamed = from ? running.filter((call) => call.id === from.id) : running;
      const text =
        blamed.length === 1
          ? `${what} ended the thread running this call: ${message}`
          : `${what} ended the thread running this call and ${blamed.length - 1} other(s); which of them it came from cannot be told: ${message}`;
      for (const call of blamed) {
        this.#running.delete(call.id);
        call.fail?.({ code: 'WORKER_CRASHED', message: text });
      }
      const left = this.#running.size;
      log.error(
        `${what} in toolset ${pool}${source}${from && blamed.length === 0 ? ', answered already' : ''}${running.length === 0 ? ', on an idle thread' : ''}, ` +
          `ended the thread; ${blamed.length} call(s) answered WORKER_CRASHED; it is replaced${left > 0 ? ` once its ${left} other call(s) end` : ''}: ${message}`,
        { stack },
      );
      this.#retireWhenIdle();
    });
  }

  /** Called when the pool asks for the tool list. */
  describing(): void {
    this.#describing = true;
  }

  /** Set when the thread must not start another call: it crashed. */
  get crashed(): string | undefined {
    return this.#crashed;
  }

  /** Runs a call's code in its own async context; a crash blamed on it answers with `crashed` instead. */
  run<T>(call: { tool: string; callId?: string }, work: () => Promise<T>, crashed: (error: ErrorInfo) => T): Promise<T> {
    this.#describing = false;
    const entry: RunningCall = { id: this.#next++, ...call };
    this.#running.set(entry.id, entry);
    return new Promise<T>((resolve, reject) => {
      entry.fail = (error) => resolve(crashed(error));
      this.#calls
        .run(entry, work)
        .then(resolve, reject)
        .finally(() => {
          this.#running.delete(entry.id);
          this.#retireWhenIdle();
        });
    });
  }

  #retireWhenIdle(): void {
    const message = this.#crashed;
    if (message === undefined || this.#running.size > 0) return;
    // After the answers (their microtasks run first): the pool terminates the thread.
    setImmediate(() => parentPort?.postMessage({ mcpvisorThreadRetiring: { threadId, message, fromCall: this.#crashedFromCall } } satisfies ThreadRetiring));
  }
}
