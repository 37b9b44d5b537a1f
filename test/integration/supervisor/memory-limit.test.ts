import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { errorCodeOf } from '../../../protocol/results';
import { ownCgroupLayout } from '../../../workers/shell/cgroup-layout';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectStdioProcess, textOf, type StdioConnection } from '../../helpers/mcp';
import { bin, eventually } from '../../helpers/processes';

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean; _meta?: Record<string, unknown> };

const LIMIT_BYTES = 320 * 1024 * 1024;

/**
 * A memory cgroup of this test's own under this process's (never beside it), limited to
 * LIMIT_BYTES, for the server and its workers; undefined where none can be made (no cgroup file
 * system, not root, or cgroup v2 without the memory controller delegated here).
 */
function limitedCgroup(): { dir: string; remove(): void } | undefined {
  const layout = ownCgroupLayout();
  if (layout.version === null) return undefined;
  const hierarchy = layout.hierarchies.find((each) => each.kind === (layout.version === 1 ? 'memory' : 'unified'));
  if (!hierarchy) return undefined;
  const dir = `${hierarchy.dir}/mcpvisor-test-oom-${process.pid}`;
  try {
    mkdirSync(dir);
    writeFileSync(`${dir}/${layout.version === 1 ? 'memory.limit_in_bytes' : 'memory.max'}`, String(LIMIT_BYTES));
    if (layout.version === 2) writeFileSync(`${dir}/memory.swap.max`, '0');
  } catch {
    if (existsSync(dir)) rmdirSync(dir);
    return undefined;
  }
  // Removable once every process in it has exited.
  return { dir, remove: () => void eventually(() => { try { rmdirSync(dir); return true; } catch { return false; } }) };
}

describe('the server in a memory cgroup', () => {
  it('restarts a worker the kernel killed for memory and names the cause in the call and the log', async () => {
    const cgroup = limitedCgroup();
    const config = writeConfig(fixtureConfig({ thread: false, process: { config: { hogTool: true } } }));
    const start = cgroup
      ? ['sh', ['-c', `echo $$ >${cgroup.dir}/cgroup.procs && exec ${process.execPath} ${bin('mcpvisor')} --config ${config}`]] as const
      : [process.execPath, [bin('mcpvisor'), '--config', config]] as const;
    let connection: StdioConnection | undefined;
    try {
      connection = await connectStdioProcess(start[0], [...start[1]], process.env as Record<string, string>);
      const call = (name: string, args: Record<string, unknown>) => connection!.client.callTool({ name, arguments: args }) as Promise<Result>;
      if (cgroup) {
        // Twice the limit: the worker, the largest process of the cgroup, is the one the kernel kills.
        const result = await call('hog', { mb: (2 * LIMIT_BYTES) / (1024 * 1024), ms: 100 });
        expect(errorCodeOf(result)).toBe('WORKER_CRASHED');
        expect(textOf(result)).toContain('signal SIGKILL: killed by the kernel, out of memory');
        // The answer can come before the log line: both follow the worker's exit, the line written asynchronously.
        const exitLine = () => connection!.stderr().split('\n').find((line) => line.includes('"msg":"worker exited; restarting"'));
        expect(await eventually(() => exitLine() !== undefined, 5_000)).toBe(true);
        const logged = exitLine();
        expect(logged).toMatch(/"pool":"test".*"reason":"signal SIGKILL: killed by the kernel, out of memory/);
      } else {
        // No memory cgroup here: a SIGKILL from a person is not taken for the kernel's.
        const { structuredContent } = (await call('echo', { text: 'pid' })) as Result & { structuredContent: { pid: number } };
        const pending = call('sleep', { ms: 5000 });
        await new Promise((resolve) => setTimeout(resolve, 200));
        process.kill(structuredContent.pid, 'SIGKILL');
        expect(textOf(await pending)).not.toContain('out of memory');
      }
      // The replacement serves.
      expect(await eventually(async () => !(await call('echo', { text: 'back' })).isError)).toBe(true);
      // The cgroup held the supervisor through it all.
      if (cgroup) expect(readFileSync(`${cgroup.dir}/cgroup.procs`, 'utf8')).toContain(String(connection.pid()));
    } finally {
      await connection?.close();
      cgroup?.remove();
    }
  }, 60_000);
});
