import type { TaskQueue } from 'piscina';

/** piscina's `queueOptionsSymbol` (Symbol.for, so piscina need not be loaded to tag a task). */
export const QUEUE_OPTIONS = Symbol.for('Piscina.queueOptions');

/** What piscina queues: its task, whose queue options (`[QUEUE_OPTIONS]`) name the session. */
type QueuedTask = NonNullable<ReturnType<TaskQueue['shift']>>;

/** The queue options a thread pool puts on a task: the session the call came from. */
export interface SessionTag {
  session?: string;
}

interface Entry {
  task: QueuedTask;
  seq: number;
}

/**
 * The wait queue of a thread pool (piscina's `taskQueue` option), fair between sessions as the
 * process pools' WaitQueue is: the next task is the oldest of the session running the fewest
 * calls in the pool now (`running`, counted by the pool), ties to the session served longest ago.
 * piscina's own queue was one FIFO for every session. The bound (`maxQueue`) stays piscina's.
 * A call reaches it only with a slot of the pool taken already (admission.ts: the pool's
 * WaitQueue), so it holds the calls no thread has room for although the slots say so: those
 * whose thread is being replaced.
 */
export class FairTaskQueue implements TaskQueue {
  #lines = new Map<string, Entry[]>();
  #size = 0;
  #seq = 0;
  /** When each session with tasks waiting was last served (#seq); none: not since it came. */
  #served = new Map<string, number>();
  #running: (session: string) => number;

  /** `running(session)`: calls of that session the pool runs now (not those waiting here). */
  constructor(running: (session: string) => number) {
    this.#running = running;
  }

  get size(): number {
    return this.#size;
  }

  /** Tasks of `session` waiting here. */
  waiting(session: string): number {
    return this.#lines.get(session)?.length ?? 0;
  }

  /** Tasks given out by `shift`: one pushed again is one piscina could not hand to a thread. */
  #given = new WeakSet<QueuedTask>();

  push(task: QueuedTask): void {
    // piscina puts such a task back at the tail (unless stricterFIFO): it goes first of its
    // session again, or a session's calls would run out of order.
    this.#add(task, this.#given.has(task));
  }

  /** piscina puts back a task it took but could not hand to a thread (stricterFIFO): first of its session again. */
  unshift(task: QueuedTask): void {
    this.#add(task, true);
  }

  shift(): QueuedTask | null {
    let best: string | undefined;
    let bestRunning = 0;
    let bestServed = 0;
    let bestSeq = 0;
    for (const [session, line] of this.#lines) {
      const running = this.#running(session);
      const served = this.#served.get(session) ?? -1;
      const seq = line[0].seq;
      if (best === undefined || running < bestRunning || (running === bestRunning && (served < bestServed || (served === bestServed && seq < bestSeq)))) {
        [best, bestRunning, bestServed, bestSeq] = [session, running, served, seq];
      }
    }
    if (best === undefined) return null;
    const entry = this.#take(best, 0);
    if (this.#lines.has(best)) this.#served.set(best, this.#seq++);
    this.#given.add(entry.task);
    return entry.task;
  }

  remove(task: QueuedTask): void {
    const session = sessionOf(task);
    const index = this.#lines.get(session)?.findIndex((entry) => entry.task === task) ?? -1;
    if (index >= 0) this.#take(session, index);
  }

  #add(task: QueuedTask, first: boolean): void {
    const session = sessionOf(task);
    const entry = { task, seq: first ? -1 : this.#seq++ };
    const line = this.#lines.get(session);
    if (!line) this.#lines.set(session, [entry]);
    else if (first) line.unshift(entry);
    else line.push(entry);
    this.#size++;
  }

  #take(session: string, index: number): Entry {
    const line = this.#lines.get(session)!;
    const [entry] = line.splice(index, 1);
    this.#size--;
    if (line.length === 0) {
      this.#lines.delete(session);
      this.#served.delete(session);
    }
    return entry;
  }
}

function sessionOf(task: QueuedTask): string {
  return ((task as unknown as Record<symbol, SessionTag | null | undefined>)[QUEUE_OPTIONS])?.session ?? '';
}
