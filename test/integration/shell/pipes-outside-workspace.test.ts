import { mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { connectStdio, type StdioConnection } from '../../helpers/mcp';
import { tempDir } from '../../helpers/temp';
import { call } from './helpers';

/**
 * The output FIFOs wait by name in a directory until a command takes them. A workspace that holds
 * the temporary directory (`/tmp` itself, or `TMPDIR` inside it) showed them to sandboxed
 * commands, which opened those of later commands (any session's) and wrote into their results.
 */
describe('sandbox mode with the temporary directory inside the workspace', () => {
  let ws: string;
  let tmp: string;
  let server: StdioConnection;

  beforeAll(async () => {
    ws = path.join(tempDir('shell-pipes-'), 'ws');
    tmp = path.join(ws, 'tmp');
    mkdirSync(tmp, { recursive: true });
    server = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE: 'true', SHELL_WORKSPACE: ws, TMPDIR: tmp });
  });
  afterAll(async () => {
    await server?.close();
  });

  test('keeps the output FIFOs out of it, and commands still get real pipes', async () => {
    const result = (await call(server, 'exec', { command: `ls -A ${tmp}; echo to-stderr > /dev/stderr` })).structuredContent as { stdout: string; stderr: string };
    expect(result.stdout.split('\n').filter((name) => name.startsWith('mcpvisor-pipes-'))).toEqual([]);
    expect(result.stderr).toBe('to-stderr\n');
    expect(readdirSync(tmp).filter((name) => name.startsWith('mcpvisor-pipes-'))).toEqual([]);
  });
});
