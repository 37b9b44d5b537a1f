import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { setTimeout as delay } from 'node:timers/promises';
import { errorCodeOf } from '../../../protocol/results';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, untilCallRunning, type HttpServer } from '../../helpers/mcp';
import { eventually, isAlive } from '../../helpers/processes';

/**
 * A cancelled call keeps its worker slot until the worker confirms it stopped; past
 * `pools.cancelGraceMs` the worker is killed. An answer already sent can still be crossing the
 * IPC channel behind other large answers when the grace ends: that worker did nothing wrong.
 */

const MIB = 1024 * 1024;
type Result = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean; _meta?: Record<string, unknown> };
const call = (client: Client, name: string, args: Record<string, unknown>, signal?: AbortSignal) =>
  client.callTool({ name, arguments: args }, undefined, { signal }) as Promise<Result>;
const workerPid = async (client: Client) => Number((await call(client, 'echo', { text: 'pid?' })).structuredContent!.pid);
const killWarnings = (server: HttpServer) => server.server.stderr().split('\n').filter((line) => line.includes('ignored a cancel'));

describe('a cancel that meets answers already on their way', () => {
  let server: HttpServer;
  let client: Client;

  beforeAll(async () => {
    // A short grace, and answers of 16 MiB (over pools.maxResultBytes' default, raised here).
    const config = fixtureConfig({ thread: false, process: { concurrency: 8, callTimeoutMs: 10_000 }, root: { pools: { cancelGraceMs: 100, maxResultBytes: 32 * MIB } } });
    server = await startHttp('mcpvisor', ['--config', writeConfig(config)]);
    ({ client } = await connectHttp(server.mcpUrl));
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
  });

  it('keeps a worker whose answers to the cancelled calls are still crossing the IPC channel', async () => {
    const pid = await workerPid(client);
    // Eight answers of 16 MiB at once: the worker writes them at once, the supervisor takes
    // longer than the grace to read them all. The cancels reach a worker that has answered.
    const controllers = Array.from({ length: 8 }, () => new AbortController());
    const calls = controllers.map((controller) => call(client, 'sleep', { ms: 0, pad: 16 * MIB }, controller.signal).then(() => 'answered', () => 'cancelled'));
    await delay(60);
    for (const controller of controllers) controller.abort('the user pressed stop');
    expect(await Promise.all(calls)).toContain('cancelled');
    // Each cancelled call's slot is free once its answer arrived; the worker was never killed.
    expect(await eventually(async () => ((await (await fetch(`${server.baseUrl}/health`)).json()) as { inFlightCalls: number }).inFlightCalls === 0)).toBe(true);
    expect(killWarnings(server)).toEqual([]);
    expect(await workerPid(client)).toBe(pid);
    const health = await fetch(`${server.baseUrl}/health`);
    expect(health.status === 200 ? 200 : await health.text()).toBe(200);
  });

  it('still kills a worker whose event loop runs but whose call ignores the cancel', async () => {
    const pid = await workerPid(client);
    const warned = killWarnings(server).length;
    const controller = new AbortController();
    const pending = call(client, 'ignore-cancel', { ms: 60_000, async: true }, controller.signal).then(
      (result) => errorCodeOf(result),
      () => 'cancelled',
    );
    await untilCallRunning(server);
    controller.abort('the user pressed stop');
    expect(await pending).toBe('cancelled');
    // The worker answers the sign-of-life question, and the call is still not stopped.
    expect(await eventually(() => !isAlive(pid))).toBe(true);
    expect(killWarnings(server)).toHaveLength(warned + 1);
    expect(await workerPid(client)).not.toBe(pid);
  });
});
