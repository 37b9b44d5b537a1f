import { spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connectStdio } from '../../helpers/mcp';
import { bin, spawnBin } from '../../helpers/processes';
import { call } from './helpers';

let dir: string;
beforeAll(() => {
  dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'shell-start-')));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('shell-mcp-server start-up', () => {
  test.each([
    [{ SANDBOX_MODE: 'maybe' }, "SANDBOX_MODE: expected true or false, got 'maybe'"],
    [{ COMMAND_TIMEOUT: 'soon' }, "COMMAND_TIMEOUT: expected an integer, got 'soon'"],
    [{ COMMAND_TIMEOUT: '0' }, 'COMMAND_TIMEOUT: expected milliseconds between 1 and 86400000, got 0'],
    [{ COMMAND_TIMEOUT: '-5' }, 'COMMAND_TIMEOUT: expected milliseconds between 1 and 86400000, got -5'],
    [{ COMMAND_TIMEOUT: '86400001' }, 'COMMAND_TIMEOUT: expected milliseconds between 1 and 86400000, got 86400001'],
    [{ COMMAND_TIMEOUT: '1.5' }, "COMMAND_TIMEOUT: expected an integer, got '1.5'"],
    [{ DEBUG: 'verbose' }, "DEBUG: expected true or false, got 'verbose'"],
    [{ SHELL_WORKSPACE: '/nonexistent/workspace' }, 'SHELL_WORKSPACE (shell.workspace): /nonexistent/workspace does not exist'],
  ])('refuses %j with an error that names the variable', async (env, message) => {
    const server = spawnBin('shell-mcp-server', [], env);
    expect(await server.exited).toBe(2);
    expect(server.stderr()).toContain(message);
  });

  test('--help lists the variables of spec 002', async () => {
    const server = spawnBin('shell-mcp-server', ['--help'], {});
    let stdout = '';
    server.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    expect(await server.exited).toBe(0);
    for (const name of ['SANDBOX_MODE', 'COMMAND_TIMEOUT', 'DEBUG', 'SHELL_WORKSPACE', 'bubblewrap']) expect(stdout).toContain(name);
    // Each once: described in the footer, not also listed bare above it.
    for (const name of ['SANDBOX_MODE', 'COMMAND_TIMEOUT', 'SHELL_WORKSPACE']) expect([name, stdout.split(name).length - 1]).toEqual([name, 1]);
    expect(stdout.match(/^ {2}DEBUG\b/gm)).toHaveLength(1);
  });

  test('keeps the supervisor\'s secrets out of a command\'s environment', async () => {
    const server = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE: 'false', SHELL_WORKSPACE: dir, MCPVISOR_AUTH_TOKEN: 'sekrit-token-0123456789abcdef' });
    try {
      const result = await call(server, 'exec', { command: 'env' });
      expect(result.structuredContent!.exitCode).toBe(0);
      expect(result.structuredContent!.stdout).toContain('PATH=');
      expect(result.structuredContent!.stdout).not.toContain('sekrit-token');
    } finally {
      await server.close();
    }
  });

  test('takes a DEBUG meant for the debug package (express:*) as unset: it starts and logs no command', async () => {
    const server = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE: 'false', SHELL_WORKSPACE: dir, DEBUG: 'express:*,-express:router' });
    try {
      expect((await call(server, 'exec', { command: 'echo debug-namespace-marker' })).structuredContent!.stdout).toBe('debug-namespace-marker\n');
      // A second call through the same worker: its log of the first, had there been one, came before.
      await call(server, 'exec', { command: 'true' });
      expect(server.stderr()).not.toContain('debug-namespace-marker');
    } finally {
      await server.close();
    }
  });

  test('a malformed command is an ordinary failed command, and the server keeps serving', async () => {
    const server = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE: 'false', SHELL_WORKSPACE: dir });
    try {
      const broken = await call(server, 'exec', { command: 'echo "unterminated; if then fi (' });
      expect(broken.isError).toBeFalsy();
      expect(broken.structuredContent).toMatchObject({ exitCode: 2, timedOut: false });
      expect(broken.structuredContent!.stderr).toMatch(/Syntax error|unterminated/i);
      expect((await call(server, 'exec', { command: 'echo fine' })).structuredContent!.stdout).toBe('fine\n');
    } finally {
      await server.close();
    }
  });
});

describe('mcpvisor with the shell toolset', () => {
  test('serves the seven tools and runs commands sandboxed by default', async () => {
    const config = path.join(dir, 'mcpvisor.json');
    writeFileSync(config, JSON.stringify({ web: { enabled: false }, shell: { workspace: dir } }));
    const server = await connectStdio('mcpvisor', ['--config', config]);
    try {
      const { tools } = await server.client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['exec', 'readFile', 'writeFile', 'deleteFile', 'listDir', 'getSystemInfo', 'listProcesses']));
      const result = await call(server, 'exec', { command: 'ls /proc | grep -c "^[0-9]"' });
      expect(result.structuredContent).toMatchObject({ exitCode: 0, sandboxed: true });
      expect(Number(result.structuredContent!.stdout)).toBeLessThan(6);
    } finally {
      await server.close();
    }
  });

  test('started in / (where MCP clients start stdio servers) with no workspace set, stops at once and names the setting (it started every pool, then exited 1)', async () => {
    const config = path.join(dir, 'root-workspace.json');
    writeFileSync(config, JSON.stringify({ web: { enabled: false } }));
    const child = spawn(process.execPath, [bin('mcpvisor'), '--config', config], { cwd: '/', stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise((resolve) => child.on('exit', (exitCode, signal) => resolve(signal ?? exitCode)));
    expect(code).toBe(2);
    expect(stderr).toBe(
      'mcpvisor: shell.workspace (unset: the current directory): the workspace is the current directory, /, as MCP clients such as Claude Desktop start servers there; sandbox mode confines commands to a directory below the root: point shell.workspace at another directory in a --config file (or set shell.enabled: false)\n',
    );
  });

  test('started in its own checkout, warns that the workspace is read-only and names the setting mcpvisor reads', async () => {
    // No shell.workspace: the workspace is the current directory, this repository (jest's cwd).
    const config = path.join(dir, 'no-workspace.json');
    writeFileSync(config, JSON.stringify({ web: { enabled: false } }));
    const server = spawnBin('mcpvisor', ['--config', config]);
    try {
      const warning = await server.waitForLog((entry) => String(entry.msg).includes("the workspace holds the server's own code or config"));
      // mcpvisor reads no SHELL_WORKSPACE (only MCPVISOR_* variables): the hint must name the config key.
      expect(warning.msg).toContain('point shell.workspace in the config, or SHELL_WORKSPACE with shell-mcp-server,');
    } finally {
      await server.stop();
    }
  });
});
