import type { RpcClient } from '../../protocol/rpc';

export interface LivenessOptions {
  /** How often each worker is asked; 0 turns the check off. */
  intervalMs: number;
  /** How long a worker may take to answer before it counts as hung. */
  timeoutMs: number;
  /** The workers to check now: ready ones. */
  workers: () => Iterable<{ id: number; rpc: RpcClient }>;
  onUnresponsive: (workerId: number) => void;
}

/**
 * Asks each ready worker, every `intervalMs`, for its stats over IPC, which its event loop
 * answers at once. A worker stopped (SIGSTOP, a debugger), swapped out or stuck in code that
 * never yields looks alive to the OS and to /health: before this, until a call to it ran into its
 * deadline, and an idle one never. One that has not answered within `timeoutMs` is reported to
 * `onUnresponsive`. One question per worker at a time, so a hung worker collects no backlog.
 */
export class LivenessCheck {
  readonly #options: LivenessOptions;
  readonly #asking = new Set<number>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: LivenessOptions) {
    this.#options = options;
  }

  start(): void {
    if (this.#options.intervalMs <= 0 || this.#timer) return;
    this.#timer = setInterval(() => this.#round(), this.#options.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #round(): void {
    for (const { id, rpc } of this.#options.workers()) {
      if (this.#asking.has(id) || rpc.closed) continue;
      this.#asking.add(id);
      void rpc.stats(this.#options.timeoutMs).then((stats) => {
        this.#asking.delete(id);
        // A closed channel answers {} at once: the worker's exit is handled elsewhere.
        if (stats === undefined && !rpc.closed && this.#timer) this.#options.onUnresponsive(id);
      });
    }
  }
}
