import { execFile, execFileSync } from 'node:child_process';
import { accessSync, closeSync, constants, openSync, realpathSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freshProcessDir } from '../common/process-dirs';

/**
 * Real pipes for a command's stdout and stderr. Node gives a child its stdio as socket pairs, and
 * a socket cannot be opened by name: `echo x >/dev/stderr`, `tee /dev/stdout` and Python's
 * `open('/dev/stdout')` failed with "No such device or address", in both modes. A FIFO opened at
 * both ends and unlinked at once is an ordinary pipe, which `/proc/self/fd/1` reopens.
 *
 * Node cannot make a FIFO, so one `mkfifo` makes them ahead, in batches, in a private directory;
 * taking two costs a few µs. Each is used once: a FIFO opened again joins the pipe a writer of an
 * earlier command may still hold. When none is ready (a burst, a full disk, or no `mkfifo`), the
 * command gets Node's socket pair, as before.
 *
 * Decision: only a missing `mkfifo` gives up for good. A batch that fails (the temporary
 * directory out of space or inodes, or our directory removed: an unconfined `rm -rf /tmp/*`)
 * is made again, in a fresh directory, when the next command takes pipes: one failure had left
 * every later command of the worker, any session's, without `/dev/stdout` until it restarted.
 */
const BATCH = 64;
/** Below this many ready FIFOs a new batch is made: a worker's 16 concurrent commands take 32. */
const LOW = 40;

let dir: string | undefined;
const ready: string[] = [];
let filling: Promise<void> | undefined;
/** No `mkfifo` here (or no directory outside the workspace for its FIFOs): socket pairs only. */
let unavailable = false;
/** The last batch failed: a command does not wait for the next one (made in the background). */
let failing = false;
let made = 0;
/** Where the FIFOs' directory is made: the temporary directory, unless placePipes chose another. */
let parent: string | undefined;

/**
 * Chooses where the FIFOs wait (call before the first batch): the temporary directory, else the
 * host's `/dev/shm`, else `/run/user/<uid>`; with none, socket pairs only. A directory is passed
 * over when this user cannot write it (a `TMPDIR` of another user's, a read-only one: no batch was
 * ever made there, and every command got socket pairs without a word), and, given `workspace`
 * (sandbox mode), when it lies in the workspace: the FIFOs wait there by name until a command
 * takes them, so a sandboxed command that can open them (a workspace of `/tmp`, or holding
 * `TMPDIR`) held the write end of a later command's stdout, of any session, and wrote into its
 * result, or read it (the sandbox has its own `/dev/shm`). Returns the one chosen and why the
 * temporary directory was not, when it was not.
 */
export function placePipes(workspace?: string): { parent?: string; tmpdirNotWritable?: string } {
  const check = (dir: string): { ok: true } | { ok: false; notWritable?: string } => {
    let real: string;
    try {
      real = realpathSync(dir);
      accessSync(real, constants.W_OK | constants.X_OK);
      if (!statSync(real).isDirectory()) return { ok: false, notWritable: `${dir} is not a directory` };
    } catch (error) {
      return { ok: false, notWritable: `${dir} is not there or not writable by this user (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
    }
    const inWorkspace = workspace !== undefined && (real === workspace || real.startsWith(workspace.endsWith('/') ? workspace : `${workspace}/`));
    return inWorkspace ? { ok: false } : { ok: true };
  };
  const tmp = tmpdir();
  const tmpCheck = check(tmp);
  const candidates = ['/dev/shm', ...(process.getuid ? [`/run/user/${process.getuid()}`] : [])];
  parent = tmpCheck.ok ? tmp : candidates.find((dir) => check(dir).ok);
  if (!parent) unavailable = true;
  return { parent, ...(!tmpCheck.ok && tmpCheck.notWritable ? { tmpdirNotWritable: tmpCheck.notWritable } : {}) };
}

/**
 * Makes a batch of FIFOs when few are left, in the background (the promise settles when it is
 * made), or with `now` before returning (a worker's start: its first command, started ahead, has
 * real pipes too). Never rejects: without `mkfifo` the pool stays empty.
 */
export function fillPipePool(now = false): Promise<void> {
  if (filling) return filling;
  if (unavailable || ready.length >= LOW) return Promise.resolve();
  try {
    // Named with our pid: a worker killed with -9 leaves its directory, which the next one removes.
    dir ??= freshProcessDir('mcpvisor-pipes-', parent).dir;
  } catch {
    // Out of space or inodes, or no such directory: tried again at the next command.
    failing = true;
    return Promise.resolve();
  }
  const names = Array.from({ length: BATCH }, () => path.join(dir!, String(made++)));
  const args = ['-m', '600', ...names];
  if (now) {
    try {
      execFileSync('mkfifo', args, { stdio: 'ignore' });
      batchMade(names);
    } catch (error) {
      batchFailed(error as { code?: string });
    }
    return Promise.resolve();
  }
  filling = new Promise((resolve) => {
    execFile('mkfifo', args, (error) => {
      filling = undefined;
      if (error) batchFailed(error);
      else batchMade(names);
      resolve();
    });
  });
  return filling;
}

function batchMade(names: string[]): void {
  failing = false;
  ready.push(...names);
}

/** `mkfifo` missing: never again. Anything else: the next batch goes to a fresh directory. */
function batchFailed(error: { code?: string | number | null }): void {
  if (error.code === 'ENOENT') {
    unavailable = true;
    return;
  }
  failing = true;
  abandonDirectory();
}

/** Drops the directory and the FIFOs waiting in it (a failed batch, or FIFOs found gone). */
function abandonDirectory(): void {
  ready.length = 0;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
}

/** The directory the FIFOs are made in, once the first batch was asked for. */
export function pipeDirectory(): string | undefined {
  return dir;
}

/** Two fresh pipes, waiting for a batch when none is left (a burst); undefined without `mkfifo`. */
export async function outputPipes(): Promise<OutputPipes | undefined> {
  for (let tries = 0; ready.length < 2 && !unavailable && !failing && tries < 3; tries++) await fillPipePool();
  return takeOutputPipes();
}

export interface OutputPipes {
  /** The write ends, to give the child as its fds 1 and 2. */
  fds: [number, number];
  /** The read ends, as streams. */
  streams: [Socket, Socket];
  /** Closes our copies of the write ends (after the spawn), so the streams end with the command. */
  closeWriteEnds(): void;
}

/** Two fresh pipes if some are ready, else undefined (use Node's `'pipe'`). */
export function takeOutputPipes(): OutputPipes | undefined {
  if (ready.length < 2) {
    void fillPipePool();
    return undefined;
  }
  const names = [ready.shift()!, ready.shift()!];
  void fillPipePool();
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
  } catch (error) {
    // Removed under us (an unconfined command cleaning the temporary directory): so are the rest.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      abandonDirectory();
      void fillPipePool();
    }
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

/** Closes pipes taken and not given to a command. */
export function releasePipes(pipes: OutputPipes | undefined): void {
  if (!pipes) return;
  pipes.closeWriteEnds();
  for (const stream of pipes.streams) stream.destroy();
}

process.once('exit', () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});
