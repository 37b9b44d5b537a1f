/**
 * A worker's raw output (a custom toolset's `console.log`, a stack trace Node prints, a child it
 * started) as bounded log lines. Why: a process worker's stdout and stderr went to the
 * supervisor's stderr as they came, and a thread's stdout onto the supervisor's stdout, which in
 * stdio mode carries only JSON-RPC: one `console.log` in a thread toolset broke the session, and
 * 20 MB written by a process toolset reached the log unbounded, in lines naming no toolset.
 */

/** Characters kept of one line; the rest is counted in the line's `cutChars`. */
export const OUTPUT_LINE_MAX_CHARS = 4096;
/** Characters of output logged per worker in each window; the rest is dropped and counted. */
export const OUTPUT_WINDOW_MAX_CHARS = 64 * 1024;
export const OUTPUT_WINDOW_MS = 10_000;

/** Lines of stderr kept for a worker that dies before it is ready. */
const STDERR_TAIL_LINES = 50;

export type OutputStream = 'stdout' | 'stderr';

export interface OutputSink {
  /** One line of output (without its newline); `cutChars` when the line was longer than OUTPUT_LINE_MAX_CHARS. */
  line(stream: OutputStream, text: string, cutChars: number): void;
  /** The window's budget is spent: what comes until it ends is dropped (said at once). */
  dropping(windowMs: number): void;
  /** How much was dropped, said when the window is over (or at the end). */
  dropped(chars: number): void;
}

/**
 * Splits chunks into lines and passes at most OUTPUT_WINDOW_MAX_CHARS of them per
 * OUTPUT_WINDOW_MS to `sink`, each cut at OUTPUT_LINE_MAX_CHARS. Windows run on the monotonic
 * clock; a window that drops output reports the count when it ends (an unreferenced timer).
 */
export class OutputLines {
  #sink: OutputSink;
  #partial: Record<OutputStream, string> = { stdout: '', stderr: '' };
  /** Characters of a line past OUTPUT_LINE_MAX_CHARS, not kept. */
  #cut: Record<OutputStream, number> = { stdout: 0, stderr: 0 };
  #windowStart = performance.now();
  #used = 0;
  #dropped = 0;
  /** The last lines of stderr, for a worker that dies before it is ready (its error). */
  #tail: string[] = [];

  constructor(sink: OutputSink) {
    this.#sink = sink;
  }

  /** The last few lines written to stderr (a crash's message and stack). */
  get stderrTail(): readonly string[] {
    return this.#tail;
  }

  write(stream: OutputStream, chunk: string): void {
    let start = 0;
    for (let newline = chunk.indexOf('\n'); newline >= 0; newline = chunk.indexOf('\n', start)) {
      this.#append(stream, chunk.slice(start, newline));
      this.#emit(stream);
      start = newline + 1;
    }
    this.#append(stream, chunk.slice(start));
  }

  /** Emits what is left of unfinished lines and the count of what was dropped. */
  end(): void {
    for (const stream of ['stdout', 'stderr'] as const) if (this.#partial[stream] || this.#cut[stream]) this.#emit(stream);
    this.#reportDropped();
  }

  #append(stream: OutputStream, text: string): void {
    const room = OUTPUT_LINE_MAX_CHARS - this.#partial[stream].length;
    if (text.length <= room) this.#partial[stream] += text;
    else {
      this.#partial[stream] += text.slice(0, Math.max(0, room));
      this.#cut[stream] += text.length - Math.max(0, room);
    }
  }

  #emit(stream: OutputStream): void {
    const text = this.#partial[stream].replace(/\r$/, '');
    const cut = this.#cut[stream];
    this.#partial[stream] = '';
    this.#cut[stream] = 0;
    if (stream === 'stderr') {
      this.#tail.push(text);
      // Node's report of an uncaught error: its message may have 20 lines of stack after it.
      if (this.#tail.length > STDERR_TAIL_LINES) this.#tail.shift();
    }
    const now = performance.now();
    if (now - this.#windowStart >= OUTPUT_WINDOW_MS) {
      this.#reportDropped();
      this.#windowStart = now;
      this.#used = 0;
    }
    const size = text.length + cut + 1;
    if (this.#used + size > OUTPUT_WINDOW_MAX_CHARS) {
      if (this.#dropped === 0) {
        this.#sink.dropping(OUTPUT_WINDOW_MS);
        setTimeout(() => this.#reportDropped(), Math.max(0, this.#windowStart + OUTPUT_WINDOW_MS - now)).unref();
      }
      this.#dropped += size;
      return;
    }
    this.#used += size;
    this.#sink.line(stream, text, cut);
  }

  #reportDropped(): void {
    if (this.#dropped === 0) return;
    this.#sink.dropped(this.#dropped);
    this.#dropped = 0;
  }
}
