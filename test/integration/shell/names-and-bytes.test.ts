import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { errorCodeOf } from '../../../protocol/results';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { call } from './helpers';

/** `ws/<name>` as bytes: a file name need not be UTF-8 on Linux. */
const bytePath = (ws: string, name: Buffer) => Buffer.concat([Buffer.from(`${ws}/`), name]);

describe.each([
  ['off', 'false'],
  ['on', 'true'],
])('file names and text that UTF-8 cannot carry, sandbox mode %s', (_mode, SANDBOX_MODE) => {
  let ws: string;
  let server: StdioConnection;

  beforeAll(async () => {
    ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'shell-bytes-')));
    server = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE, SHELL_WORKSPACE: ws, COMMAND_TIMEOUT: '10000' });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(ws, { recursive: true, force: true });
  });

  test('listDir gives a name that is not UTF-8 its real type and size and says no file tool can name it; the U+FFFD name beside it is another file', async () => {
    writeFileSync(bytePath(ws, Buffer.from('latin\xe9.txt', 'latin1')), 'twelve bytes');
    writeFileSync(path.join(ws, 'latin\uFFFD.txt'), 'real');
    const listing = await call(server, 'listDir', { path: '.' });
    // Before: lstat of the U+FFFD form found the other file, or nothing (`other`, 0 bytes, 1970).
    const entries = listing.structuredContent!.entries as unknown[];
    expect(entries).toHaveLength(2);
    expect(entries).toEqual(
      expect.arrayContaining([
        { name: 'latin\uFFFD.txt', type: 'file', sizeBytes: 12, modified: expect.any(String), nameNotUtf8: true },
        { name: 'latin\uFFFD.txt', type: 'file', sizeBytes: 4, modified: expect.any(String) },
      ]),
    );
    const rows = textOf(listing).split('\n');
    expect(rows.filter((row) => row.includes('[name not UTF-8, shown with U+FFFD: file tools cannot reach it; exec can, e.g. ls -b]'))).toHaveLength(1);
    expect(rows.find((row) => row.includes('not UTF-8'))).toMatch(/^file +12 /);
  });

  test('readFile of a name shown with U+FFFD that no file has says why', async () => {
    writeFileSync(bytePath(ws, Buffer.from('only\xff.txt', 'latin1')), 'x');
    const read = await call(server, 'readFile', { path: 'only\uFFFD.txt' });
    expect([errorCodeOf(read), textOf(read)]).toEqual(['NOT_FOUND', expect.stringContaining('not UTF-8 with U+FFFD, and no file tool can name it: use exec')]);
  });

  test('a path with a lone surrogate is refused by every file tool; the file with U+FFFD in its name is not touched', async () => {
    writeFileSync(path.join(ws, 'keep\uFFFD'), 'precious');
    for (const [tool, args] of [
      ['deleteFile', { path: 'keep\ud800' }],
      ['writeFile', { path: 'keep\udfff', content: 'overwritten' }],
      ['readFile', { path: 'keep\ud800' }],
      ['listDir', { path: '\ud800' }],
    ] as const) {
      const result = await call(server, tool, args);
      expect([tool, errorCodeOf(result), textOf(result)]).toEqual([tool, 'BAD_INPUT', expect.stringContaining('path has a lone UTF-16 surrogate')]);
    }
    expect(readdirSync(ws)).toContain('keep\uFFFD');
    expect(existsSync(path.join(ws, 'keep\uFFFD'))).toBe(true);
  });

  test('exec refuses a command with a lone surrogate and runs nothing, instead of running it with U+FFFD', async () => {
    const result = await call(server, 'exec', { command: 'touch made-\ud800' });
    expect([errorCodeOf(result), textOf(result)]).toEqual(['BAD_INPUT', expect.stringContaining('command has a lone UTF-16 surrogate')]);
    expect(existsSync(path.join(ws, 'made-\uFFFD'))).toBe(false);
    const fine = await call(server, 'exec', { command: 'printf "%s" "\ud83d\ude00"' });
    expect(fine.structuredContent!.stdout).toBe('\ud83d\ude00');
  });
});
