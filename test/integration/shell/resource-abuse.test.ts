import { readdirSync } from 'node:fs';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { tempDir } from '../../helpers/temp';
import { call } from './helpers';

/**
 * What a command can make that the server's own tools must still answer for, through the real
 * shell-mcp-server and SDK client: huge directories, names the JSON grows six-fold.
 */
describe('the shell toolset against what a command leaves behind', () => {
  let server: StdioConnection;

  beforeAll(async () => {
    server = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE: 'false', SHELL_WORKSPACE: tempDir('shell-abuse-') });
  });
  afterAll(async () => {
    await server?.close();
  });

  test('listDir of 5,000 names of control characters answers within the reply budget, and the session lives on', async () => {
    // Each name is 250 bytes of \x01 (6 bytes each in JSON, 7 in the text's quoted row), 5,000 of
    // them: a 16 MiB reply, which the SDK's stdio client dropped with the whole connection.
    const made = await call(server, 'exec', { command: `mkdir ctl && cd ctl && perl -e 'for $i (1..5000) { open F, ">", sprintf("%05d", $i) . ("\\x01" x 250) or die "$!"; close F } print "made\\n"'` });
    expect(made.structuredContent!.stdout).toBe('made\n');
    const listing = await call(server, 'listDir', { path: 'ctl' });
    expect(listing.isError).toBeFalsy();
    const { entries, total, truncated } = listing.structuredContent as { entries: Array<{ name: string }>; total: number; truncated: boolean };
    expect({ total, truncated }).toEqual({ total: 5000, truncated: true });
    expect(entries.length).toBeGreaterThan(100);
    expect(entries.map((entry) => entry.name)).toEqual(entries.map((_, i) => `${String(i + 1).padStart(5, '0')}${'\x01'.repeat(250)}`));
    expect(Buffer.byteLength(JSON.stringify(listing))).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(textOf(listing)).toMatch(new RegExp(`\\n\\[first ${entries.length} of 5000 shown: more would not fit in one reply \\(shell.maxResultBytes\\); list a subdirectory, or use exec \\(ls, find\\)\\]$`));
    expect((await call(server, 'exec', { command: 'echo alive' })).structuredContent!.stdout).toBe('alive\n');
  });
});

describe('unconfined commands that clean the temporary directory', () => {
  let server: StdioConnection;
  let tmp: string;

  beforeAll(async () => {
    tmp = tempDir('shell-abuse-tmp-');
    server = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE: 'false', SHELL_WORKSPACE: tempDir('shell-abuse-'), TMPDIR: tmp });
  });
  afterAll(async () => {
    await server?.close();
  });

  test('take the output FIFOs waiting there with them, and the workers make new ones: /dev/stderr works again', async () => {
    expect(readdirSync(tmp).filter((name) => name.startsWith('mcpvisor-pipes-')).length).toBeGreaterThan(0);
    await call(server, 'exec', { command: 'rm -rf "$TMPDIR"/mcpvisor-pipes-*' });
    // A command or two per worker may get socket pairs (no /dev/stderr) while a new batch is made;
    // one failed batch had left every later command of the worker without them.
    const stderr: string[] = [];
    for (let i = 0; i < 10; i++) stderr.push((await call(server, 'exec', { command: `echo ${i} >/dev/stderr` })).structuredContent!.stderr);
    expect(stderr.slice(-4)).toEqual(['6\n', '7\n', '8\n', '9\n']);
  });
});
