import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually } from '../../helpers/processes';
import { processesMatching } from './helpers';
import { startShellWorker, type ShellWorker } from './worker-harness';

/** The built worker module driven directly over IPC, as the process pool drives it. */
describe('the shell pool worker', () => {
  let ws: string;
  let worker: ShellWorker | undefined;
  beforeAll(() => {
    ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'shell-worker-')));
  });
  afterEach(async () => worker?.stop());
  afterAll(() => rmSync(ws, { recursive: true, force: true }));

  test('fails to start, with a reason naming the setting, when the workspace does not exist', async () => {
    await expect(startShellWorker({ sandbox: false, workspace: path.join(ws, 'missing') })).rejects.toThrow(
      `BAD_INPUT: the shell workspace ${path.join(ws, 'missing')} does not exist (SHELL_WORKSPACE / shell.workspace)`,
    );
  });

  test('announces the seven tools and reports its counters in stats', async () => {
    worker = await startShellWorker({ sandbox: false, workspace: ws, commandTimeoutMs: 500 });
    expect(worker.tools.map((tool) => tool.name)).toEqual(['exec', 'readFile', 'writeFile', 'deleteFile', 'listDir', 'getSystemInfo', 'listProcesses']);
    await worker.call('exec', { command: 'true' });
    await worker.call('exec', { command: 'mkfs.ext4 /dev/sda' });
    await worker.call('exec', { command: 'sleep 5' });
    const stats = await worker.rpc.stats();
    expect(stats).toMatchObject({ commands: 2, running: 0, timedOut: 1, canceled: 0, blocked: 1, sandbox: false, inFlight: 0 });
    // The command's length, not its text (which may hold a secret) unless logCommands.
    expect(worker.logs).toContainEqual({ level: 'warn', msg: 'blocked command refused', fields: { pattern: 'mkfs', commandChars: 18 } });
  });

  test('answers the timeout itself, before a longer call deadline, with the output so far', async () => {
    worker = await startShellWorker({ sandbox: false, workspace: ws, commandTimeoutMs: 300 });
    const result = await worker.call('exec', { command: 'echo partial; sleep 5' }, { deadlineMs: 5000 });
    expect(result.structuredContent).toMatchObject({ timedOut: true, stdout: 'partial\n' });
  });

  test('kills the commands still running when it is told to shut down', async () => {
    worker = await startShellWorker({ sandbox: false, workspace: ws });
    const running = worker.call('exec', { command: '(setsid sleep 4401 &); sleep 4402' });
    expect(await eventually(() => processesMatching('sleep 4402').length > 0 && processesMatching('sleep 4401').length > 0, 5000)).toBe(true);
    await worker.stop();
    expect((await running).isError).toBe(true);
    for (const marker of ['sleep 4401', 'sleep 4402']) expect(await eventually(() => processesMatching(marker).length === 0, 3000)).toBe(true);
  });

  test('never runs a helper planted in the workspace, even with an empty PATH entry', async () => {
    // The workspace is the worker's start directory (no shell.workspace, as shell-mcp-server runs
    // without SHELL_WORKSPACE), and PATH begins with an empty entry: the current directory.
    const root = path.join(ws, 'path-hijack');
    const home = path.join(root, 'ws');
    mkdirSync(home, { recursive: true });
    const marker = path.join(root, 'helper-ran-unconfined');
    // What a sandboxed command can write there: helpers that log and then do their job.
    for (const helper of ['mkfifo', 'ps']) {
      writeFileSync(path.join(home, helper), `#!/bin/sh\necho ${helper} >> ${marker}\nexec /usr/bin/${helper} "$@"\n`);
      chmodSync(path.join(home, helper), 0o755);
    }
    worker = await startShellWorker({ sandbox: true }, { cwd: home, env: { ...process.env, PATH: `:${process.env.PATH}` } });
    expect((await worker.call('exec', { command: 'pwd' })).structuredContent).toMatchObject({ stdout: `${home}\n`, exitCode: 0 });
    // Each command takes two of the worker's 64 FIFOs; a new batch (mkfifo) is made below 40.
    for (let i = 0; i < 40 && !existsSync(marker); i++) expect((await worker.call('exec', { command: 'true' })).structuredContent).toMatchObject({ exitCode: 0 });
    // A cancelled command's tree is found with ps.
    const controller = new AbortController();
    const cancelled = worker.call('exec', { command: 'sleep 4403' }, { signal: controller.signal });
    expect(await eventually(() => processesMatching('sleep 4403').length > 0, 5000)).toBe(true);
    controller.abort();
    expect((await cancelled).isError).toBe(true);
    expect(await eventually(() => processesMatching('sleep 4403').length === 0, 3000)).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });
});
