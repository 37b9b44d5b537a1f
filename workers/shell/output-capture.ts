import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import { reclaimMemory } from './reclaim';
import type { SourceBytes } from './reply-budget';
import { utf8PrefixBytes } from './utf8-prefix';

export interface Capture {
  /** The kept output as UTF-8 text; when the middle was not kept, head + marker + tail. */
  text(): string;
  /** Bytes of output that `text().slice(start, end)` shows (its marker counts the bytes it cut). */
  sourceBytes: SourceBytes;
  /** Whether any output was left out (past the cap, or the middle between head and tail). */
  truncated(): boolean;
  /** Bytes read from the stream in all, kept or not. */
  total(): number;
  destroy(): void;
  closed: Promise<void>;
}

/** Output dropped past the cap between two garbage collections (see reclaim.ts). */
const RECLAIM_EVERY_BYTES = 2 * 1024 * 1024;

/**
 * Reads a stream to its end, keeping at most `capBytes` of it (the output cap): its first and its
 * last `windowBytes` (each at most half the cap), the middle read and dropped, so the writer is
 * never blocked or killed for writing much, and the end of a long output, where errors are, is
 * shown. The result marks the cut in the middle with the bytes left out. Memory per stream: at
 * most 2 × the window, whatever the command writes.
 */
export function captureOutput(stream: Readable, capBytes: number, windowBytes = capBytes): Capture {
  const keep = Math.max(1, Math.min(windowBytes, Math.floor(capBytes / 2)));
  const head = new ChunkQueue();
  const tail = new ChunkQueue();
  let seen = 0;
  let droppedSinceCollect = 0;
  let collections = 0;
  stream.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    let part = chunk;
    if (head.bytes < keep) {
      const take = Math.min(part.length, keep - head.bytes);
      head.push(take === part.length ? part : part.subarray(0, take));
      part = part.subarray(take);
      if (part.length === 0) return;
    }
    tail.push(part);
    while (tail.length > 1 && tail.bytes - tail.firstBytes() >= keep) droppedSinceCollect += tail.shift();
    if (droppedSinceCollect >= RECLAIM_EVERY_BYTES) {
      droppedSinceCollect = 0;
      // Every 16th a full one: the tail's chunks alive at a minor collection move to old space,
      // where only a full one frees them once dropped (a 200 MB drain took RSS to ~100 MB on a
      // loaded machine, the minor ones alone).
      reclaimMemory(++collections % 16 === 0 ? 'major' : 'minor');
    }
  });
  const closed = new Promise<void>((resolve) => {
    stream.on('close', () => resolve());
    stream.on('error', () => resolve());
  });
  // Fixed when the chunks are taken (decode empties the queues).
  let keptBytes: number | undefined;
  const kept = () => keptBytes ?? head.bytes + Math.min(tail.bytes, keep);
  let parts: Part[] | undefined;
  const decode = (): Part[] => {
    if (parts) return parts;
    keptBytes = kept();
    const keptHead = head.bytes;
    const tailBytes = tail.bytes;
    // The parts hold all that is shown; the chunks would stay alive with this capture until the
    // reply is written (its sourceBytes counts on it): taking them empties the queues.
    const first = head.take();
    let last = tail.take();
    if (tailBytes > keep) last = last.subarray(tailBytes - keep);
    const skipped = seen - keptHead - last.length;
    // Decoded whole when nothing was cut: a character split between head and tail stays one.
    if (skipped === 0) return (parts = [textPart(Buffer.concat([first, last]))]);
    // Start the tail on a character boundary (skip UTF-8 continuation bytes).
    let start = 0;
    while (start < last.length && start < 3 && (last[start] & 0xc0) === 0x80) start++;
    const marker = `\n[… ${skipped + start} bytes cut …]\n`;
    return (parts = [textPart(first), { text: marker, bytes: (units) => (units >= marker.length ? skipped + start : 0) }, textPart(last.subarray(start))]);
  };
  return {
    // Concatenated, not joined: V8 keeps a rope of the parts instead of copying megabytes.
    text: () => decode().reduce((text, part) => text + part.text, ''),
    sourceBytes: (start, end) => bytesBefore(decode(), end) - bytesBefore(decode(), start),
    truncated: () => seen > kept(),
    total: () => seen,
    destroy: () => stream.destroy(),
    closed,
  };
}

/** Chunks below this size are copied into a shared piece instead of being kept each as an object. */
const SMALL_CHUNK_BYTES = 1024;
const PIECE_BYTES = 16 * 1024;
const EMPTY = Buffer.alloc(0);

/**
 * Output chunks in order, oldest dropped first in O(1). A command writing a byte at a time
 * (`syswrite` per character, a shell loop of `printf`) arrives as millions of 1-byte chunks: kept
 * each as a Buffer, a 1 MiB window held a million objects (190 MB of RSS for 2 MB shown), and
 * `Array#shift` on an array that large moves all of it, so 8 MB of such output held the worker's
 * event loop for 36 s. Small chunks are copied into 16 KiB pieces, and dropping moves an index.
 */
class ChunkQueue {
  #chunks: Buffer[] = [];
  #start = 0;
  #bytes = 0;
  /** The piece small chunks are copied into; when set, the last of `#chunks` is its filled part. */
  #piece: Buffer | undefined;
  #used = 0;

  /** Bytes held. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Chunks held. */
  get length(): number {
    return this.#chunks.length - this.#start;
  }

  push(chunk: Buffer): void {
    this.#bytes += chunk.length;
    if (chunk.length >= SMALL_CHUNK_BYTES) {
      this.#piece = undefined;
      this.#chunks.push(chunk);
      return;
    }
    if (!this.#piece || this.#used + chunk.length > this.#piece.length) {
      this.#piece = Buffer.allocUnsafeSlow(PIECE_BYTES);
      this.#used = 0;
      this.#chunks.push(this.#piece.subarray(0, 0));
    }
    chunk.copy(this.#piece, this.#used);
    this.#used += chunk.length;
    this.#chunks[this.#chunks.length - 1] = this.#piece.subarray(0, this.#used);
  }

  /** Bytes of the oldest chunk. */
  firstBytes(): number {
    return this.#chunks[this.#start].length;
  }

  /** Drops the oldest chunk; returns its size. */
  shift(): number {
    const size = this.#chunks[this.#start].length;
    // Let go of it now: the minor collections of the drain (reclaim.ts) free only dead chunks.
    this.#chunks[this.#start] = EMPTY;
    this.#start++;
    this.#bytes -= size;
    if (this.length === 0) this.#piece = undefined;
    // Compacted now and then: the dropped slots cost a copy of what is left, amortised O(1).
    if (this.#start >= 64 && this.#start * 2 >= this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#start);
      this.#start = 0;
    }
    return size;
  }

  /** All bytes held, as one buffer; the queue is emptied (its count of bytes stays). */
  take(): Buffer {
    const all = Buffer.concat(this.#chunks.slice(this.#start), this.#bytes);
    this.#chunks = [];
    this.#start = 0;
    this.#piece = undefined;
    return all;
  }
}

/** A piece of the captured text and how to count the output bytes of its first `units` code units. */
interface Part {
  text: string;
  bytes(units: number): number;
}

/** Text decoded from `data`; valid UTF-8 is counted from the text, anything else from `data`. */
function textPart(data: Buffer): Part {
  const text = data.toString('utf8');
  return isUtf8(data) ? utf8Part(text, data.length) : rawPart(text, data);
}

/**
 * Valid UTF-8 round-trips: the text's own bytes are the output's, and `data` can go. A function
 * of its own, because closures made in one function share its variables: made in textPart,
 * this one kept `data` (MBs of output) alive until the reply was sent.
 */
function utf8Part(text: string, size: number): Part {
  return { text, bytes: (units) => (units >= text.length ? size : Buffer.byteLength(text.slice(0, units))) };
}

function rawPart(text: string, data: Buffer): Part {
  return { text, bytes: (units) => utf8PrefixBytes(data, units) };
}

/** Output bytes shown by the first `index` code units of the parts' text; a marker counts once passed whole. */
function bytesBefore(parts: Part[], index: number): number {
  let bytes = 0;
  for (const part of parts) {
    if (index <= 0) break;
    const units = Math.min(index, part.text.length);
    bytes += units === part.text.length ? part.bytes(Infinity) : part.bytes(units);
    index -= part.text.length;
  }
  return bytes;
}
