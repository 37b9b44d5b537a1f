import { isUtf8 } from 'node:buffer';
import { promises as fs } from 'node:fs';
import { McpvisorError } from '../../protocol/errors';
import { fileError, pinnedDir, resolvePath, type FileToolOptions } from './file-tools';

export interface DirEntry {
  name: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  sizeBytes: number;
  /** ISO 8601 modification time (of the entry itself; a symlink is not followed). */
  modified: string;
  /**
   * Set when the name's bytes are not UTF-8 (Linux allows any but `/` and NUL): `name` shows
   * them as U+FFFD, so no file tool can name this entry; exec can.
   */
  nameNotUtf8?: true;
}

/** A type, not an interface: it is a tool's structuredContent (an index signature). */
export type Listing = {
  path: string;
  entries: DirEntry[];
  total: number;
  truncated: boolean;
};

/**
 * Lists a directory, sorted by name (code-unit order), at most `maxListEntries` entries; `total`
 * counts them all. Raises BAD_INPUT for a file, NOT_FOUND, and CANCELLED when `signal` aborts
 * while the names are read.
 */
export async function listDirectory(input: string, options: FileToolOptions, signal?: AbortSignal): Promise<Listing> {
  const dir = await resolvePath(input, options);
  const stat = await fs.stat(dir).catch((error) => {
    throw fileError(error, input);
  });
  if (!stat.isDirectory()) throw new McpvisorError('BAD_INPUT', `${input} is not a directory`);
  const pinned = options.confined ? await pinnedDir(dir, input, options) : undefined;
  const where = pinned ? `/proc/self/fd/${pinned.fd}` : dir;
  try {
    return await listPinned(where, dir, input, options.maxListEntries, signal);
  } finally {
    await pinned?.close();
  }
}

interface Name {
  bytes: Buffer;
  name: string;
}

/** Names read per system call: fewer calls than the default 32, still a small buffer. */
const DIR_BUFFER_ENTRIES = 256;

async function listPinned(where: string, dir: string, input: string, max: number, signal: AbortSignal | undefined): Promise<Listing> {
  // Streamed, keeping only the `max` first names: reading all of a directory of a million
  // files (one command makes them in 30 s) held ~570 MB in the worker for one call.
  // As bytes: a name that is not UTF-8, read as a string, was stat'ed by its U+FFFD form, which
  // is no file, and listed as `other`, 0 bytes, 1970.
  const handle = await fs.opendir(where, { encoding: 'buffer' as BufferEncoding, bufferSize: DIR_BUFFER_ENTRIES }).catch((error) => {
    throw fileError(error, input);
  });
  const first = new FirstNames(max);
  let total = 0;
  try {
    for await (const entry of handle) {
      if (signal?.aborted) throw new McpvisorError('CANCELLED', `listDir ${input} was cancelled after ${total} entries`);
      total++;
      const bytes = entry.name as unknown as Buffer;
      first.offer({ bytes, name: bytes.toString('utf8') });
    }
  } catch (error) {
    throw fileError(error, input);
  }
  const kept = first.sorted();
  const prefix = Buffer.from(where.endsWith('/') ? where : `${where}/`);
  const entries = await Promise.all(
    kept.map(async ({ bytes, name }): Promise<DirEntry> => {
      const odd: { nameNotUtf8?: true } = isUtf8(bytes) ? {} : { nameNotUtf8: true };
      try {
        const entry = await fs.lstat(Buffer.concat([prefix, bytes]));
        const type = entry.isFile() ? 'file' : entry.isDirectory() ? 'directory' : entry.isSymbolicLink() ? 'symlink' : 'other';
        return { name, type, sizeBytes: entry.size, modified: entry.mtime.toISOString(), ...odd };
      } catch {
        // Removed while we looked.
        return { name, type: 'other', sizeBytes: 0, modified: new Date(0).toISOString(), ...odd };
      }
    }),
  );
  return { path: dir, entries, total, truncated: total > kept.length };
}

/** The `max` smallest names offered (code-unit order), in a max-heap: O(n log max) time, O(max) memory. */
class FirstNames {
  readonly #max: number;
  readonly #heap: Name[] = [];

  constructor(max: number) {
    this.#max = max;
  }

  offer(name: Name): void {
    const heap = this.#heap;
    if (heap.length < this.#max) {
      heap.push(name);
      this.#up(heap.length - 1);
    } else if (heap.length > 0 && name.name < heap[0].name) {
      heap[0] = name;
      this.#down(0);
    }
  }

  sorted(): Name[] {
    return [...this.#heap].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  #up(index: number): void {
    const heap = this.#heap;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (heap[parent].name >= heap[index].name) return;
      [heap[parent], heap[index]] = [heap[index], heap[parent]];
      index = parent;
    }
  }

  #down(index: number): void {
    const heap = this.#heap;
    for (;;) {
      const left = 2 * index + 1;
      let largest = index;
      if (left < heap.length && heap[left].name > heap[largest].name) largest = left;
      if (left + 1 < heap.length && heap[left + 1].name > heap[largest].name) largest = left + 1;
      if (largest === index) return;
      [heap[largest], heap[index]] = [heap[index], heap[largest]];
      index = largest;
    }
  }
}
