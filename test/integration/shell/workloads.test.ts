import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { call } from './helpers';

/**
 * What an assistant does in a project workspace, through the built shell-mcp-server: each case
 * once failed slowly, silently or unreadably. The limit is short so that a hang shows as a timeout.
 */
describe.each([
  ['off', 'false'],
  ['on', 'true'],
])('everyday work through shell-mcp-server with sandbox mode %s', (_mode, SANDBOX_MODE) => {
  let ws: string;
  let server: StdioConnection;
  const sandboxed = SANDBOX_MODE === 'true';

  beforeAll(async () => {
    ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'shell-work-')));
    server = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE, SHELL_WORKSPACE: ws, COMMAND_TIMEOUT: '12000' });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(ws, { recursive: true, force: true });
  });

  test.each([
    ['given with -c', 'git -c core.editor=vi commit --allow-empty'],
    ["in the project's config", 'git config core.editor vi && git commit --allow-empty'],
  ])('git commit without -m and an editor %s fails at once, saying what to do, instead of waiting in vi until the timeout', async (_where, commit) => {
    const repo = `repo${commit.length}`;
    const command = `git init -q ${repo} && cd ${repo} && git config user.name t && git config user.email t@t && ${commit}; echo "commit=$?"`;
    const result = await call(server, 'exec', { command });
    expect(result.structuredContent).toMatchObject({ timedOut: false, stdout: 'commit=1\n' });
    expect(result.structuredContent!.stderr).toContain('no terminal here, so git cannot open an editor: give the text with -m MSG or -F FILE');
  });

  test('the text item shows output as a terminal leaves it; structuredContent keeps every byte', async () => {
    const result = await call(server, 'exec', { command: "printf 'get 10%%\\rget 100%%\\n\\033[1;31mFAIL\\033[0m a.test\\r\\n' ; printf '\\033]0;title\\007warn\\n' >&2" });
    expect(result.structuredContent).toMatchObject({ stdout: 'get 10%\rget 100%\n\x1b[1;31mFAIL\x1b[0m a.test\r\n', stderr: '\x1b]0;title\x07warn\n' });
    const text = textOf(result);
    expect(text).toContain('--- stdout ---\nget 100%\nFAIL a.test\n--- stderr ---\nwarn');
    expect(text).toContain('structuredContent has every byte');
    expect(text).not.toMatch(/[\x1b\r]|10%/);
  });

  test('bash syntax refused by a /bin/sh that is not bash is named as such, and tools/list names the shell', async () => {
    const shell = path.basename(realpathSync('/bin/sh'));
    const result = await call(server, 'exec', { command: 'set -o pipefail; false | true; echo after' });
    expect(result.structuredContent!.stdout).toBe(shell === 'bash' ? 'after\n' : '');
    const note = `commands run in /bin/sh, which is ${shell} here (POSIX sh), not bash`;
    if (shell === 'bash') expect(textOf(result)).not.toContain(note);
    else expect(textOf(result)).toContain(note);
    const { tools } = await server.client.listTools();
    if (shell !== 'bash') expect(tools.find((tool) => tool.name === 'exec')!.description).toContain(`/bin/sh is ${shell} here (POSIX sh, not bash`);
  });

  test('tools/list tells the model the workspace, the time limit and what the sandbox allows', async () => {
    const { tools } = await server.client.listTools();
    const exec = tools.find((tool) => tool.name === 'exec')!.description!;
    expect(exec).toContain(`Workspace (working directory of every command; relative paths of all tools resolve there): ${ws}.`);
    expect(exec).toContain('Time limit: 12000 ms per command. Output cap: 10 MiB per stream.');
    expect(exec).toContain('cd, export and background jobs (cmd &) do not carry over');
    if (sandboxed) expect(exec).toContain('/tmp starts empty at each command (keep files in the workspace), HOME is /home/sandbox, kept between commands (git config --global, ~/.npmrc), programs come from /usr, /bin and /opt (none installed under a home directory), there is no network');
    else expect(exec).toContain("Not sandboxed: commands run with the full rights of the server's user");
    const files = Object.fromEntries(tools.filter((tool) => tool.name !== 'exec').map((tool) => [tool.name, tool.description!]));
    expect(files.writeFile).toContain('A new file is not executable');
    expect(files.readFile).toContain(`Files over ${1024 * 1024} bytes are refused`);
    for (const name of ['readFile', 'writeFile', 'deleteFile', 'listDir']) {
      const confined = `Sandbox mode: only paths inside the workspace (${ws}); a command's /tmp is its own and gone after it.`;
      if (sandboxed) expect(files[name]).toContain(confined);
      else expect(files[name]).not.toContain('Sandbox mode');
    }
  });
});

describe('everyday work in the sandbox without network', () => {
  let ws: string;
  let hostBin: string;
  let server: StdioConnection;

  beforeAll(async () => {
    ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'shell-offline-')));
    // A tool installed for the server's user only, as nvm's node or cargo's binaries are: outside the sandbox.
    hostBin = mkdtempSync(path.join(os.tmpdir(), 'shell-host-bin-'));
    writeFileSync(path.join(hostBin, 'devtool'), '#!/bin/sh\necho devtool\n', { mode: 0o755 });
    server = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE: 'true', SHELL_WORKSPACE: ws, COMMAND_TIMEOUT: '12000', PATH: `${hostBin}:${process.env.PATH}` });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(ws, { recursive: true, force: true });
    rmSync(hostBin, { recursive: true, force: true });
  });

  test("a program the server has outside the sandbox's directories is named as hidden, not only 'not found'", async () => {
    const result = await call(server, 'exec', { command: "printf '{\"scripts\":{\"test\":\"devtool --check\"}}' > package.json && npm test 2>&1" });
    expect(result.structuredContent!.stdout).toContain('devtool: not found');
    const text = textOf(result);
    expect(text).toContain('devtool is installed for the server in a directory the sandbox does not show');
    expect(text).not.toContain(hostBin);
  });

  test('npm install fails at once naming the host it cannot resolve, instead of retrying into the timeout with no output', async () => {
    const result = await call(server, 'exec', { command: "mkdir -p app && cd app && echo '{\"name\":\"app\",\"version\":\"1.0.0\"}' > package.json && npm install left-pad" });
    expect(result.structuredContent).toMatchObject({ timedOut: false, exitCode: expect.any(Number) });
    expect(result.structuredContent!.exitCode).not.toBe(0);
    expect(result.structuredContent!.stderr).toMatch(/(EAI_AGAIN|ENOTFOUND) registry\.npmjs\.org/);
    // npm's cache (its logs of this run) and XDG caches went to HOME, which was the workspace, for `git add -A` to commit.
    const left = await call(server, 'exec', { command: 'ls -A; echo "cache=$XDG_CACHE_HOME npm=$npm_config_cache"' });
    expect(left.structuredContent!.stdout).not.toMatch(/^\.(npm|cache)$/m);
    expect(left.structuredContent!.stdout).toContain('cache=/tmp/.cache npm=/tmp/.npm');
  });

  test('USER and LOGNAME name the user commands run as', async () => {
    const result = await call(server, 'exec', { command: 'echo "$USER $LOGNAME $(id -un)"' });
    const user = os.userInfo().username;
    expect(result.structuredContent!.stdout).toBe(`${user} ${user} ${user}\n`);
  });
});
