import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { errorCodeOf } from '../../../protocol/results';
import { writeConfig } from '../../helpers/config';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { eventually } from '../../helpers/processes';
import { call, peakRssBytes, processesMatching, shellWorkerPids } from './helpers';

/** Each test marks its sleeps with its own number so leftovers are attributable. */
describe.each([
  ['off', 'false', 4100],
  ['on', 'true', 4200],
])('commands through shell-mcp-server with sandbox mode %s', (_mode, SANDBOX_MODE, mark) => {
  let ws: string;
  let server: StdioConnection;

  beforeAll(async () => {
    ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'shell-cmd-')));
    server = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE, SHELL_WORKSPACE: ws, COMMAND_TIMEOUT: '3000' });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(ws, { recursive: true, force: true });
  });

  test('the timeout kills the whole tree, daemons included, and returns the output so far', async () => {
    const command = `echo before; (setsid sleep ${mark + 1} >/dev/null 2>&1 &); sh -c 'sleep ${mark + 2} & sleep ${mark + 3}'`;
    const result = await call(server, 'exec', { command });
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('TIMEOUT');
    expect(result.structuredContent).toMatchObject({ timedOut: true, isCanceled: false, exitCode: null, signal: 'SIGKILL', stdout: 'before\n' });
    expect(textOf(result)).toMatch(/^killed by SIGKILL after/);
    expect(textOf(result)).toContain('timed out after 3000 ms');
    for (const n of [1, 2, 3]) expect(await eventually(() => processesMatching(`sleep ${mark + n}`).length === 0, 3000)).toBe(true);
  });

  test('a command that ends by itself while the timeout kills it still reports SIGKILL, never a timed-out exit code', async () => {
    // `sleep 3` against the 3000 ms limit nearly always ends during the kill's `ps` walk.
    const result = await call(server, 'exec', { command: 'sleep 3' });
    const { timedOut, exitCode, signal } = result.structuredContent!;
    expect({ exitCode, signal }).toEqual(timedOut ? { exitCode: null, signal: 'SIGKILL' } : { exitCode: 0, signal: null });
  });

  test('refuses a command over 128 KiB of UTF-8 with a clear error, however few its characters', async () => {
    const result = await call(server, 'exec', { command: `echo ${'\u20ac'.repeat(50_000)}` });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^BAD_INPUT: command is 150005 bytes of UTF-8, over the limit of 131071/);
    expect(textOf(await call(server, 'exec', { command: `echo ${'\u20ac'.repeat(1000)} | wc -c` }))).toContain('3001');
  });

  test('a command that reads stdin gets end of file at once', async () => {
    const result = await call(server, 'exec', { command: 'cat; echo "cat exited $?"' });
    expect(result.structuredContent).toMatchObject({ stdout: 'cat exited 0\n', timedOut: false });
  });

  test('a command sees no positional arguments, as under a plain sh -c, cold or started ahead', async () => {
    // Two in a row: the first may take the process started ahead, the second one started for it.
    for (let i = 0; i < 2; i++) {
      const result = await call(server, 'exec', { command: 'echo "$#[$1]"' });
      expect(result.structuredContent).toMatchObject({ stdout: '0[]\n', exitCode: 0 });
    }
  });

  test('cancellation from the client kills the command tree', async () => {
    const controller = new AbortController();
    const running = call(server, 'exec', { command: `sleep ${mark + 4} & sleep ${mark + 5}` }, { signal: controller.signal }).catch((error: Error) => error);
    expect(await eventually(() => processesMatching(`sleep ${mark + 5}`).length > 0, 5000)).toBe(true);
    controller.abort();
    expect(await running).toBeInstanceOf(Error);
    for (const n of [4, 5]) expect(await eventually(() => processesMatching(`sleep ${mark + n}`).length === 0, 3000)).toBe(true);
  });

  test('200 MB of output is cut at 10 MB per stream while the worker stays small', async () => {
    const result = await call(server, 'exec', { command: "head -c 200000000 /dev/zero | tr '\\0' a" }, { timeout: 30_000 });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ exitCode: 0, stdoutTruncated: true, stdoutBytes: 200_000_000, stderrTruncated: false });
    // The reply fits the SDK's 10 MiB stdio message limit: head and tail of the kept 10 MiB,
    // within the 2 MiB reply budget (workers/shell/reply-budget.ts).
    const stdout = result.structuredContent!.stdout as string;
    expect(stdout.length).toBeGreaterThan(1024 * 1024 * 1.5);
    expect(stdout.length).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(stdout).toMatch(/^a+\n\[… \d+ (bytes|characters) cut[^\]]*\]\na+$/);
    expect(textOf(result)).toContain('[stdout cut: 200000000 bytes were written in all, more than fit');
    const workers = shellWorkerPids(server.pid()!);
    expect(workers.length).toBeGreaterThan(0);
    // Node's baseline (~50 MB) plus the kept head and tail and the reply's IPC copies; the
    // issue's bound for the pool worker is 100 MB.
    for (const pid of workers) expect(peakRssBytes(pid)).toBeLessThan(100 * 1024 * 1024);
  });
});

describe('a command that kills its own shell pool worker', () => {
  let ws: string;
  let server: StdioConnection;

  beforeAll(async () => {
    ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'shell-crash-')));
    server = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE: 'false', SHELL_WORKSPACE: ws });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(ws, { recursive: true, force: true });
  });

  test('fails with WORKER_CRASHED, and the next call works', async () => {
    const before = shellWorkerPids(server.pid()!);
    const crashed = await call(server, 'exec', { command: 'kill -9 $PPID; sleep 5' });
    expect(crashed.isError).toBe(true);
    expect(errorCodeOf(crashed)).toBe('WORKER_CRASHED');
    let next: Awaited<ReturnType<typeof call>> | undefined;
    const recovered = await eventually(async () => {
      next = await call(server, 'exec', { command: 'echo alive' });
      return next.structuredContent?.stdout === 'alive\n';
    }, 15_000);
    expect(recovered).toBe(true);
    expect(await eventually(() => shellWorkerPids(server.pid()!).some((pid) => !before.includes(pid)), 10_000)).toBe(true);
  });

  test('the commands of a SIGKILLed worker die with it, background jobs included, long before their timeout', async () => {
    const running = [1, 2, 3].map((n) => call(server, 'exec', { command: `sleep 430${n} & sleep 431${n}` }));
    expect(await eventually(() => [1, 2, 3].every((n) => processesMatching(`sleep 431${n}`).length > 0), 5000)).toBe(true);
    for (const pid of shellWorkerPids(server.pid()!)) process.kill(pid, 'SIGKILL');
    for (const result of await Promise.all(running)) expect(errorCodeOf(result)).toBe('WORKER_CRASHED');
    // The default timeout is 30 s: these must end because their worker did, not because of it.
    for (const n of [1, 2, 3]) {
      expect(await eventually(() => processesMatching(`sleep 430${n}`).length + processesMatching(`sleep 431${n}`).length === 0, 3000)).toBe(true);
    }
  });
});

describe('a command line of 50,000 piped commands, within the length limit', () => {
  let ws: string;
  let server: StdioConnection;

  beforeAll(async () => {
    ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'shell-pipes-')));
    // One worker, found stuck after 2 s: reading the command must not hold it that long.
    const config = writeConfig({ pools: { livenessIntervalMs: 500, livenessTimeoutMs: 2000 }, shell: { workers: 1 } });
    server = await connectStdio('shell-mcp-server', ['--config', config], { SANDBOX_MODE: 'false', SHELL_WORKSPACE: ws });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(ws, { recursive: true, force: true });
  });

  test('is checked for blocked patterns and run without stalling its worker, which serves the next call', async () => {
    const before = shellWorkerPids(server.pid()!);
    // Never run (`if false`), so no 50,000 processes start; the check reads it all the same.
    const command = `if false; then ${':|'.repeat(49_980)}:; fi; echo end`;
    expect(command.length).toBeLessThanOrEqual(100_000);
    const result = await call(server, 'exec', { command }, { timeout: 60_000 });
    expect(errorCodeOf(result)).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ stdout: 'end\n', exitCode: 0 });
    expect(textOf(await call(server, 'exec', { command: 'echo next' }))).toContain('next');
    expect(shellWorkerPids(server.pid()!)).toEqual(before);
  });
});
