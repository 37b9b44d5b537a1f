import type { Readable } from 'node:stream';
import { reclaimMemory } from './reclaim';

export interface Capture {
  /** The kept output as UTF-8 text; when the middle was not kept, head + marker + tail. */
  text(): string;
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
  const head: Buffer[] = [];
  let headBytes = 0;
  const tail: Buffer[] = [];
  let tailBytes = 0;
  let seen = 0;
  let droppedSinceCollect = 0;
  stream.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    let part = chunk;
    if (headBytes < keep) {
      const take = Math.min(part.length, keep - headBytes);
      head.push(take === part.length ? part : part.subarray(0, take));
      headBytes += take;
      part = part.subarray(take);
      if (part.length === 0) return;
    }
    tail.push(part);
    tailBytes += part.length;
    while (tail.length > 1 && tailBytes - tail[0].length >= keep) {
      const dropped = tail.shift()!;
      tailBytes -= dropped.length;
      droppedSinceCollect += dropped.length;
    }
    if (droppedSinceCollect >= RECLAIM_EVERY_BYTES) {
      droppedSinceCollect = 0;
      reclaimMemory();
    }
  });
  const closed = new Promise<void>((resolve) => {
    stream.on('close', () => resolve());
    stream.on('error', () => resolve());
  });
  const kept = () => headBytes + Math.min(tailBytes, keep);
  return {
    text: () => {
      const first = Buffer.concat(head, headBytes).toString('utf8');
      if (tail.length === 0) return first;
      let last = Buffer.concat(tail, tailBytes);
      if (tailBytes > keep) last = last.subarray(tailBytes - keep);
      const skipped = seen - headBytes - last.length;
      if (skipped === 0) return first + last.toString('utf8');
      // Start the tail on a character boundary (skip UTF-8 continuation bytes).
      let start = 0;
      while (start < last.length && start < 3 && (last[start] & 0xc0) === 0x80) start++;
      return `${first}\n[… ${skipped + start} bytes cut …]\n${last.subarray(start).toString('utf8')}`;
    },
    truncated: () => seen > kept(),
    total: () => seen,
    destroy: () => stream.destroy(),
    closed,
  };
}
