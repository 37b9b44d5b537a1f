import { execFile, execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, unlinkSync } from 'node:fs';
import { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * Real pipes for a command's stdout and stderr. Node gives a child its stdio as socket pairs, and
 * a socket cannot be opened by name: `echo x >/dev/stderr`, `tee /dev/stdout` and Python's
 * `open('/dev/stdout')` failed with "No such device or address", in both modes. A FIFO opened at
 * both ends and unlinked at once is an ordinary pipe, which `/proc/self/fd/1` reopens.
 *
 * Node cannot make a FIFO, so one `mkfifo` makes them ahead, in batches, in a private directory;
 * taking two costs a few µs. Each is used once: a FIFO opened again joins the pipe a writer of an
 * earlier command may still hold. When none is ready (a burst, or no `mkfifo`), the command gets
 * Node's socket pair, as before.
 */
const BATCH = 32;
/** Below this many ready FIFOs a new batch is made. */
const LOW = 8;

let dir: string | undefined;
const ready: string[] = [];
let making = false;
let unavailable = false;
let made = 0;

/**
 * Makes a batch of FIFOs when few are left: in the background, or with `now` before returning
 * (a worker's start, so that its first command, started ahead, has real pipes too).
 */
export function fillPipePool(now = false): void {
  if (making || unavailable || ready.length >= LOW) return;
  try {
    dir ??= mkdtempSync(path.join(os.tmpdir(), 'mcpvisor-pipes-'));
  } catch {
    unavailable = true;
    return;
  }
  const names = Array.from({ length: BATCH }, () => path.join(dir!, String(made++)));
  const args = ['-m', '600', ...names];
  if (now) {
    try {
      execFileSync('mkfifo', args, { stdio: 'ignore' });
      ready.push(...names);
    } catch {
      unavailable = true;
    }
    return;
  }
  making = true;
  execFile('mkfifo', args, (error) => {
    making = false;
    if (error) unavailable = true;
    else ready.push(...names);
  });
}

export interface OutputPipes {
  /** The write ends, to give the child as its fds 1 and 2. */
  fds: [number, number];
  /** The read ends, as streams. */
  streams: [Socket, Socket];
  /** Closes our copies of the write ends (after the spawn), so the streams end with the command. */
  closeWriteEnds(): void;
}

/** Two fresh pipes, or undefined when none is ready (use Node's `'pipe'`). */
export function takeOutputPipes(): OutputPipes | undefined {
  if (ready.length < 2) {
    fillPipePool();
    return undefined;
  }
  const names = [ready.shift()!, ready.shift()!];
  fillPipePool();
  const opened: number[] = [];
  try {
    // The read end first, without blocking: the write end then opens at once.
    const ends = names.map((name) => {
      const read = openSync(name, constants.O_RDONLY | constants.O_NONBLOCK);
      opened.push(read);
      const write = openSync(name, constants.O_WRONLY);
      opened.push(write);
      return { read, write };
    });
    const streams = ends.map(({ read }) => new Socket({ fd: read, readable: true, writable: false })) as [Socket, Socket];
    let closed = false;
    return {
      fds: [ends[0].write, ends[1].write],
      streams,
      closeWriteEnds: () => {
        if (closed) return;
        closed = true;
        for (const { write } of ends) closeSync(write);
      },
    };
  } catch {
    for (const fd of opened) {
      try {
        closeSync(fd);
      } catch {
        // Closed already.
      }
    }
    return undefined;
  } finally {
    for (const name of names) {
      try {
        unlinkSync(name);
      } catch {
        // Gone already.
      }
    }
  }
}

process.once('exit', () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});
