/**
 * shell-mcp-server run as an ordinary user (nobody when the tests run as root), as most people
 * run it: bubblewrap then needs user namespaces, and the server makes no cgroups of its own.
 */
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { errorCodeOf, ERROR_META_KEY } from '../../../protocol/results';
import { connectStdioAsOrdinaryUser, ordinaryUserDir, ORDINARY_UID } from '../../helpers/ordinary-user';
import type { StdioConnection } from '../../helpers/mcp';
import { textOf } from '../../helpers/mcp';
import { call } from './helpers';


/** shell-mcp-server over stdio as the ordinary user, in sandbox mode, confined to `workspace`. */
function connectAsOrdinaryUser(workspace: string, options: { userNamespaces?: boolean; env?: Record<string, string> } = {}): Promise<StdioConnection> {
  return connectStdioAsOrdinaryUser('shell-mcp-server', { SANDBOX_MODE: 'true', SHELL_WORKSPACE: workspace, ...options.env }, options);
}

describe('shell-mcp-server as an ordinary user', () => {
  test('runs sandboxed commands as that user, in its workspace', async () => {
    const workspace = ordinaryUserDir('shell-ordinary-');
    const server = await connectAsOrdinaryUser(workspace);
    try {
      const result = await call(server, 'exec', { command: 'id -u && echo made > made.txt' });
      expect(result.structuredContent).toMatchObject({ exitCode: 0, stdout: `${ORDINARY_UID}\n`, sandboxed: true });
      expect(existsSync(`${workspace}/made.txt`)).toBe(true);
    } finally {
      await server.close();
    }
  });

  test('without cgroups, getSystemInfo gives the limits the sandbox still sets (it said none, and a kill by process group only)', async () => {
    const workspace = ordinaryUserDir('shell-limits-');
    const server = await connectAsOrdinaryUser(workspace);
    try {
      const info = await call(server, 'getSystemInfo');
      // An ordinary user can make no cgroup here unless one was delegated to it.
      expect(info.structuredContent!.cgroup).toMatchObject({ available: false, maxProcesses: null });
      expect(info.structuredContent!.sandbox.limits.maxProcesses).toBe(512);
      expect(textOf(info)).toMatch(/^cgroups: unavailable \(.*\); at most 512 processes per command \(the sandbox's rlimit\), no memory limit per command \(only per process, above\); what a command leaves running is killed with its sandbox$/m);
      // And it holds: a fork past it is refused. The children outlive the loop (with `sleep 5`, a
      // loop slower than 5 s under CI's load saw the first ones exit and forked all 600); the
      // sandbox kills them when the command ends.
      const forks = await call(server, 'exec', { command: 'i=0; while [ $i -lt 600 ]; do sleep 120 </dev/null >/dev/null 2>&1 & i=$((i+1)); done; echo forked' });
      const { stdout, stderr, durationMs } = forks.structuredContent as { stdout: string; stderr: string; durationMs: number };
      expect({ stdout, stderr, durationMs }).toMatchObject({ stdout: '', stderr: expect.stringMatching(/Cannot fork|Resource temporarily unavailable/) });
    } finally {
      await server.close();
    }
  });

  test('with a TMPDIR it cannot write, commands still get real pipes (>/dev/stdout), and the start says where they wait', async () => {
    const workspace = ordinaryUserDir('shell-tmpdir-');
    // Beside the workspace, not in it: read-only to the user (root's, or its own with mode 0555).
    const closedTmp = path.join(ordinaryUserDir('shell-closed-tmp-'), 'tmp');
    mkdirSync(closedTmp);
    chmodSync(closedTmp, 0o555);
    const server = await connectAsOrdinaryUser(workspace, { env: { TMPDIR: closedTmp } });
    try {
      const result = await call(server, 'exec', { command: 'echo through-a-fifo > /dev/stdout' });
      expect(result.structuredContent).toMatchObject({ exitCode: 0, stdout: 'through-a-fifo\n', stderr: '' });
      expect(server.stderr()).toContain(`"msg":"the temporary directory ${closedTmp} is not there or not writable by this user (EACCES): commands' output pipes wait in /dev/shm instead (set TMPDIR to a directory this user can write)"`);
    } finally {
      await server.close();
    }
  });

  test('with user namespaces turned off, refuses exec naming the setting and its fix, runs nothing, and says so at start', async () => {
    const workspace = ordinaryUserDir('shell-no-userns-');
    const server = await connectAsOrdinaryUser(workspace, { userNamespaces: false });
    try {
      const result = await call(server, 'exec', { command: 'echo ran > ran.txt' });
      expect(result.isError).toBe(true);
      expect(errorCodeOf(result)).toBe('BLOCKED');
      expect(result._meta?.[ERROR_META_KEY]).toEqual({ code: 'BLOCKED', data: { package: 'bubblewrap', cause: 'user-namespaces-off' } });
      const text = result.content[0].text!;
      expect(text).toContain('user.max_user_namespaces is 0');
      expect(text).toContain('sysctl -w user.max_user_namespaces=');
      expect(text).toContain('SANDBOX_MODE=false');
      // bubblewrap is installed: installing it again fixes nothing.
      expect(text).not.toContain('apt-get install');
      expect(existsSync(`${workspace}/ran.txt`)).toBe(false);

      const info = await call(server, 'getSystemInfo');
      expect(info.structuredContent!.sandbox).toMatchObject({ enabled: true, available: false, cause: 'user-namespaces-off' });
      expect(info.structuredContent!.sandbox.fix).toContain('sysctl -w user.max_user_namespaces=');
      expect(server.stderr()).toMatch(/"msg":"sandbox unavailable: exec will refuse commands until it is fixed; allow user namespaces[^"]*user.max_user_namespaces is 0/);
    } finally {
      await server.close();
    }
  });
});
