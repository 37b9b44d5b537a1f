import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { findCgroupLayout, ownCgroupLayout, processStartTime, type CgroupLayout } from '../../../workers/shell/cgroup-layout';
import { CommandCgroups, enterArgv, type CommandCgroup } from '../../../workers/shell/command-cgroups';
import { eventually } from '../../helpers/processes';
import { processesMatching } from '../../integration/shell/helpers';

/**
 * Real cgroups, as this process finds them: the layout a worker would use (v1 on a hybrid
 * system), and the unified hierarchy alone when it is mounted beside v1 (its own kill path).
 * Where a layout cannot be used here (not root, read-only cgroup file system), the test asserts
 * the reported fallback instead.
 */
const own = ownCgroupLayout();
const unifiedOnly = (() => {
  const mountInfo = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((line) => / - cgroup2 /.test(line)).join('\n');
  return findCgroupLayout(mountInfo, readFileSync('/proc/self/cgroup', 'utf8'));
})();
const layouts: Array<[string, CgroupLayout]> = [['this process\'s layout', own]];
if (own.version === 1 && unifiedOnly.version === 2) layouts.push(['the unified hierarchy (v2)', unifiedOnly]);

const workerDirs = (layout: CgroupLayout) => (layout.version === null ? [] : layout.hierarchies.map((hierarchy) => `${hierarchy.dir}/mcpvisor-shell-${process.pid}-${processStartTime('self')}`));

/** Runs `script` with /bin/sh inside `cgroup` and resolves its exit code and output. */
function runIn(cgroup: CommandCgroup, script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { file, args } = cgroup.wrap('/bin/sh', ['-c', script]);
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.each(layouts)('command cgroups on %s', (_name, layout) => {
  let opened: Awaited<ReturnType<typeof CommandCgroups.open>>;
  beforeAll(async () => {
    opened = await CommandCgroups.open({ maxProcesses: 40, maxMemoryBytes: 256 * 1024 ** 2 }, layout);
  });
  afterAll(async () => {
    await opened.cgroups?.close();
  });

  test('a daemon that left its process group (setsid) is in the cgroup and dies with kill; release removes the cgroup', async () => {
    if (!opened.cgroups) {
      expect(opened.state).toMatchObject({ available: false, maxProcesses: null, maxMemoryBytes: null, reason: expect.stringMatching(/cgroup/) });
      return;
    }
    const cgroup = opened.cgroups.create();
    const result = await runIn(cgroup, '(setsid sleep 4781 >/dev/null 2>&1 &); cat /proc/self/cgroup');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/mcpvisor-shell-\d+-\d+\/c\d+$/m);
    expect(await eventually(() => processesMatching('sleep 4781').length === 1, 3000)).toBe(true);
    cgroup.kill();
    expect(await eventually(() => processesMatching('sleep 4781').length === 0, 3000)).toBe(true);
    const dirs = workerDirs(layout).map((dir) => `${dir}/${/\/(c\d+)$/m.exec(result.stdout)![1]}`);
    expect(dirs.every((dir) => existsSync(dir))).toBe(true);
    cgroup.release();
    expect(await eventually(() => dirs.every((dir) => !existsSync(dir)), 3000)).toBe(true);
  });

  test('a bounded fork loop stops at the process limit when the pids controller is there', async () => {
    if (!opened.cgroups) return expect(opened.state.available).toBe(false);
    const cgroup = opened.cgroups.create();
    const result = await runIn(cgroup, 'n=0; while [ $n -lt 100 ]; do sleep 4782 >/dev/null 2>&1 & n=$((n+1)); echo $n > /dev/null; done; echo "forked $n"');
    cgroup.kill();
    cgroup.release();
    if (opened.state.maxProcesses === null) {
      // v2 without the controller delegated: no limit, and the state says why.
      expect(opened.state.reason).toMatch(/pids controller is not enabled/);
      expect(result.stdout).toBe('forked 100\n');
    } else {
      expect(opened.state.maxProcesses).toBe(40);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/Cannot fork|Resource temporarily unavailable/);
    }
    expect(await eventually(() => processesMatching('sleep 4782').length === 0, 3000)).toBe(true);
  });

  test('the cgroups of a worker that is gone are killed and removed by the next open', async () => {
    if (layout.version === null) return expect(opened.state.available).toBe(false);
    // A dead worker: a pid with a start time no process has.
    const dead = layout.hierarchies.map((hierarchy) => `${hierarchy.dir}/mcpvisor-shell-${process.pid}-1`);
    try {
      for (const dir of dead) mkdirSync(`${dir}/c7`, { recursive: true });
    } catch (error) {
      // Not allowed here (not root): then the worker could not have made them either.
      expect(opened.state.available).toBe(false);
      expect((error as NodeJS.ErrnoException).code).toMatch(/EACCES|EROFS|EPERM/);
      return;
    }
    const { file, args } = enterArgv(dead.map((dir) => `${dir}/c7/cgroup.procs`), '/bin/sh', ['-c', '(setsid sleep 4783 >/dev/null 2>&1 &)']);
    await promisify(execFile)(file, args);
    expect(await eventually(() => processesMatching('sleep 4783').length === 1, 3000)).toBe(true);
    // Its own directory exists already (the `open` above): the sweep before it is what is tested.
    await CommandCgroups.open({}, layout);
    expect(processesMatching('sleep 4783')).toEqual([]);
    expect(dead.filter((dir) => existsSync(dir))).toEqual([]);
  });

  test("the orphan guard's script kills what runs in the worker's cgroups and removes them", async () => {
    if (!opened.cgroups) return expect(opened.state.available).toBe(false);
    // The worker's directories are named after this process: free the name first.
    await opened.cgroups.close();
    const mine = await CommandCgroups.open({ maxProcesses: 40 }, layout);
    const cgroup = mine.cgroups!.create();
    await runIn(cgroup, '(setsid sleep 4784 >/dev/null 2>&1 &)');
    expect(await eventually(() => processesMatching('sleep 4784').length === 1, 3000)).toBe(true);
    await promisify(execFile)('/bin/sh', ['-c', mine.cgroups!.guardScript()]);
    expect(processesMatching('sleep 4784')).toEqual([]);
    expect(workerDirs(layout).filter((dir) => existsSync(dir))).toEqual([]);
  });
});

describe('enterArgv', () => {
  test('moves the shell itself for `/bin/sh -c` and wraps any other program in a shell that execs it', () => {
    expect(enterArgv(['/cg/a/cgroup.procs', "/cg/it's/cgroup.procs"], '/bin/sh', ['-c', 'echo hi'])).toEqual({
      file: '/bin/sh',
      args: ['-c', `echo $$ >'/cg/a/cgroup.procs' && echo $$ >'/cg/it'\\''s/cgroup.procs' || exit 125; echo hi`, '/bin/sh'],
    });
    expect(enterArgv(['/cg/a/cgroup.procs'], '/usr/bin/bwrap', ['--die-with-parent', '--', '/bin/sh'])).toEqual({
      file: '/bin/sh',
      args: ['-c', `echo $$ >'/cg/a/cgroup.procs' || exit 125; exec "$@"`, 'sh', '/usr/bin/bwrap', '--die-with-parent', '--', '/bin/sh'],
    });
  });

  test('a script too long to share one argument with the move runs in a shell exec\'d after it', () => {
    const long = `echo ${'x'.repeat(128 * 1024 - 20)}`;
    expect(enterArgv(['/cg/a/cgroup.procs'], '/bin/sh', ['-c', long])).toEqual({
      file: '/bin/sh',
      args: ['-c', `echo $$ >'/cg/a/cgroup.procs' || exit 125; exec /bin/sh -c "$1" /bin/sh`, '/bin/sh', long],
    });
  });

  test('a process that cannot enter its cgroup exits 125 before the command runs', async () => {
    const { file, args } = enterArgv(['/nonexistent/cgroup.procs'], '/bin/sh', ['-c', 'echo ran']);
    const error = await promisify(execFile)(file, args).catch((caught: { code: number; stdout: string }) => caught);
    expect(error).toMatchObject({ code: 125, stdout: '' });
  });
});
