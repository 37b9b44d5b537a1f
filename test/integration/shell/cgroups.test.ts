import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ownCgroupLayout } from '../../../workers/shell/cgroup-layout';
import { enterArgv } from '../../../workers/shell/command-cgroups';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { bin, eventually } from '../../helpers/processes';
import { call, shellWorkerPids } from './helpers';

/**
 * Each command in a cgroup of its own (workers/shell/command-cgroups.ts), through the real
 * shell-mcp-server. Which branch applies depends on the machine: with cgroups (root on a writable
 * cgroup file system) the limits hold and leftovers die; without, the server says so and behaves
 * as before. Each test reads the server's getSystemInfo and asserts the branch it reports.
 */
const MAX_PROCESSES = 64;
const COMMAND_MEMORY = 192 * 1024 * 1024;
const isRoot = process.getuid?.() === 0;

interface CgroupInfo {
  available: boolean;
  version: 1 | 2 | null;
  maxProcesses: number | null;
  maxMemoryBytes: number | null;
  reason?: string;
}

let root: string;
const configFile = (name: string, shell: Record<string, unknown>) => {
  const file = path.join(root, `${name}.json`);
  writeFileSync(file, JSON.stringify({ shell: { sandboxMaxProcesses: MAX_PROCESSES, commandMaxProcesses: MAX_PROCESSES, commandMaxMemoryBytes: COMMAND_MEMORY, ...shell } }));
  return file;
};
const workspace = (name: string) => {
  const dir = path.join(root, name);
  mkdirSync(dir);
  return dir;
};
const exec = async (server: StdioConnection, command: string) => {
  const result = await call(server, 'exec', { command });
  return { ...(result.structuredContent as { stdout: string; stderr: string; exitCode: number | null; oomKilled: boolean; processLimitReached: boolean }), text: textOf(result) };
};
/** Live processes whose command line is exactly `sleep <n>` (not the shells that started them). */
function sleepers(n: number): number[] {
  const want = `sleep\0${n}\0`;
  return readdirSync('/proc').filter((entry) => {
    try {
      return /^\d+$/.test(entry) && readFileSync(`/proc/${entry}/cmdline`, 'utf8') === want && !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${entry}/stat`, 'utf8'));
    } catch {
      return false;
    }
  }).map(Number);
}
const cgroupOf = async (server: StdioConnection) => (await call(server, 'getSystemInfo')).structuredContent!.cgroup as CgroupInfo;

beforeAll(() => {
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'shell-cgroups-')));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/**
 * Three processes of 80 MiB each, alive at once (a barrier file), each under the 192 MiB of a
 * command, together over it. Prints "held" per process that got there and the first failed status.
 */
const THREE_PROCESSES =
  `for i in 1 2 3; do perl -e '$x = "a" x (80 << 20); open F, ">", "m$ARGV[0]"; close F; select(undef, undef, undef, 0.05) until -e "go"; print "held\\n"' $i & eval "p$i=\\$!"; done; ` +
  'n=0; while [ $n -lt 400 ] && kill -0 $p1 $p2 $p3 2>/dev/null && ! [ -e m1 -a -e m2 -a -e m3 ]; do sleep 0.05; n=$((n+1)); done; ' +
  'touch go; s=0; for p in $p1 $p2 $p3; do wait $p || s=$?; done; rm -f m1 m2 m3 go; echo "status $s"';

describe.each([
  ['sandbox mode', 'true'],
  ['unconfined mode', 'false'],
])('%s', (_mode, sandboxMode) => {
  let server: StdioConnection;
  let cgroup: CgroupInfo;
  beforeAll(async () => {
    const name = sandboxMode === 'true' ? 'sandboxed' : 'unconfined';
    server = await connectStdio('shell-mcp-server', ['--config', configFile(name, {})], { SANDBOX_MODE: sandboxMode, SHELL_WORKSPACE: workspace(name) });
    cgroup = await cgroupOf(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  test('getSystemInfo reports the cgroup of each command: its version and limits, or why there is none', async () => {
    if (cgroup.available) {
      expect(cgroup.version).toEqual(expect.any(Number));
      // v1 always has the limits; v2 only where the controllers are delegated, which the reason then names.
      if (cgroup.maxMemoryBytes === null) expect(cgroup.reason).toMatch(/memory controller/);
      else expect(cgroup.maxMemoryBytes).toBe(COMMAND_MEMORY);
      // The process limit holds in both modes.
      if (cgroup.maxProcesses === null) expect(cgroup.reason).toMatch(/pids controller/);
      else expect(cgroup.maxProcesses).toBe(MAX_PROCESSES);
      expect((await call(server, 'getSystemInfo')).content[0].text).toMatch(/^cgroups: v[12], each command in its own/m);
    } else {
      expect(cgroup).toMatchObject({ version: null, maxProcesses: null, maxMemoryBytes: null, reason: expect.any(String) });
      expect(isRoot).toBe(false);
    }
  });

  test('a daemon that left the process group (setsid, double fork) is gone once its command has ended', async () => {
    const result = await exec(server, '(setsid sleep 4791 >/dev/null 2>&1 &); echo started');
    expect(result.stdout).toBe('started\n');
    const gone = await eventually(() => sleepers(4791).length === 0, 3000);
    if (cgroup.available || sandboxMode === 'true') {
      // The cgroup, or the sandbox's pid namespace, takes it.
      expect(gone).toBe(true);
    } else {
      // Unconfined without cgroups: the documented limit.
      expect(gone).toBe(false);
      for (const pid of sleepers(4791)) process.kill(pid, 'SIGKILL');
    }
  });

  test('several processes that together take more than the memory of a command fail, though each alone is under it', async () => {
    const result = await exec(server, THREE_PROCESSES);
    if (cgroup.maxMemoryBytes !== null) {
      // The kernel's OOM killer ends one of them (SIGKILL: 137) and the result says why.
      expect(result.stdout).toMatch(/status 137\n$/);
      expect(result.stdout).not.toMatch(/held\n(.*\n)?held\nheld\n/);
      expect(result.oomKilled).toBe(true);
      expect(result.text).toContain('the command reached its memory limit of 192 MiB, all its processes together (shell.commandMaxMemoryBytes)');
    } else {
      expect(result.stdout).toBe('held\nheld\nheld\nstatus 0\n');
      expect(result.oomKilled).toBe(false);
    }
    // One process alone is well under the limit.
    expect((await exec(server, 'perl -e \'$x = "a" x (80 << 20); print length $x\'')).stdout).toBe(String(80 << 20));
  });

  test('a bounded fork loop stops at the process limit, also as root', async () => {
    const result = await exec(server, 'n=0; while [ $n -lt 200 ]; do sleep 4792 >/dev/null 2>&1 & n=$((n+1)); echo $n > forks; done; echo "forked $n"');
    const read = await exec(server, 'cat forks');
    const forks = Number(read.stdout);
    expect(read.processLimitReached).toBe(false);
    if (cgroup.maxProcesses !== null || (!isRoot && sandboxMode === 'true')) {
      // The cgroup's pids.max (or, for another user in the sandbox, the rlimit) refuses the fork past the limit.
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/Cannot fork|Resource temporarily unavailable/);
      expect(forks).toBeGreaterThan(0);
      expect(forks).toBeLessThan(MAX_PROCESSES);
      // The result says which limit it was, as it does for memory.
      const setting = sandboxMode === 'true' ? 'shell.sandboxMaxProcesses' : 'shell.commandMaxProcesses';
      expect(result.processLimitReached).toBe(cgroup.maxProcesses !== null);
      if (cgroup.maxProcesses !== null) expect(result.text).toContain(`the command reached its limit of ${MAX_PROCESSES} processes and threads, all its processes together (${setting}): the kernel refused it more`);
    } else {
      // Root in the sandbox, or unconfined, without cgroups: nothing limits it (the documented limit).
      expect(result.stdout).toBe('forked 200\n');
    }
    expect(await eventually(() => sleepers(4792).length === 0, 3000)).toBe(true);
  });
});

describe("a worker's cgroups", () => {
  const layout = ownCgroupLayout();
  /** A leftover of a crashed worker (a pid and start time no live process has), with a daemon in it. */
  const dead = layout.version === null ? [] : layout.hierarchies.map((hierarchy) => `${hierarchy.dir}/mcpvisor-shell-${process.pid}-1`);
  let planted = false;
  let server: StdioConnection;
  let cgroup: CgroupInfo;
  beforeAll(async () => {
    // A shell worker starting meanwhile in another test file removes this "dead" cgroup as well
    // (between its mkdir and the move): tried again, a few times.
    for (let attempt = 0; attempt < 5 && !planted; attempt++) {
      try {
        for (const dir of dead) mkdirSync(`${dir}/c3`, { recursive: true });
        const { file, args } = enterArgv(dead.map((dir) => `${dir}/c3/cgroup.procs`), '/bin/sh', ['-c', '(setsid sleep 4793 >/dev/null 2>&1 &)']);
        await promisify(execFile)(file, args);
        planted = true;
      } catch {
        // No cgroups to make here (the server cannot either, asserted below), or removed meanwhile.
      }
    }
    server = await connectStdio('shell-mcp-server', ['--config', configFile('restart', { workers: 1 })], { SANDBOX_MODE: 'false', SHELL_WORKSPACE: workspace('restart') });
    cgroup = await cgroupOf(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  test('those of a dead worker, and the processes in them, are removed when a worker starts', async () => {
    expect(cgroup.available).toBe(planted);
    if (!planted) return;
    expect(await eventually(() => sleepers(4793).length === 0 && dead.every((dir) => !existsSync(dir)), 3000)).toBe(true);
  });

  test('a worker killed with SIGKILL leaves no cgroup and no daemon of a running command behind', async () => {
    const [worker] = shellWorkerPids(server.pid()!);
    const mine = () => (layout.version === null ? [] : layout.hierarchies.flatMap((hierarchy) => readdirSync(hierarchy.dir).filter((name) => name.startsWith(`mcpvisor-shell-${worker}-`))));
    const before = mine();
    const running = call(server, 'exec', { command: '(setsid sleep 4794 >/dev/null 2>&1 &); sleep 4795' }).catch(() => undefined);
    expect(await eventually(() => sleepers(4794).length === 1 && sleepers(4795).length === 1, 5000)).toBe(true);
    process.kill(worker, 'SIGKILL');
    // The orphan guard kills the command's process group, and with cgroups what left it, then removes them.
    expect(await eventually(() => sleepers(4795).length === 0, 5000)).toBe(true);
    if (cgroup.available) {
      expect(await eventually(() => sleepers(4794).length === 0, 5000)).toBe(true);
      expect(before).toHaveLength(layout.version === null ? 0 : layout.hierarchies.length);
      expect(await eventually(() => mine().length === 0, 5000)).toBe(true);
    } else {
      // Without cgroups the daemon that left the group survives (the documented limit).
      expect(sleepers(4794)).toHaveLength(1);
      for (const pid of sleepers(4794)) process.kill(pid, 'SIGKILL');
    }
    await running;
  });
});

describe('where cgroups are unavailable', () => {
  test('the server says so once per worker in its log and in getSystemInfo, and runs commands as before', async () => {
    // A read-only, empty /sys/fs/cgroup in a mount namespace of its own, as in a container
    // (as another user, in a user namespace too).
    const transport = new StdioClientTransport({
      command: 'unshare',
      args: [isRoot ? '-m' : '-rm', '/bin/sh', '-c', 'mount -t tmpfs -o ro,size=4k none /sys/fs/cgroup && exec "$@"', 'sh', process.execPath, bin('shell-mcp-server'), '--config', configFile('fallback', { workers: 1 })],
      env: { ...(process.env as Record<string, string>), SANDBOX_MODE: 'true', SHELL_WORKSPACE: workspace('fallback') },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Client({ name: 'mcpvisor-test', version: '1.0.0' });
    await client.connect(transport);
    const server = { client, transport, stderr: () => stderr, pid: () => transport.pid, close: () => client.close() } as StdioConnection;
    try {
      const info = await call(server, 'getSystemInfo');
      expect(info.structuredContent!.cgroup).toEqual({ available: false, version: null, maxProcesses: null, maxMemoryBytes: null, reason: expect.stringContaining('no cgroup file system') });
      expect(textOf(info)).toMatch(/^cgroups: unavailable \(no cgroup file system.*\); no process or memory limit per command/m);
      expect((await exec(server, 'echo ran')).stdout).toBe('ran\n');
      expect(stderr.match(/cgroups unavailable: commands run without a process or memory limit per command/g)).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});

describe('shell.commandCgroups: false', () => {
  test('commands run without cgroups, and getSystemInfo says it was turned off', async () => {
    const server = await connectStdio('shell-mcp-server', ['--config', configFile('off', { workers: 1, commandCgroups: false })], { SANDBOX_MODE: 'false', SHELL_WORKSPACE: workspace('off') });
    try {
      const info = await call(server, 'getSystemInfo');
      expect(info.structuredContent!.cgroup).toEqual({ available: false, version: null, maxProcesses: null, maxMemoryBytes: null, reason: 'turned off (shell.commandCgroups: false)' });
      const own = (await exec(server, 'cat /proc/self/cgroup')).stdout;
      expect(own).not.toContain('mcpvisor-shell-');
    } finally {
      await server.close();
    }
  });
});
