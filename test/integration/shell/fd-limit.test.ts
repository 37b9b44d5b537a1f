import { spawn } from 'node:child_process';
import { errorCodeOf } from '../../../protocol/results';
import { connectStdioProcess, textOf } from '../../helpers/mcp';
import { bin, descendants, eventually, isAlive } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';
import { call, shellWorkerPids } from './helpers';

/** shell-mcp-server under a file descriptor limit of its own (`prlimit` on it alone), sandboxed. */
const underLimit = (limit: number) => ({
  args: [`--nofile=${limit}:${limit}`, process.execPath, bin('shell-mcp-server')],
  env: { ...(process.env as Record<string, string>), SANDBOX_MODE: 'true', SHELL_WORKSPACE: tempDir('mcpvisor-fd-limit-') },
});

describe('shell-mcp-server at its file descriptor limit', () => {
  it('answers the commands it has no descriptors for with BUSY naming the limit, and runs commands again once they are free', async () => {
    const { args, env } = underLimit(36);
    const connection = await connectStdioProcess('prlimit', args, env);
    try {
      const workers = shellWorkerPids(connection.pid()!);
      expect(workers.length).toBeGreaterThan(0);
      // Twelve at once: each worker's commands take more descriptors than 36 leave.
      const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => call(connection, 'exec', { command: `sleep 0.5; echo ${i}` })));
      const busy = burst.filter((result) => result.isError);
      expect(busy.length).toBeGreaterThan(0);
      for (const result of busy) {
        expect(errorCodeOf(result)).toBe('BUSY');
        expect(textOf(result)).toMatch(/too many open files \(EMFILE\): process \d+ reached its limit of 36 open file descriptors \(RLIMIT_NOFILE/);
      }
      for (const result of burst.filter((each) => !each.isError)) expect(textOf(result)).toMatch(/^exit code 0/);
      // No worker crashed, and none is left short of descriptors: once the burst's have been
      // closed (its sandboxes and pipes go a moment after the answers), one after another, all run.
      let ran = false;
      for (let tries = 0; tries < 40 && !ran; tries += 1) {
        ran = !(await call(connection, 'exec', { command: 'true' })).isError;
        if (!ran) await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(ran).toBe(true);
      for (let i = 0; i < 3; i += 1) expect(textOf(await call(connection, 'exec', { command: `echo again ${i}` }))).toMatch(/^exit code 0[\s\S]*again/);
      expect(shellWorkerPids(connection.pid()!)).toEqual(workers);
    } finally {
      await connection.close();
    }
  }, 60_000);

  it('stops at the start, with one line naming the limit and exit 1, when it cannot start its workers', async () => {
    const { args, env } = underLimit(22);
    const server = spawn('prlimit', args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    server.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
    const tree = await (async () => {
      const seen = new Set<number>();
      while (server.exitCode === null) {
        for (const pid of descendants(server.pid!)) seen.add(pid);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return [...seen];
    })();
    expect(await exited).toBe(1);
    expect(stderr).toMatch(/shell-mcp-server: failed to start: cannot start a worker \(worker\.js\): too many open files \(EMFILE\): process \d+ reached its limit of 22 open file descriptors/);
    expect(stderr).not.toContain('Unhandled');
    expect(await eventually(() => tree.every((pid) => !isAlive(pid)))).toBe(true);
  }, 30_000);
});
