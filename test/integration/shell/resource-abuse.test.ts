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
