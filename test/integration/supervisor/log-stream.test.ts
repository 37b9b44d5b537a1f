import { readFileSync, rmSync } from 'node:fs';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectStdioProcess, type StdioConnection } from '../../helpers/mcp';
import { bin, eventually, isAlive } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

type Result = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean };

/** A call that fails the test within 10 s rather than waiting for jest's timeout. */
const call = (connection: StdioConnection, name: string, args: Record<string, unknown>) =>
  connection.client.callTool({ name, arguments: args }, undefined, { timeout: 10_000 }) as Promise<Result>;

/**
 * mcpvisor over stdio with the test worker (and its `print` tool), started by `bash -c` so that
 * `redirect` can point its stderr somewhere; with `mountNamespace`, inside a mount namespace of its
 * own (`unshare -m`, which execs bash, which execs node: one pid), where `prelude` runs first.
 */
function startWithStderr(redirect: string, options: { mountNamespace?: boolean; prelude?: string } = {}): Promise<StdioConnection> {
  const config = writeConfig(fixtureConfig({ thread: false, process: { config: { printTool: true } }, root: { logLevel: 'debug' } }));
  const command = `${options.prelude ?? ''}exec ${JSON.stringify(process.execPath)} ${JSON.stringify(bin('mcpvisor'))} --config ${JSON.stringify(config)} ${redirect}`;
  const env = process.env as Record<string, string>;
  return options.mountNamespace ? connectStdioProcess('unshare', ['-m', 'bash', '-c', command], env) : connectStdioProcess('bash', ['-c', command], env);
}

describe('the log stream failing underneath the server', () => {
  it('keeps its workers serving when whatever read its stderr is gone (EPIPE on every line they print)', async () => {
    // `head` reads one byte and exits: the pipe's read end closes for good, as when pm2's daemon
    // or the terminal the server was started in goes away.
    const connection = await startWithStderr('2> >(head -c 1 >/dev/null)');
    try {
      const pids = new Set<unknown>();
      for (let i = 0; i < 20; i += 1) {
        const result = await call(connection, 'print', { text: `line ${i} ${'x'.repeat(2000)}` });
        expect(result.isError).toBeUndefined();
        pids.add(result.structuredContent!.pid);
      }
      // The same worker answered every call: none crashed on EPIPE and was replaced.
      expect(pids.size).toBe(1);
    } finally {
      await connection.close();
    }
  }, 60_000);

  it('keeps answering with stderr on a full disk, then says how many log lines were lost once there is room', async () => {
    // A 64 KiB file system, filled, mounted over a temporary directory in a mount namespace of the
    // server's alone: the machine's disks and mounts are never touched, and it goes with the server.
    const dir = tempDir('mcpvisor-full-disk-');
    const prelude = `mount -t tmpfs -o size=64k tmpfs ${dir} && { head -c 1048576 /dev/zero >${dir}/pad 2>/dev/null; true; } && `;
    const connection = await startWithStderr(`2>>${dir}/server.log`, { mountNamespace: true, prelude });
    const pid = connection.pid()!;
    // The namespace's view of the directory, from outside it.
    const inside = (name: string) => `/proc/${pid}/root${dir}/${name}`;
    try {
      for (let i = 0; i < 20; i += 1) expect((await call(connection, 'echo', { text: `full ${i}` })).isError).toBeUndefined();
      expect(readFileSync(inside('server.log'), 'utf8')).not.toContain('"msg":"tool call"');
      rmSync(inside('pad'));
      expect((await call(connection, 'echo', { text: 'room again' })).isError).toBeUndefined();
      expect(await eventually(() => readFileSync(inside('server.log'), 'utf8').includes('"msg":"tool call"'))).toBe(true);
      const lines = readFileSync(inside('server.log'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { msg: string });
      expect(lines[0].msg).toMatch(/^\d+ log line\(s\) dropped: ENOSPC writing the log$/);
      expect(Number(lines[0].msg.split(' ')[0])).toBeGreaterThanOrEqual(20);
    } finally {
      await connection.close();
    }
    expect(await eventually(() => !isAlive(pid))).toBe(true);
  }, 60_000);
});
