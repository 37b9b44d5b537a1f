import { fork } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorCodeOf } from '../../../protocol/results';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, untilCallRunning } from '../../helpers/mcp';
import { bin, descendants, eventually, isAlive, spawnBin } from '../../helpers/processes';

type Result = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean; _meta?: Record<string, unknown> };

const call = (client: Client, name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args }) as Promise<Result>;
const workerPid = async (client: Client) => Number((await call(client, 'echo', { text: 'pid?' })).structuredContent!.pid);

/** mcpvisor once its process pool's worker is forked, which takes 20 s to get ready (a large description): the server and its process tree. */
async function startingServer() {
  const config = fixtureConfig({ process: { config: { initDelayMs: 20_000 } }, root: { logLevel: 'debug' } });
  const server = spawnBin('mcpvisor', ['--config', writeConfig(config)]);
  await server.waitForLog((line) => line.msg === 'starting pool');
  const supervisor = server.child.pid!;
  expect(await eventually(() => descendants(supervisor).length > 0)).toBe(true);
  return { server, tree: descendants(supervisor) };
}


describe('shutdown', () => {
  it('leaves no worker or grandchild process after SIGTERM', async () => {
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig())]);
    const { client } = await connectHttp(server.mcpUrl);
    const spawned = await call(client, 'spawn-grandchild');
    expect(spawned.isError).toBeUndefined();
    const grandchildren = spawned.structuredContent!.pids as number[];
    const tree = descendants(server.server.child.pid!);
    expect(grandchildren.every((pid) => pid > 0 && isAlive(pid))).toBe(true);
    expect(tree).toEqual(expect.arrayContaining([spawned.structuredContent!.worker as number]));
    await client.close();
    expect(await server.stop()).toBe(0);
    const all = [...new Set([...tree, ...grandchildren])];
    expect(await eventually(() => all.every((pid) => !isAlive(pid)))).toBe(true);
  });

  it('stops the pools still starting on SIGTERM during the start, and exits 0', async () => {
    // The thread pool is up at once.
    const { server, tree } = await startingServer();
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(server.stderr()).toContain('stopped during the start');
    expect(await eventually(() => tree.every((pid) => !isAlive(pid)))).toBe(true);
  }, 15_000);

  it('ends existing sessions with 404 while draining, so clients re-initialise elsewhere', async () => {
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false }))]);
    const { client, transport } = await connectHttp(server.mcpUrl);
    const pending = call(client, 'sleep', { ms: 800 });
    await untilCallRunning(server);
    server.server.child.kill('SIGTERM');
    await server.server.waitForLog((line) => line.msg === 'shutting down');
    const later = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': transport.sessionId! },
      body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' }),
    });
    expect(later.status).toBe(404);
    expect(textOf(await pending)).toBe('slept 800 ms');
    expect(await server.server.exited).toBe(0);
  });

  it('keeps workers alive when a signal reaches the whole process tree', async () => {
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false }))]);
    const { client } = await connectHttp(server.mcpUrl);
    const pid = await workerPid(client);
    process.kill(pid, 'SIGINT');
    process.kill(pid, 'SIGTERM');
    expect(await workerPid(client)).toBe(pid);
    await client.close();
    expect(await server.stop()).toBe(0);
    expect(await eventually(() => !isAlive(pid))).toBe(true);
  });

  it('answers a call still running when the grace period ends with SHUTTING_DOWN, not as a crash', async () => {
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, root: { http: { shutdownGraceMs: 300 } } }))]);
    const { client } = await connectHttp(server.mcpUrl);
    const pending = call(client, 'sleep', { ms: 4000 });
    await untilCallRunning(server);
    server.server.child.kill('SIGTERM');
    const result = await pending;
    expect([result.isError, errorCodeOf(result)]).toEqual([true, 'SHUTTING_DOWN']);
    expect(await server.server.exited).toBe(0);
  });

  it('lets an in-flight call finish within the grace period on SIGTERM', async () => {
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false }))]);
    const { client } = await connectHttp(server.mcpUrl);
    const pending = call(client, 'sleep', { ms: 1500 });
    await untilCallRunning(server);
    server.server.child.kill('SIGTERM');
    expect(textOf(await pending)).toBe('slept 1500 ms');
    expect(await server.server.exited).toBe(0);
  });

  it.each([
    ['SIGTERM', 'SIGTERM'],
    ['SIGINT', 'SIGINT'],
  ] as const)('keeps draining when %s is followed by %s: the call is answered, the exit is 0', async (first, again) => {
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false }))]);
    const { client } = await connectHttp(server.mcpUrl);
    const pending = call(client, 'sleep', { ms: 1500 });
    await untilCallRunning(server);
    const tree = descendants(server.server.child.pid!);
    server.server.child.kill(first);
    await server.server.waitForLog((line) => line.msg === 'shutting down');
    server.server.child.kill(again);
    await server.server.waitForLog((line) => line.msg === 'already stopping');
    expect(textOf(await pending)).toBe('slept 1500 ms');
    expect(await server.server.exited).toBe(0);
    expect(await eventually(() => tree.every((pid) => !isAlive(pid)))).toBe(true);
  });

  it('stops the start once, and exits 0, when SIGTERM comes twice during the start', async () => {
    const { server, tree } = await startingServer();
    server.child.kill('SIGTERM');
    await server.waitForLog((line) => line.msg === 'stop requested during the start');
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(server.stderr()).toContain('stopped during the start');
    expect(await eventually(() => tree.every((pid) => !isAlive(pid)))).toBe(true);
  }, 15_000);

  it('cuts a drain short when its parent\'s IPC channel closes during it (pm2\'s daemon killed after a SIGTERM)', async () => {
    const config = writeConfig(fixtureConfig({ thread: false, process: { callTimeoutMs: 60_000 }, root: { http: { shutdownGraceMs: 30_000 } } }));
    const child = fork(bin('mcpvisor'), ['--transport', 'http', '--host', '127.0.0.1', '--port', '0', '--config', config], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      expect(await eventually(() => /"msg":"listening"/.test(stderr), 20_000)).toBe(true);
      const url = String(JSON.parse(stderr.split('\n').find((line) => line.includes('"msg":"listening"'))!).url);
      const { client } = await connectHttp(url);
      const running = call(client, 'sleep', { ms: 40_000 }).then(
        (result) => errorCodeOf(result),
        (error: unknown) => `thrown: ${String(error)}`,
      );
      await untilCallRunning({ baseUrl: new URL(url).origin });
      child.kill('SIGTERM');
      expect(await eventually(() => stderr.includes('"msg":"shutting down"'), 10_000)).toBe(true);
      // The 30 s drain would wait for the 40 s call; the channel closing stops the server now.
      child.disconnect();
      expect(await eventually(() => child.exitCode !== null, 10_000)).toBe(true);
      expect(await exited).toBe(0);
      expect(await running).toBe('SHUTTING_DOWN');
      await client.close().catch(() => undefined);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 60_000);
});

