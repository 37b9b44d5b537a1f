/**
 * Log lines a client can repeat at will (a refused request, a blocked command): the first of each
 * kind is logged whole, the rest of its window are counted, and one summary line gives their
 * number when the window ends. A flood of 10,000 bad tokens wrote 10,000 lines; now it writes two
 * a minute per kind. Kinds must come from a fixed set (status codes, pattern names), never from
 * what a client sends: each is an entry here until its window ends.
 */
export class RepeatSummary {
  readonly #windowMs: number;
  readonly #summarise: (kind: string, more: number, windowMs: number) => void;
  readonly #windows = new Map<string, { more: number; timer?: NodeJS.Timeout }>();

  /**
   * `summarise(kind, more, windowMs)` is called once per window in which `more` (> 0) lines of
   * `kind` were held back; `windowMs` defaults to one minute.
   */
  constructor(summarise: (kind: string, more: number, windowMs: number) => void, windowMs = 60_000) {
    this.#summarise = summarise;
    this.#windowMs = windowMs;
  }

  /** True when this occurrence of `kind` is to be logged whole: the first in its window. */
  first(kind: string): boolean {
    const window = this.#windows.get(kind);
    if (window === undefined) {
      const opened: { more: number; timer?: NodeJS.Timeout } = { more: 0 };
      // Unref'd: a window never keeps a process alive; its count is lost with the process.
      opened.timer = setTimeout(() => this.#close(kind), this.#windowMs);
      opened.timer.unref();
      this.#windows.set(kind, opened);
      return true;
    }
    window.more++;
    return false;
  }

  /** Writes the summaries of open windows now (before an exit). */
  flush(): void {
    for (const kind of [...this.#windows.keys()]) this.#close(kind);
  }

  #close(kind: string): void {
    const window = this.#windows.get(kind);
    if (window === undefined) return;
    clearTimeout(window.timer);
    this.#windows.delete(kind);
    if (window.more > 0) this.#summarise(kind, window.more, this.#windowMs);
  }
}

/** "in the last minute", "in the last 5 s": the window of a summary line, in words. */
export function windowWords(windowMs: number): string {
  if (windowMs === 60_000) return 'in the last minute';
  return windowMs % 1000 === 0 ? `in the last ${windowMs / 1000} s` : `in the last ${windowMs} ms`;
}
