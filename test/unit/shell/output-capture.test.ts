import { PassThrough } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { captureOutput } from '../../../workers/shell/output-capture';

/** A full garbage collection, so that what the heap holds is what is still referenced. */
function collect(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** Writes `sizes` as chunks of a known byte sequence, each in a buffer of its own (as a pipe's reads are). */
async function feed(sizes: number[], cap: number, window: number) {
  const stream = new PassThrough();
  const capture = captureOutput(stream, cap, window);
  const written: Buffer[] = [];
  let at = 0;
  for (const size of sizes) {
    const chunk = Buffer.allocUnsafeSlow(size);
    for (let i = 0; i < size; i++) chunk[i] = 0x61 + ((at + i) % 26);
    at += size;
    written.push(chunk);
    stream.write(chunk);
  }
  stream.end();
  await capture.closed;
  return { capture, all: Buffer.concat(written).toString('latin1') };
}

describe('captureOutput with many small writes', () => {
  test('keeps the exact head and tail of output written in chunks of every size', async () => {
    const sizes = Array.from({ length: 3000 }, (_, i) => [1, 3, 1023, 1024, 1, 5000, 17, 16 * 1024, 2][i % 9]);
    const { capture, all } = await feed(sizes, 1 << 20, 100_000);
    const cut = all.length - 200_000;
    expect(capture.text()).toBe(`${all.slice(0, 100_000)}\n[… ${cut} bytes cut …]\n${all.slice(-100_000)}`);
    expect(capture.truncated()).toBe(true);
    expect(capture.total()).toBe(all.length);
  });

  test('keeps output of one-byte writes whole while it fits', async () => {
    const { capture, all } = await feed(Array(50_000).fill(1), 1 << 20, 1 << 19);
    expect(capture.text()).toBe(all);
    expect(capture.truncated()).toBe(false);
  });

  test('holds a window of one-byte writes in a few buffers, not an object for each write', async () => {
    collect();
    const before = process.memoryUsage().heapUsed;
    // 200,000 one-byte writes, all of them kept (a 128 KiB head and 72 KiB of tail): as one
    // Buffer each they held ~30 MB of heap for 200 KB of output.
    const { capture } = await feed(Array(200_000).fill(1), 1 << 20, 128 * 1024);
    collect();
    const held = process.memoryUsage().heapUsed - before;
    expect(capture.total()).toBe(200_000);
    expect(held).toBeLessThan(8 * 1024 * 1024);
  });
});
