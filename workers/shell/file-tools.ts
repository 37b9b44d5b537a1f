import { isUtf8 } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { promises as fs, constants, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { McpvisorError } from '../../protocol/errors';
import { kindOf } from '../../protocol/regular-file';
import { checkWritable, type ProtectedPath } from './protected-paths';

export interface FileToolOptions {
  /** Real path of the workspace; relative paths resolve against it. */
  workspace: string;
  /** Sandbox mode: every path must resolve (symlinks and `..` included) inside the workspace. */
  confined: boolean;
  /** readFile refuses larger files (bytes). */
  maxReadBytes: number;
  /** listDir returns at most this many entries. */
  maxListEntries: number;
  /**
   * Confined only: real paths no tool may change at or under (the server's own code and config,
   * protected-paths.ts); reads stay allowed. Default none.
   */
  readOnly?: readonly ProtectedPath[];
}

/**
 * Resolves a user path to the one the tools act on. Relative paths resolve against the workspace.
 * Unconfined, that is all (spec 002: without sandbox mode the tools act with the user's full
 * permissions). Confined, the deepest existing ancestor is resolved with `realpath` and must be the
 * workspace or inside it, and the path itself, when it exists, too: a symlink pointing outside is
 * refused, also when it is the parent of a file about to be created; a dangling symlink is refused
 * (writing through it would create its target). With `followLast: false` the last component is
 * not resolved (deleteFile removes a link itself, which is inside).
 *
 * Raises BAD_INPUT for an empty path, BLOCKED for an escape. The path returned is checked, not
 * pinned: a sandboxed command can swap one of its directories for a symlink to anywhere (a link's
 * target is only a string) before the operation. So confined operations go through pinnedDir.
 */
export async function resolvePath(input: string, options: FileToolOptions, followLast = true): Promise<string> {
  if (typeof input !== 'string' || input.length === 0) throw new McpvisorError('BAD_INPUT', 'path must be a non-empty string');
  if (input.includes('\0')) throw new McpvisorError('BAD_INPUT', 'path must not contain NUL characters');
  // A lone surrogate has no UTF-8 form: the file system call would name `x\uFFFD` instead, which
  // may be another file (deleteFile of `a\ud800` deleted `a\uFFFD`).
  if (!(input as string & { isWellFormed(): boolean }).isWellFormed()) throw new McpvisorError('BAD_INPUT', 'path has a lone UTF-16 surrogate (half of a character), which a file name cannot carry');
  const absolute = path.resolve(options.workspace, input);
  if (!options.confined) return absolute;
  const inside = (real: string) => real === options.workspace || real.startsWith(options.workspace.endsWith(path.sep) ? options.workspace : options.workspace + path.sep);
  const refuse = (why: string) =>
    new McpvisorError('BLOCKED', `${input}: ${why}; sandbox mode confines file tools to the workspace ${options.workspace}`, { data: { path: input } });

  // The workspace itself has its parent outside: resolve it whole.
  if (absolute === options.workspace) followLast = true;
  const target = followLast ? absolute : path.dirname(absolute);
  let existing = target;
  const missing: string[] = [];
  for (;;) {
    try {
      await fs.lstat(existing);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'ENOTDIR') throw fileError(error, input);
      const parent = path.dirname(existing);
      if (parent === existing) break;
      missing.unshift(path.basename(existing));
      existing = parent;
    }
  }
  let real: string;
  try {
    real = await fs.realpath(existing);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw refuse('it goes through a dangling symlink');
    throw fileError(error, input);
  }
  const resolved = path.join(real, ...missing);
  if (!inside(real)) throw refuse(`it resolves to ${followLast ? resolved : path.join(resolved, path.basename(absolute))}, outside the workspace`);
  return followLast ? resolved : path.join(resolved, path.basename(absolute));
}

/**
 * The directory `dir` (a path resolvePath returned), opened by walking from the workspace one
 * component at a time, each opened through its parent's descriptor and never through a symlink.
 * What the caller then does through `at(handle, name)` happens in that very directory, whatever
 * a concurrent command renames or swaps meanwhile (the race resolvePath alone left open). A
 * component that became a symlink is refused (BLOCKED); with `create`, missing ones are made.
 */
export async function pinnedDir(dir: string, input: string, options: FileToolOptions, create = false): Promise<FileHandle> {
  const relative = path.relative(options.workspace, dir);
  if (relative.startsWith('..') || path.isAbsolute(relative)) throw new McpvisorError('BLOCKED', `${input}: outside the workspace ${options.workspace}`, { data: { path: input } });
  let handle = await fs.open(options.workspace, DIRECTORY).catch((error) => {
    throw fileError(error, input);
  });
  try {
    for (const name of relative === '' ? [] : relative.split(path.sep)) {
      const next = at(handle, name);
      if (create) await fs.mkdir(next).catch((error: NodeJS.ErrnoException) => (error.code === 'EEXIST' ? undefined : Promise.reject(error)));
      const child = await fs.open(next, DIRECTORY | constants.O_NOFOLLOW).catch(async (error: NodeJS.ErrnoException) => {
        // A symlink gives ENOTDIR here, as a file does: only the symlink is an escape attempt.
        const swapped = error.code === 'ELOOP' || (error.code === 'ENOTDIR' && (await fs.lstat(next).then((s) => s.isSymbolicLink(), () => false)));
        if (!swapped) throw error;
        throw new McpvisorError('BLOCKED', `${input}: a directory of the path was replaced by a symlink while the tool ran; sandbox mode confines file tools to the workspace ${options.workspace}`, { data: { path: input } });
      });
      await handle.close();
      handle = child;
    }
    return handle;
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw fileError(error, input);
  }
}

const DIRECTORY = constants.O_RDONLY | constants.O_DIRECTORY;

/** `name` inside the directory open as `dir`, as a path the kernel resolves through that descriptor. */
function at(dir: FileHandle, name: string): string {
  return `/proc/self/fd/${dir.fd}/${name}`;
}

/** Reads a text file. BAD_INPUT for a directory, a binary file (NUL bytes) or one over `maxReadBytes`. */
export async function readTextFile(input: string, options: FileToolOptions): Promise<{ path: string; content: string; sizeBytes: number; modified: string }> {
  const file = await resolvePath(input, options);
  // Non-blocking: opening a FIFO would otherwise wait for a writer, holding a thread of the pool
  // every file tool shares. Regular files read the same either way.
  const flags = constants.O_RDONLY | constants.O_NONBLOCK;
  const dir = options.confined && file !== options.workspace ? await pinnedDir(path.dirname(file), input, options) : undefined;
  const handle = await fs.open(dir ? at(dir, path.basename(file)) : file, options.confined ? flags | constants.O_NOFOLLOW : flags)
    .catch((error) => {
      throw fileError(error, input);
    })
    .finally(() => dir?.close());
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw new McpvisorError('BAD_INPUT', `${input} is a directory; use listDir`);
    // path.resolve drops the slash, so sandbox mode read `f.txt/` as f.txt (open(2) says ENOTDIR).
    if (input.endsWith('/')) throw new McpvisorError('BAD_INPUT', `${input} ends with a slash, but it names a file, not a directory`);
    if (!stat.isFile()) throw new McpvisorError('BAD_INPUT', `${input} is not a regular file`);
    if (stat.size > options.maxReadBytes) {
      throw new McpvisorError('BAD_INPUT', `${input} is ${stat.size} bytes, over the ${options.maxReadBytes}-byte limit of readFile; use exec with head, tail or grep`);
    }
    const data = await readToEnd(handle, stat.size, options.maxReadBytes);
    if (data.length > options.maxReadBytes) {
      throw new McpvisorError('BAD_INPUT', `${input} holds more than the ${options.maxReadBytes}-byte limit of readFile (it grew while being read, or its size on disk was not its content's, as in /proc); use exec with head, tail or grep`);
    }
    if (data.includes(0)) throw new McpvisorError('BAD_INPUT', `${input} looks binary (it contains NUL bytes); readFile returns text only`);
    // Decoding would turn each such byte into U+FFFD, and writing the text back would corrupt
    // the file (a Latin-1 `é` becoming EF BF BD): refused, as binary is.
    if (!isUtf8(data)) {
      throw new McpvisorError('BAD_INPUT', `${input} is not valid UTF-8 text (another encoding such as Latin-1, or binary); readFile returns UTF-8 text only: use exec, e.g. iconv -f latin1 -t utf-8 or file`);
    }
    return { path: file, content: data.toString('utf8'), sizeBytes: data.length, modified: stat.mtime.toISOString() };
  } finally {
    await handle.close();
  }
}

/** First buffer for a file whose size on disk is 0 (procfs, sysfs): most such files are smaller. */
const UNSIZED_READ_BYTES = 16 * 1024;

/**
 * Reads from the start until end of file, at most `maxBytes + 1` bytes (one more says "too big").
 * The size on disk is only the first guess: procfs and sysfs files report 0 or 4096 whatever they
 * hold, and a single read of that size returned /proc/self/status as 1 byte.
 */
async function readToEnd(handle: FileHandle, sizeOnDisk: number, maxBytes: number): Promise<Buffer> {
  const limit = maxBytes + 1;
  let buffer = Buffer.alloc(Math.min(limit, sizeOnDisk > 0 ? sizeOnDisk + 1 : UNSIZED_READ_BYTES));
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length >= limit) break;
      const larger = Buffer.alloc(Math.min(limit, buffer.length * 2));
      buffer.copy(larger, 0, 0, length);
      buffer = larger;
    }
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  return buffer.subarray(0, length);
}

/**
 * Writes a file atomically: parent directories are created, the content goes to a temporary file
 * in the same directory (fsync'd), which is then renamed over the target, so readers and crashes
 * see the old file or the new one, never half of one. An existing file keeps its mode. A file
 * with other hard links is written in place instead (`inPlace`), as a shell's `>` writes it:
 * a rename would leave its other names with the old content. BAD_INPUT when the target is a
 * directory, or no regular file (a FIFO, socket or device, which a rename would replace: as root,
 * `/dev/null` became a regular file).
 */
export async function writeTextFile(input: string, content: string, options: FileToolOptions): Promise<{ path: string; bytesWritten: number; created: boolean; inPlace?: true }> {
  // `dir/` names a directory: path.resolve would drop the slash and write a file `dir`.
  if (/[/\\]$/.test(input)) throw new McpvisorError('BAD_INPUT', `${input} ends with a slash, so it names a directory; writeFile needs a file name`);
  // A lone surrogate has no UTF-8 form: Buffer.from would write U+FFFD in its place, silently.
  if (!(content as string & { isWellFormed(): boolean }).isWellFormed()) throw new McpvisorError('BAD_INPUT', 'content has a lone UTF-16 surrogate (half of a character), which UTF-8 cannot carry');
  // Unconfined, a symlink is written through, as the sandbox's checked path and a shell's `>` do:
  // renaming over the link would replace it and leave its target stale.
  const file = options.confined ? await resolvePath(input, options) : await linkTarget(await resolvePath(input, options));
  if (file === options.workspace) throw new McpvisorError('BAD_INPUT', `${input} is a directory`);
  // Before any parent directory is made. The path is real and then pinned, so it is the one written.
  if (options.confined) checkWritable(file, input, options.readOnly);
  const name = path.basename(file);
  let dir: FileHandle | undefined;
  if (options.confined) dir = await pinnedDir(path.dirname(file), input, options, true);
  else {
    await fs.mkdir(path.dirname(file), { recursive: true }).catch((error: NodeJS.ErrnoException) => {
      // EEXIST: a component is a file (`a.txt/sub.txt`).
      throw fileError(error.code === 'EEXIST' ? Object.assign(error, { code: 'ENOTDIR' }) : error, input);
    });
  }
  const inDir = (leaf: string) => (dir ? at(dir, leaf) : path.join(path.dirname(file), leaf));
  const temp = inDir(`.${name}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const data = Buffer.from(content, 'utf8');
  let mode: number | undefined;
  let linked: Stats | undefined;
  try {
    try {
      const stat = await (dir ? fs.lstat(inDir(name)) : fs.stat(file));
      if (stat.isDirectory()) throw new McpvisorError('BAD_INPUT', `${input} is a directory`);
      if (stat.isSymbolicLink()) throw new McpvisorError('BLOCKED', `${input}: became a symlink while the tool ran; sandbox mode confines file tools to the workspace ${options.workspace}`, { data: { path: input } });
      if (!stat.isFile()) throw new McpvisorError('BAD_INPUT', `${input} is ${kindOf(stat)}, not a regular file; writeFile writes regular files (use exec to write to it)`, { data: { path: input } });
      // Kept, except set-user-ID and set-group-ID: the file is written by the server's user.
      mode = stat.mode & 0o1777;
      if (stat.nlink > 1) linked = stat;
    } catch (error) {
      if (error instanceof McpvisorError) throw error;
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw fileError(error, input);
    }
    if (linked) {
      await writeInPlace(inDir(name), linked, data, input);
      return { path: file, bytesWritten: data.length, created: false, inPlace: true };
    }
    try {
      const handle = await fs.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode ?? 0o666);
      try {
        await handle.writeFile(data);
        if (mode !== undefined) await handle.chmod(mode);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fs.rename(temp, inDir(name));
    } catch (error) {
      await fs.rm(temp, { force: true }).catch(() => undefined);
      throw fileError(error, input);
    }
  } finally {
    await dir?.close();
  }
  return { path: file, bytesWritten: data.length, created: mode === undefined };
}

/**
 * Overwrites the file `stat` describes, in place: opened without following a symlink or waiting on
 * a FIFO, and written only if it is still that file (a command may swap names meanwhile).
 */
async function writeInPlace(target: string, stat: Stats, data: Buffer, input: string): Promise<void> {
  const handle = await fs.open(target, constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((error) => {
    throw fileError(error, input);
  });
  try {
    const now = await handle.stat();
    if (now.ino !== stat.ino || now.dev !== stat.dev) throw new McpvisorError('BAD_INPUT', `${input} was replaced by another file while writeFile ran; nothing was written, try again`, { data: { path: input } });
    // As a rename would: never set-user-ID or set-group-ID on new content (a write as root keeps them).
    if (now.mode & 0o6000) await handle.chmod(now.mode & 0o1777);
    await handle.truncate(0);
    // From the start (nothing read or written on this handle yet), looping over short writes.
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    throw fileError(error, input);
  } finally {
    await handle.close();
  }
}

/** The file a path names through its symlinks (the last one dangling: the file it would create); the path itself otherwise. */
async function linkTarget(file: string): Promise<string> {
  let current = file;
  for (let hops = 0; hops < 40; hops++) {
    let link: string;
    try {
      link = await fs.readlink(current);
    } catch {
      break; // not a symlink, or missing: written as it is
    }
    current = path.resolve(path.dirname(current), link);
  }
  return current;
}

/** Deletes a file (a symlink is removed itself). BAD_INPUT for a directory; NOT_FOUND when missing. */
export async function deleteFile(input: string, options: FileToolOptions): Promise<{ path: string; deleted: true }> {
  // `f.txt/` names a directory; path.resolve would drop the slash, and sandbox mode deleted f.txt.
  if (input.endsWith('/')) throw new McpvisorError('BAD_INPUT', `${input} ends with a slash, so it names a directory; deleteFile removes files only`);
  const file = await resolvePath(input, options, false);
  if (file === options.workspace) throw new McpvisorError('BAD_INPUT', `${input} is a directory; deleteFile removes files only`);
  // A symlink named last is removed itself, not its target: only the link's own path counts.
  if (options.confined) checkWritable(file, input, options.readOnly);
  const dir = options.confined ? await pinnedDir(path.dirname(file), input, options) : undefined;
  const target = dir ? at(dir, path.basename(file)) : file;
  try {
    const stat = await fs.lstat(target).catch((error) => {
      throw fileError(error, input);
    });
    if (stat.isDirectory()) throw new McpvisorError('BAD_INPUT', `${input} is a directory; deleteFile removes files only`);
    await fs.unlink(target).catch((error) => {
      throw fileError(error, input);
    });
  } finally {
    await dir?.close();
  }
  return { path: file, deleted: true };
}

/** A file-system error as a result a person understands, naming the path (cut past 160 characters). */
export function fileError(error: unknown, given: string): McpvisorError {
  if (error instanceof McpvisorError) return error;
  // Echoing kilobytes of path helps no one: a name too long is shown cut.
  const input = shortPath(given);
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return new McpvisorError('NOT_FOUND', `${input}: no such file or directory${input.includes('\uFFFD') ? ' (listDir shows a name that is not UTF-8 with U+FFFD, and no file tool can name it: use exec)' : ''}`, { data: { path: input } });
    case 'EACCES':
    case 'EPERM':
      return new McpvisorError('BAD_INPUT', `${input}: permission denied`, { data: { path: input, errno: code } });
    case 'EAGAIN':
      // open(2) with O_NONBLOCK of a file under another process's lease (F_SETLEASE); blocking, it waited up to lease-break-time (45 s).
      return new McpvisorError('BAD_INPUT', `${input} is busy: another process holds a lease on it (fcntl F_SETLEASE), which the kernel has asked it to give up; try again in a moment, or read it with exec`, { data: { path: input } });
    case 'ENXIO':
      // open(2) of a Unix socket (or of a device with nothing behind it): readFile's stat never comes.
      return new McpvisorError('BAD_INPUT', `${input}: no such device or address (a Unix socket, or a device with nothing behind it); readFile reads regular files`, { data: { path: input } });
    case 'ENOTDIR':
      return new McpvisorError('BAD_INPUT', `${input}: a component of the path is not a directory`, { data: { path: input } });
    case 'EISDIR':
      return new McpvisorError('BAD_INPUT', `${input} is a directory`, { data: { path: input } });
    case 'ELOOP':
      return new McpvisorError('BAD_INPUT', `${input}: too many levels of symlinks (or a symlink where none is allowed)`, { data: { path: input } });
    case 'ENOSPC':
    case 'EDQUOT':
      return new McpvisorError('BAD_INPUT', `${input}: no space left on the device`, { data: { path: input } });
    case 'ENAMETOOLONG':
      return new McpvisorError('BAD_INPUT', `${input}: file name or path too long (at most 255 bytes a name, 4096 a path on Linux)`, { data: { path: input } });
    case 'EROFS':
      return new McpvisorError('BAD_INPUT', `${input}: read-only file system`, { data: { path: input } });
    default:
      return new McpvisorError('INTERNAL', `${input}: ${(error as Error)?.message ?? String(error)}`, { data: { path: input, errno: code } });
  }
}

/** Paths up to this many characters are shown whole in errors; longer ones are cut in the middle. */
const SHOWN_PATH_CHARS = 160;

/** `path` itself, or its head and tail around a note of its length. */
function shortPath(given: string): string {
  if (given.length <= SHOWN_PATH_CHARS) return given;
  return `${given.slice(0, 100)}…[${given.length} characters]…${given.slice(-40)}`;
}
