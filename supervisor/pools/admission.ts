import type { PoolCallOptions } from '../../protocol/pool';
import { errorResult } from '../../protocol/results';
import type { ToolResult } from '../../protocol/tool';
import type { WaitQueue } from './wait-queue';

/**
 * Admits a call to a pool whose slots its WaitQueue counts (a thread pool: threads × calls each):
 * the call takes a slot there, at once or after waiting its turn (fair between sessions, keeping
 * the reserved slots: wait-queue.ts), before it reaches the threads, and holds it until the pool
 * calls `queue.freed`. Decision: the slot is taken ahead of piscina, whose own queue then holds
 * only calls whose thread is being replaced: piscina hands a task to any thread with room,
 * bypassing its task queue when that is empty, and takes any `shift` as a task, so no task queue
 * can hold a call back while a slot is free. `refusal`: the answer instead of running, if any
 * (asked again after a wait: the pool may have stopped meanwhile). `run` gets the options with
 * what is left of the budget, and the whole budget (`budgetMs`) to name at the deadline. Waiting
 * answers BUSY (the queue full), CANCELLED or TIMEOUT, as a result.
 */
export function admit(
  queue: WaitQueue,
  what: string,
  options: PoolCallOptions,
  refusal: () => ToolResult | undefined,
  run: (admitted: PoolCallOptions, budgetMs: number) => Promise<ToolResult>,
): Promise<ToolResult> {
  const refused = refusal();
  if (refused) return Promise.resolve(refused);
  const session = options.session ?? '';
  if (queue.take(session)) return run(options, options.deadlineMs);
  const deadlineAt = performance.now() + options.deadlineMs;
  return queue.wait(options.signal, deadlineAt, what, session).then(
    () => {
      const late = refusal();
      if (late) queue.freed(session);
      return late ?? run({ ...options, deadlineMs: Math.max(1, Math.floor(deadlineAt - performance.now())) }, options.deadlineMs);
    },
    (error: unknown) => errorResult(error),
  );
}
