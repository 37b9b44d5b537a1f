/**
 * The sandbox's HOME: a directory of its own outside the workspace, kept between commands and
 * restarts. HOME was the workspace, so `git config --global`, `npm config set` and shell histories
 * wrote into the user's project, where `git add -A` committed them.
 */
import { lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { connectStdioAsOrdinaryUser, ordinaryUserDir } from '../../helpers/ordinary-user';
import { tempDir } from '../../helpers/temp';
import { call } from './helpers';

function sandboxed(workspace: string, state: string, extra: Record<string, string> = {}): Promise<StdioConnection> {
  return connectStdio('shell-mcp-server', [], { SANDBOX_MODE: 'true', SHELL_WORKSPACE: workspace, XDG_STATE_HOME: state, ...extra });
}

async function stdoutOf(server: StdioConnection, command: string): Promise<string> {
  const result = await call(server, 'exec', { command });
  expect([command, result.structuredContent!.exitCode, result.structuredContent!.stderr]).toEqual([command, 0, '']);
  return result.structuredContent!.stdout as string;
}

describe('the sandbox home', () => {
  test('git config --global, npm config and files in ~ stay out of the workspace and are kept between commands and restarts', async () => {
    const ws = realpathSync(tempDir('shell-home-ws-'));
    const state = realpathSync(tempDir('shell-home-state-'));
    let server = await sandboxed(ws, state);
    try {
      expect(await stdoutOf(server, 'echo "$HOME"')).toBe('/home/sandbox\n');
      await stdoutOf(server, "git init -q && git config --global user.name 'Home Test' && npm config set fund false && touch ~/.probe");
      // A later command, perhaps in the other worker, sees them; the project has nothing new.
      expect(await stdoutOf(server, 'git config --global user.name && cat ~/.npmrc && git status --porcelain --untracked-files=all')).toBe('Home Test\nfund=false\n');
      expect(readdirSync(ws)).toEqual(['.git']);
      const { tools } = await server.client.listTools();
      expect(tools.find((tool) => tool.name === 'exec')!.description).toContain('HOME is /home/sandbox, kept between commands (git config --global, ~/.npmrc)');
      // Links to the host planted in the home resolve inside the sandbox only: the host's state directory is not there.
      expect(await stdoutOf(server, `ln -s / ~/root-link && ln -s ${state} ~/state-link && ls -d ~/root-link${state} ~/state-link/mcpvisor 2>/dev/null; echo end`)).toBe('end\n');
      // Nothing of the host's path shows in the environment.
      expect(await stdoutOf(server, 'env')).not.toContain(state);
      // Programs a user install puts in ~/.local/bin (pip install --user) run by name, after the system's.
      await stdoutOf(server, "mkdir -p ~/.local/bin && printf '#!/bin/sh\\necho user tool\\n' > ~/.local/bin/user-tool && chmod +x ~/.local/bin/user-tool && printf '#!/bin/sh\\necho shadow\\n' > ~/.local/bin/ls && chmod +x ~/.local/bin/ls");
      expect(await stdoutOf(server, 'user-tool && ls -d /')).toBe('user tool\n/\n');
      const info = await call(server, 'getSystemInfo', {});
      expect(info.structuredContent!.sandbox).toMatchObject({ limits: { home: { path: '/home/sandbox', kept: true } } });
      expect(textOf(info)).toContain('HOME /home/sandbox kept between commands');
    } finally {
      await server.close();
    }
    // On the host: one home for this workspace, mode 0700, under the state directory; the links left as they were.
    const homes = readdirSync(path.join(state, 'mcpvisor', 'sandbox-home'));
    expect(homes).toEqual([expect.stringMatching(/^shell-home-ws-.+-[0-9a-f]{16}$/)]);
    const home = path.join(state, 'mcpvisor', 'sandbox-home', homes[0]);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(readdirSync(home).sort()).toEqual(['.gitconfig', '.local', '.npmrc', '.probe', 'root-link', 'state-link']);
    expect(lstatSync(path.join(home, 'root-link')).isSymbolicLink()).toBe(true);

    // A new server on the same workspace finds them; one on another workspace has a home of its own.
    server = await sandboxed(ws, state);
    try {
      expect(await stdoutOf(server, 'git config --global user.name')).toBe('Home Test\n');
    } finally {
      await server.close();
    }
    server = await sandboxed(realpathSync(tempDir('shell-home-other-')), state);
    try {
      expect((await call(server, 'exec', { command: 'git config --global user.name' })).structuredContent).toMatchObject({ exitCode: 1, stdout: '' });
    } finally {
      await server.close();
    }
  });

  test('a home that would lie in the workspace is not used: each command gets an empty one, and the start says why', async () => {
    // The workspace a user's own home directory, XDG state under it: a command could swap the
    // home for a symlink to /, which bubblewrap would have bound writable in the next sandbox.
    const ws = realpathSync(tempDir('shell-home-inside-'));
    const server = await sandboxed(ws, path.join(ws, '.local', 'state'));
    try {
      expect(await stdoutOf(server, "git config --global user.name 'Gone' && echo \"$HOME\"")).toBe('/home/sandbox\n');
      expect((await call(server, 'exec', { command: 'git config --global user.name' })).structuredContent).toMatchObject({ exitCode: 1, stdout: '' });
      expect(readdirSync(ws)).toEqual([]);
      expect(server.stderr()).toContain(`sandboxed commands get an empty HOME (/home/sandbox) each, nothing in it kept: ${ws}/.local/state/mcpvisor/sandbox-home/`);
      expect(server.stderr()).toContain(`would lie in the workspace ${ws}`);
      const { tools } = await server.client.listTools();
      expect(tools.find((tool) => tool.name === 'exec')!.description).toContain('HOME is /home/sandbox, empty at each command');
      const info = await call(server, 'getSystemInfo', {});
      expect(info.structuredContent!.sandbox).toMatchObject({ limits: { home: { path: '/home/sandbox', kept: false } } });
      expect(textOf(info)).toContain('HOME /home/sandbox empty at each command');
    } finally {
      await server.close();
    }
  });

  test('unconfined commands keep the server user\'s own HOME', async () => {
    const ws = realpathSync(tempDir('shell-home-unconfined-'));
    const home = realpathSync(tempDir('shell-home-user-'));
    const server = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE: 'false', SHELL_WORKSPACE: ws, HOME: home });
    try {
      expect(await stdoutOf(server, 'echo "$HOME"')).toBe(`${home}\n`);
    } finally {
      await server.close();
    }
  });
});

describe('the sandbox home of an ordinary user', () => {
  test('without a home directory the server starts, names the directory it could not make, and commands get an empty HOME', async () => {
    const ws = ordinaryUserDir('shell-home-nobody-');
    const server = await connectStdioAsOrdinaryUser('shell-mcp-server', { SANDBOX_MODE: 'true', SHELL_WORKSPACE: ws });
    try {
      expect(await stdoutOf(server, "git config --global user.name 'Nobody' && echo \"$HOME\"")).toBe('/home/sandbox\n');
      expect(readdirSync(ws)).toEqual([]);
      expect(server.stderr()).toMatch(/empty HOME \(\/home\/sandbox\) each, nothing in it kept: \/nonexistent\/\.local\/state\/mcpvisor\/sandbox-home\/shell-home-nobody-[^ ]+ cannot be made: E[A-Z]+ \(set XDG_STATE_HOME/);
      expect(textOf(await call(server, 'exec', { command: 'true' }))).toContain('exit code 0');
    } finally {
      await server.close();
    }
  });

  test('with XDG_STATE_HOME its home is made there, owned by it, and kept', async () => {
    const ws = ordinaryUserDir('shell-home-user-ws-');
    const state = ordinaryUserDir('shell-home-user-state-');
    const server = await connectStdioAsOrdinaryUser('shell-mcp-server', { SANDBOX_MODE: 'true', SHELL_WORKSPACE: ws, XDG_STATE_HOME: state });
    try {
      await stdoutOf(server, "git config --global user.name 'Ordinary'");
      expect(await stdoutOf(server, 'git config --global user.name')).toBe('Ordinary\n');
      expect(readdirSync(ws)).toEqual([]);
    } finally {
      await server.close();
    }
    const [home] = readdirSync(path.join(state, 'mcpvisor', 'sandbox-home'));
    expect(statSync(path.join(state, 'mcpvisor', 'sandbox-home', home)).uid).toBe(statSync(ws).uid);
  });
});
