import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorCodeOf } from '../../../protocol/results';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, untilCallRunning } from '../../helpers/mcp';
import { eventually, isAlive } from '../../helpers/processes';

type Result = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean; _meta?: Record<string, unknown> };

const call = (client: Client, name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args }) as Promise<Result>;
const workerPid = async (client: Client) => Number((await call(client, 'echo', { text: 'pid?' })).structuredContent!.pid);

/** Workers asked every 200 ms, killed after 1 s without an answer; restarts after 50 ms. */
const config = () =>
  writeConfig(
    fixtureConfig({
      thread: false,
      root: { pools: { livenessIntervalMs: 200, livenessTimeoutMs: 1000, cancelGraceMs: 300, restart: { maxRestarts: 5, windowMs: 60_000, backoffBaseMs: 50, backoffMaxMs: 500 } } },
    }),
  );

describe('worker liveness (pools.livenessIntervalMs, livenessTimeoutMs)', () => {
  it('kills and replaces a worker that stopped answering: its call answers WORKER_CRASHED saying why, and /health names it', async () => {
    const server = await startHttp('mcpvisor', ['--config', config()]);
    const { client } = await connectHttp(server.mcpUrl);
    const stopped = await workerPid(client);
    try {
      const pending = call(client, 'sleep', { ms: 8000 });
      await untilCallRunning(server);
      await new Promise((resolve) => setTimeout(resolve, 100));
      process.kill(stopped, 'SIGSTOP');
      const result = await pending;
      expect(errorCodeOf(result)).toBe('WORKER_CRASHED');
      expect(textOf(result)).toMatch(/stopped answering for 1000 ms/);
      expect(await eventually(() => !isAlive(stopped))).toBe(true);
      expect(await eventually(async () => textOf(await call(client, 'echo', { text: 'back' })) === 'back')).toBe(true);
      expect(await workerPid(client)).not.toBe(stopped);
      const health = (await (await fetch(`${server.baseUrl}/health`)).json()) as { pools: Array<{ lastError?: string; restarts: number }> };
      expect(health.pools[0]).toMatchObject({ restarts: 1, lastError: expect.stringMatching(/stopped answering \(no reply to a liveness check within 1000 ms\)/) });
    } finally {
      try {
        process.kill(stopped, 'SIGCONT');
      } catch {
        // Killed, as it should be.
      }
      await client.close();
      await server.stop();
    }
  });

  it('keeps a worker whose calls run long but which answers', async () => {
    const server = await startHttp('mcpvisor', ['--config', config()]);
    const { client } = await connectHttp(server.mcpUrl);
    try {
      const before = await workerPid(client);
      expect(textOf(await call(client, 'sleep', { ms: 2500 }))).toBe('slept 2500 ms');
      expect(await workerPid(client)).toBe(before);
    } finally {
      await client.close();
      await server.stop();
    }
  });
});
