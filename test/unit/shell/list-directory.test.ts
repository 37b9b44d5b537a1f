import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { FileToolOptions } from '../../../workers/shell/file-tools';
import { listDirectory } from '../../../workers/shell/list-directory';

/** A full garbage collection, so that what the heap holds is what is still referenced. */
function collect(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** Heap and array buffers (the names' bytes) still referenced. */
function held(): number {
  collect();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

let ws: string;
const options = (maxListEntries: number): FileToolOptions => ({ workspace: ws, confined: true, maxReadBytes: 1000, maxListEntries });

beforeEach(() => {
  ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'shell-list-')));
});
afterEach(() => rmSync(ws, { recursive: true, force: true }));

describe('listDirectory of a directory larger than its entry cap', () => {
  test('gives the first entries by name, whatever order the directory holds them in, and counts them all', async () => {
    const names = Array.from({ length: 2000 }, (_, i) => `${((i * 7919) % 2000).toString(36)}-${'é'.repeat(i % 3)}${i}`);
    for (const name of names) writeFileSync(path.join(ws, name), '');
    const listing = await listDirectory('.', options(37));
    const sorted = [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(listing.entries.map((entry) => entry.name)).toEqual(sorted.slice(0, 37));
    expect(listing).toMatchObject({ total: 2000, truncated: true });
    expect((await listDirectory('.', options(5000))).entries.map((entry) => entry.name)).toEqual(sorted);
  });

  test('holds the entries it keeps, not every name of the directory, while it reads them', async () => {
    mkdirSync(path.join(ws, 'many'));
    // 60,000 names of 200 bytes (a command makes a million in 30 s): all of them read at once
    // and sorted held ~570 bytes each, 570 MB for a million, for one call.
    for (let i = 0; i < 60_000; i++) writeFileSync(path.join(ws, 'many', String(i).padStart(200, '0')), '');
    const before = held();
    let peak = 0;
    let sampling = true;
    const sample = () => {
      peak = Math.max(peak, held() - before);
      if (sampling) setImmediate(sample);
    };
    setImmediate(sample);
    const listing = await listDirectory('many', options(100));
    sampling = false;
    expect(listing).toMatchObject({ total: 60_000, truncated: true });
    expect(listing.entries[0].name).toBe('0'.repeat(200));
    expect(peak).toBeLessThan(8 * 1024 * 1024);
    // Making 60,000 files takes ~20 s on a quiet 2-core machine and passed 60 s beside other jobs.
  }, 180_000);
});
