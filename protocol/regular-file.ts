import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';

/**
 * A file the operator named that cannot be read as a whole: `NOT_REGULAR` (a directory, a FIFO,
 * a device such as /dev/zero) or `TOO_LARGE` (past the caller's cap). Its message says which, to
 * follow "<what> <path>: ".
 */
export class FileRefusedError extends Error {
  readonly code: 'NOT_REGULAR' | 'TOO_LARGE';

  constructor(code: 'NOT_REGULAR' | 'TOO_LARGE', message: string) {
    super(message);
    this.name = 'FileRefusedError';
    this.code = code;
  }
}

// O_NONBLOCK: opening a FIFO no one writes to waited for a writer forever; a regular file ignores it.
const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/**
 * The text (UTF-8) of the regular file `file`, at most `maxBytes` bytes. Throws FileRefusedError
 * for anything else (a FIFO hung the start, /dev/zero grew the process by gigabytes until V8's
 * string limit, a 2 GB sparse file took 2 GB before failing) and open's errors (ENOENT, EACCES…).
 */
export function readRegularFileSync(file: string, maxBytes: number): string {
  const fd = openSync(file, FLAGS);
  try {
    const size = checkRegular(fstatSync(fd), maxBytes);
    let buffer: Buffer = Buffer.allocUnsafe(Math.min(size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) buffer = grown(buffer, maxBytes);
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

/** readRegularFileSync, without blocking the event loop. */
export async function readRegularFile(file: string, maxBytes: number): Promise<string> {
  const handle = await open(file, FLAGS);
  try {
    const size = checkRegular(await handle.stat(), maxBytes);
    let buffer: Buffer = Buffer.allocUnsafe(Math.min(size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) buffer = grown(buffer, maxBytes);
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return buffer.toString('utf8', 0, length);
  } finally {
    await handle.close();
  }
}

/**
 * A full read buffer with room for more: the file grew after fstat (a description being written
 * while the server starts). It was refused as "larger than maxBytes" at any size, 4 KB too.
 * Reading one byte past the cap is what shows a file too large.
 */
function grown(buffer: Buffer, maxBytes: number): Buffer {
  if (buffer.length > maxBytes) throw tooLarge(maxBytes);
  const next = Buffer.allocUnsafe(Math.min(Math.max(buffer.length * 2, 64 * 1024), maxBytes + 1));
  buffer.copy(next);
  return next;
}

function checkRegular(st: Stats, maxBytes: number): number {
  if (!st.isFile()) throw new FileRefusedError('NOT_REGULAR', `is ${kindOf(st)}, not a regular file`);
  if (st.size > maxBytes) throw tooLarge(maxBytes, st.size);
  return st.size;
}

function tooLarge(maxBytes: number, size?: number): FileRefusedError {
  return new FileRefusedError('TOO_LARGE', `is larger than ${maxBytes} bytes${size === undefined ? '' : ` (${size})`}`);
}

/** What a file that is not a regular one is, for an error ("… is a FIFO (named pipe)"). */
export function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a Unix socket';
  return 'a special file';
}
