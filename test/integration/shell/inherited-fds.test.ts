import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bin } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

/**
 * A launcher that leaves descriptors open (a wrapper script's `exec 40<dir`): bash opens a host
 * directory as fd 40 and a host file for writing as fd 41, then execs the server. Node marks low
 * inherited descriptors close-on-exec at its start, but not these.
 */
async function startWithLeakedFds(sandbox: boolean, ws: string, hostDir: string) {
  const transport = new StdioClientTransport({
    command: '/bin/bash',
    args: ['-c', 'exec 40<"$1" 41>>"$1/log.txt"; shift; exec "$@"', 'launcher', hostDir, process.execPath, bin('shell-mcp-server')],
    env: { ...(process.env as Record<string, string>), SANDBOX_MODE: String(sandbox), SHELL_WORKSPACE: ws },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'mcpvisor-test', version: '1.0.0' });
  await client.connect(transport);
  const exec = async (command: string) =>
    ((await client.callTool({ name: 'exec', arguments: { command } })) as unknown as { structuredContent: { stdout: string; stderr: string; exitCode: number | null } }).structuredContent;
  return { client, exec, stderr: () => stderr };
}

describe.each([
  ['sandbox', true],
  ['unconfined', false],
])('in %s mode, descriptors the server inherited from its launcher', (_mode, sandbox) => {
  let root: string;
  let hostDir: string;
  let server: Awaited<ReturnType<typeof startWithLeakedFds>>;

  beforeAll(async () => {
    root = tempDir('shell-fds-');
    hostDir = path.join(root, 'host');
    const ws = path.join(root, 'ws');
    mkdirSync(hostDir);
    mkdirSync(ws);
    writeFileSync(path.join(hostDir, 'secret.txt'), 'host secret');
    server = await startWithLeakedFds(sandbox, ws, hostDir);
  });
  afterAll(async () => {
    await server?.client.close();
  });

  test('reach no command: it sees its stdin, stdout and stderr only, and cannot use them to reach the host', async () => {
    // `ls` lists its own descriptor of the directory too: the one above 2 it opened.
    const listed = await server.exec('ls /proc/self/fd');
    const fds = listed.stdout.trim().split('\n').map(Number).sort((a, b) => a - b);
    expect(fds.filter((fd) => fd > 3)).toEqual([]);
    const through = await server.exec('cat /proc/self/fd/40/secret.txt; echo written >&41; echo x > /proc/self/fd/40/planted.txt');
    expect(through.stdout).toBe('');
    expect(through.exitCode).not.toBe(0);
    expect(readdirSync(hostDir).sort()).toEqual(['log.txt', 'secret.txt']);
    expect(readFileSync(path.join(hostDir, 'log.txt'), 'utf8')).toBe('');
  });

  test('are closed by each worker at its start, which says so in the log', () => {
    expect(server.stderr()).toContain('closed file descriptors the server inherited');
    expect(server.stderr()).toContain(hostDir);
  });
});
