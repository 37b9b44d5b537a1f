import { readFileSync } from 'node:fs';
import { FileRefusedError, readRegularFile, readRegularFileSync } from '../../../protocol/regular-file';

// /proc/self/status is a regular file whose size says 0 while it holds ~1.5 KB: it stands in,
// deterministically, for a file that grew between the fstat and the read (a description being
// written while the server starts).
const GROWN = '/proc/self/status';

describe('readRegularFile and readRegularFileSync', () => {
  it.each([
    ['readRegularFile', (file: string, maxBytes: number) => readRegularFile(file, maxBytes)],
    ['readRegularFileSync', async (file: string, maxBytes: number) => readRegularFileSync(file, maxBytes)],
  ])('%s reads a file that is longer than fstat said whole, and refuses it past the cap', async (_name, read) => {
    const text = await read(GROWN, 1024 * 1024);
    expect(text.length).toBeGreaterThan(200);
    expect(text).toMatch(/^Name:\t/);
    expect(text).toContain('\nPid:\t');
    expect(readFileSync(GROWN, 'utf8').split('\n')[0]).toBe(text.split('\n')[0]);
    const refused = await read(GROWN, 100).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(FileRefusedError);
    expect(refused).toMatchObject({ code: 'TOO_LARGE', message: 'is larger than 100 bytes' });
  });
});
