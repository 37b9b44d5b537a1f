/**
 * Tells a thread's end apart from the calls it failed: piscina rejects each call a thread held
 * (a thread of concurrency 4 was counted as 4 restarts), and a thread ends once.
 */
export class ThreadEnds {
  #ended = new Set<number>();
  /** A thread ended under calls that had not named their thread yet, in this turn of the event loop. */
  #unnamed = false;

  /** True the first time the end of `thread` is reported (undefined: not named, once a turn). */
  first(thread: number | undefined): boolean {
    if (thread === undefined) {
      if (this.#unnamed) return false;
      this.#unnamed = true;
      setImmediate(() => (this.#unnamed = false));
      return true;
    }
    if (this.#ended.has(thread)) return false;
    this.#ended.add(thread);
    // Ids are never reused; only the latest are asked for again (the calls of one end).
    if (this.#ended.size > 64) this.#ended.delete(this.#ended.values().next().value as number);
    return true;
  }
}
