import { write, writeSync } from 'node:fs';

/** Characters of log lines held while the reader is slow; past it lines are dropped and counted. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** Wait before writing again to a full non-blocking pipe. */
const RETRY_FULL_PIPE_MS = 50;
/** Errors after which nobody will ever read the file descriptor again. */
const READER_GONE = new Set(['EPIPE', 'EBADF', 'EINVAL', 'ECONNRESET']);

/**
 * Where pino writes: a file descriptor (stderr), written asynchronously, that never takes the
 * server down or stalls it. pino's own destination (sonic-boom) re-emitted every write error but
 * EPIPE as an uncaught exception, and its exit flush retried a failing write every 100 ms
 * forever: stderr on a full disk (`2>>/var/log/x` at ENOSPC) left the process spinning in its
 * exit handler, stdin unread and its port held. Decision: logging is never a reason to stop
 * serving. A reader gone for good (EPIPE: pm2 or the terminal gone; a closed descriptor) ends
 * logging silently, for there is nowhere to say it; any other write error (ENOSPC, EIO) drops
 * the lines that failed and tries again with the next ones, and the first line that gets
 * through is preceded by one saying how many were lost and why. A reader that stops reading
 * costs at most MAX_BUFFERED_BYTES of memory, then lines are dropped likewise.
 */
export class LogDestination {
  readonly #fd: number;
  readonly #maxBufferedBytes: number;
  #queue: string[] = [];
  #queuedBytes = 0;
  #writing = false;
  #gone = false;
  #dropped = 0;
  #dropReason = '';
  /** Notices of dropped lines in the queue, and the lines they count. */
  #queued = { notices: 0, counted: 0 };
  /** The same for the write in flight: if it fails, its notices are not lines lost, what they count is. */
  #inFlight = { notices: 0, counted: 0 };
  #idle: Array<() => void> = [];

  constructor(fd = 2, options: { maxBufferedBytes?: number } = {}) {
    this.#fd = fd;
    this.#maxBufferedBytes = options.maxBufferedBytes ?? MAX_BUFFERED_BYTES;
  }

  /** Queues one line (pino calls this with whole lines). Always returns true: callers never wait on logs. */
  write(line: string): boolean {
    if (this.#gone) return true;
    if (this.#queuedBytes + line.length > this.#maxBufferedBytes) {
      this.#drop(1, 'the log reader is not keeping up');
      return true;
    }
    // The loss is told where it happened: before the first line that got through after it.
    if (this.#dropped > 0) this.#queueNotice();
    this.#queue.push(line);
    this.#queuedBytes += line.length;
    if (!this.#writing) this.#next();
    return true;
  }

  /** Calls `callback` once every line queued so far was written or dropped. */
  flush(callback?: (error?: Error) => void): void {
    if (!callback) return;
    if (!this.#writing) return callback();
    this.#idle.push(() => callback());
  }

  /**
   * Writes what is queued now, synchronously, once: on the way out (process exit, a fatal line).
   * A write that fails drops the rest rather than retrying, so the exit never waits on logs. A
   * write in flight is left to finish: its bytes are already with the kernel by the time the
   * process exits, and the lines queued behind it follow it.
   */
  flushSync(): void {
    if (this.#gone) return;
    const text = this.#take();
    if (!text) return;
    try {
      writeSync(this.#fd, text);
    } catch {
      // Nowhere left to say it.
    }
  }

  end(): void {
    this.flushSync();
  }

  /** The queued lines, taken out of the queue. */
  #take(): string {
    this.#inFlight = this.#queued;
    this.#queued = { notices: 0, counted: 0 };
    const text = this.#queue.join('');
    this.#queue = [];
    this.#queuedBytes = 0;
    return text;
  }

  #next(): void {
    const text = this.#take();
    if (!text) {
      this.#writing = false;
      for (const done of this.#idle.splice(0)) done();
      return;
    }
    this.#writing = true;
    this.#send(Buffer.from(text, 'utf8'));
  }

  #send(bytes: Buffer): void {
    write(this.#fd, bytes, 0, bytes.length, null, (error, written) => {
      if (!error) {
        if (written < bytes.length) return this.#send(bytes.subarray(written));
        return this.#next();
      }
      const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
      if (code === 'EAGAIN' || code === 'EWOULDBLOCK') {
        setTimeout(() => this.#send(bytes), RETRY_FULL_PIPE_MS).unref();
        return;
      }
      if (READER_GONE.has(code)) {
        this.#gone = true;
        this.#queue = [];
        this.#queuedBytes = 0;
        this.#writing = false;
        for (const done of this.#idle.splice(0)) done();
        return;
      }
      this.#drop(countLines(bytes) - this.#inFlight.notices + this.#inFlight.counted, `${code} writing the log`);
      // Lines queued while the failed write was out go next: the notice goes before them (it came
      // after them, and the disk freed meanwhile showed them first, the loss told later or never).
      if (this.#queue.length > 0) this.#queueNotice(true);
      this.#next();
    });
  }

  /** Queues the notice of the lines dropped so far, at the end or (`first`) before what is queued. */
  #queueNotice(first = false): void {
    const notice = this.#droppedLine();
    if (first) this.#queue.unshift(notice);
    else this.#queue.push(notice);
    this.#queuedBytes += notice.length;
    this.#queued = { notices: this.#queued.notices + 1, counted: this.#queued.counted + this.#dropped };
    this.#dropped = 0;
  }

  #drop(lines: number, reason: string): void {
    this.#dropped += lines;
    this.#dropReason = reason;
  }

  #droppedLine(): string {
    const msg = `${this.#dropped} log line(s) dropped: ${this.#dropReason}`;
    return `${JSON.stringify({ level: 40, time: Date.now(), pid: process.pid, msg })}\n`;
  }
}

function countLines(bytes: Buffer): number {
  let lines = 0;
  for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) lines += 1;
  return Math.max(lines, 1);
}
