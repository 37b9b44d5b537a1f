import { eventually, isAlive } from '../../helpers/processes';
import { processesMatching } from '../../integration/shell/helpers';
import { runCommand, type RunOptions } from '../../../workers/shell/runner';

const sh = (command: string, extra: Partial<RunOptions> = {}) =>
  runCommand({ file: '/bin/sh', args: ['-c', command], cwd: '/tmp', env: { PATH: process.env.PATH }, timeoutMs: 10_000, maxOutputBytes: 1024 * 1024, ...extra });

/** Pids a command printed, one per line. */
const pidsIn = (text: string) => text.split('\n').filter((line) => /^\d+$/.test(line)).map(Number);

describe('runCommand', () => {
  test('returns stdout, stderr, the exit code and the duration with every flag false', async () => {
    const result = await sh('echo out; echo err >&2; exit 7');
    expect(result).toMatchObject({
      stdout: 'out\n',
      stderr: 'err\n',
      exitCode: 7,
      signal: null,
      timedOut: false,
      isCanceled: false,
      stdoutTruncated: false,
      stderrTruncated: false,
      stdoutBytes: 4,
      stderrBytes: 4,
    });
    expect(result.durationMs).toBeGreaterThan(0);
  });

  test('reports the signal that ended the command', async () => {
    const result = await sh('kill -TERM $$');
    expect(result.exitCode).toBeNull();
    expect(result.signal).toBe('SIGTERM');
  });

  test('gives a command that reads stdin an immediate end of file', async () => {
    const result = await sh('cat; read line; echo "read=$?"');
    expect(result.stdout).toBe('read=1\n');
    expect(result.timedOut).toBe(false);
  });

  test('kills the whole tree at the timeout and keeps the output so far', async () => {
    // The second sleep leaves the process group (setsid): tree-kill still finds it by its parent.
    // The third is a daemon (subshell exits, setsid): only its environment marker finds it.
    const result = await sh(
      'sleep 100 & echo $!; setsid sleep 103 & echo $!; (setsid sh -c \'echo $$; exec sleep 104\' &); sh -c "sleep 101 & echo \\$!; sleep 102"',
      { timeoutMs: 700 },
    );
    expect(result.timedOut).toBe(true);
    expect(result.isCanceled).toBe(false);
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
    const pids = pidsIn(result.stdout);
    expect(pids).toHaveLength(4);
    // SIGKILL is sent before the result; the kernel may take a moment to end each process.
    for (const pid of pids) expect(await eventually(() => !isAlive(pid), 3000)).toBe(true);
  });

  test('a command stopped at the timeout reports no exit code and SIGKILL, even when its shell exits 0 while its tree is being killed', async () => {
    // The kill takes a `ps` walk (ms): a shell can exit 0 meanwhile, as one whose `wait` saw its
    // job killed first does. `sleep 0.2` against 200 ms ends in that window nearly every time.
    const results = [];
    for (let round = 0; round < 8; round++) results.push(await sh('sleep 0.2', { timeoutMs: 200 }));
    const stopped = results.filter((result) => result.timedOut);
    expect(stopped.length).toBeGreaterThan(0);
    for (const result of stopped) expect(result).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
  });

  test('kills the tree when the signal aborts and sets isCanceled', async () => {
    const controller = new AbortController();
    const marker = `${100 + (process.pid % 1000) / 1000}`;
    const running = sh(`sleep ${marker} & echo $!; wait`, { signal: controller.signal });
    // Abort once the sleep is really running (not on a timer: the machine may be slow).
    expect(await eventually(() => processesMatching(`sleep ${marker}`).length > 0, 5000)).toBe(true);
    controller.abort();
    const result = await running;
    expect(result).toMatchObject({ isCanceled: true, timedOut: false, exitCode: null, signal: 'SIGKILL' });
    const [pid] = pidsIn(result.stdout);
    expect(await eventually(() => !isAlive(pid), 3000)).toBe(true);
  });

  test('ends background jobs when the command itself exits', async () => {
    const result = await sh('sleep 100 >/dev/null 2>&1 & echo $!');
    expect(result.exitCode).toBe(0);
    const [pid] = pidsIn(result.stdout);
    expect(await eventually(() => !isAlive(pid), 3000)).toBe(true);
  });

  test('keeps maxOutputBytes of each stream, its head and its end, counts the rest and says it was cut', async () => {
    const result = await sh('head -c 30000000 /dev/zero | tr "\\0" a; head -c 100 /dev/zero | tr "\\0" b >&2', { maxOutputBytes: 1_000_000 });
    expect(result.exitCode).toBe(0);
    // Its first and last 500,000 bytes, around a marker counting the 29,000,000 left out.
    expect(result.stdout).toBe(`${'a'.repeat(500_000)}\n[… 29000000 bytes cut …]\n${'a'.repeat(500_000)}`);
    expect(result.stdoutBytes).toBe(30_000_000);
    expect(result.stdoutTruncated).toBe(true);
    expect(result.stderr).toBe('b'.repeat(100));
    expect(result.stderrTruncated).toBe(false);
  });

  test('rejects with INTERNAL when the program cannot be started', async () => {
    await expect(runCommand({ file: '/nonexistent/program', args: [], cwd: '/tmp', env: {}, timeoutMs: 1000, maxOutputBytes: 100 })).rejects.toMatchObject({
      code: 'INTERNAL',
    });
  });

  test('rejects with CANCELLED when the signal is aborted before the start', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(sh('true', { signal: controller.signal })).rejects.toMatchObject({ code: 'CANCELLED' });
  });
});
