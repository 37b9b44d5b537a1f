import { McpvisorError } from '../../protocol/errors';

interface Waiter {
  resolve(): void;
  reject(error: McpvisorError): void;
}

/**
 * Bounded FIFO of calls waiting for a free worker. A waiter leaves on abort (CANCELLED) or at its
 * deadline (TIMEOUT); a full queue answers BUSY at once, so a flood costs no memory.
 */
export class WaitQueue {
  #max: number;
  #waiters: Waiter[] = [];

  constructor(max: number) {
    this.#max = max;
  }

  get length(): number {
    return this.#waiters.length;
  }

  wait(signal: AbortSignal | undefined, deadlineAt: number, what: string): Promise<void> {
    if (this.#waiters.length >= this.#max) {
      return Promise.reject(new McpvisorError('BUSY', `${what} is busy (${this.#max} calls already waiting); try again later`));
    }
    if (signal?.aborted) return Promise.reject(new McpvisorError('CANCELLED', 'the call was cancelled'));
    return new Promise<void>((resolve, reject) => {
      const leave = () => {
        const index = this.#waiters.indexOf(waiter);
        if (index >= 0) this.#waiters.splice(index, 1);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        leave();
        reject(new McpvisorError('CANCELLED', 'the call was cancelled while waiting for a worker'));
      };
      const timer = setTimeout(() => {
        leave();
        reject(new McpvisorError('TIMEOUT', `the call waited for a worker of ${what} until its deadline`));
      }, Math.max(0, deadlineAt - performance.now()));
      const waiter: Waiter = {
        resolve: () => {
          leave();
          resolve();
        },
        reject: (error) => {
          leave();
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** Lets up to `slots` waiters go, oldest first. */
  release(slots = 1): void {
    for (let i = 0; i < slots && this.#waiters.length > 0; i++) this.#waiters[0].resolve();
  }

  /** Fails every waiter with `error` (the pool stops, or its workers cannot start). */
  rejectAll(error: McpvisorError): void {
    for (const waiter of [...this.#waiters]) waiter.reject(error);
  }
}
