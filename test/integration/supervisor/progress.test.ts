import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, connectStdio, startHttp, textOf, type HttpServer, type StdioConnection } from '../../helpers/mcp';

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean };

/** Progress every 200 ms: a client whose timeout (700 ms) restarts at each one waits out a 1.5 s call. */
const config = () =>
  writeConfig(
    fixtureConfig({ thread: false, root: { pools: { cancelGraceMs: 300, progressIntervalMs: 200, restart: { maxRestarts: 3, windowMs: 60000, backoffBaseMs: 50, backoffMaxMs: 2000 } } } }),
    'progress.json',
  );

async function longCall(client: Client, meta: Record<string, unknown> = {}): Promise<{ result: Result; progress: Progress[] }> {
  const progress: Progress[] = [];
  const result = (await client.callTool({ name: 'sleep', arguments: { ms: 1500 }, ...meta }, undefined, {
    onprogress: (update) => progress.push(update),
    resetTimeoutOnProgress: true,
    timeout: 700,
  })) as Result;
  return { result, progress };
}

function expectKeptAlive({ result, progress }: { result: Result; progress: Progress[] }): void {
  expect(result.isError).toBeUndefined();
  expect(textOf(result)).toMatch(/slept/);
  expect(progress.length).toBeGreaterThanOrEqual(2);
  // Seconds so far, rising with each notification as MCP requires (whole seconds repeated
  // under this 200 ms interval: 0, 0, 1, 1…), and said in words.
  for (let i = 1; i < progress.length; i++) expect(progress[i].progress).toBeGreaterThan(progress[i - 1].progress);
  expect(progress[0].progress).toBeGreaterThan(0);
  expect(progress[0].message).toMatch(/^sleep: still running after \d+ s$/);
}

describe('progress notifications for a call given a progress token', () => {
  let server: HttpServer;
  let stdio: StdioConnection;
  beforeAll(async () => {
    const file = config();
    server = await startHttp('mcpvisor', ['--config', file]);
    stdio = await connectStdio('mcpvisor', ['--config', file]);
  });
  afterAll(async () => {
    await stdio?.close();
    await server?.stop();
  });

  test('keep a client that resets its timeout on progress waiting for a long call, over Streamable HTTP', async () => {
    const { client } = await connectHttp(server.mcpUrl);
    try {
      expectKeptAlive(await longCall(client));
      // With another _meta field the call takes the SDK's path: the same notifications.
      expectKeptAlive(await longCall(client, { _meta: { note: 'x' } }));
    } finally {
      await client.close();
    }
  });

  test('and over stdio', async () => {
    expectKeptAlive(await longCall(stdio.client));
  });
});
