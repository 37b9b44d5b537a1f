import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectSse, startHttp, textOf, untilCallRunning, type HttpServer } from '../../helpers/mcp';
import { eventually, tempCacheEnv } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';
import { flakyApi } from '../../helpers/flaky-api';

// What was built and tested on Streamable HTTP first, through the legacy HTTP+SSE transport
// (GET /sse, POST /message/{sessionId}) with the SDK's SSEClientTransport.

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean; _meta?: Record<string, unknown> };

const sessions = async (server: HttpServer) => Number(/^mcpvisor_sessions (\d+)/m.exec(await (await fetch(`${server.baseUrl}/metrics`)).text())?.[1]);

describe('calls over legacy SSE', () => {
  let server: HttpServer;
  beforeAll(async () => {
    const config = fixtureConfig({ thread: false, root: { pools: { cancelGraceMs: 300, progressIntervalMs: 0 }, http: { maxConcurrentCallsPerSession: 2 } } });
    server = await startHttp('mcpvisor', ['--config', writeConfig(config)]);
  });
  afterAll(() => server?.stop());

  it("carries a custom tool's own progress, rising, before its result", async () => {
    const { client } = await connectSse(server.baseUrl);
    try {
      const progress: Progress[] = [];
      const result = (await client.callTool({ name: 'progress', arguments: { count: 4, gapMs: 150 } }, undefined, { onprogress: (update) => progress.push(update) })) as Result;
      expect(textOf(result)).toBe('reported 4');
      expect(progress.length).toBeGreaterThanOrEqual(2);
      expect(progress.at(-1)).toEqual({ progress: 4, total: 4, message: 'item 4 of 4' });
      for (let i = 1; i < progress.length; i++) expect(progress[i].progress).toBeGreaterThan(progress[i - 1].progress);
    } finally {
      await client.close();
    }
  });

  it('stops a call on notifications/cancelled, and one whose client closed its GET /sse stream, releasing the session', async () => {
    const dir = tempDir('legacy-cancel-');
    const { client } = await connectSse(server.baseUrl);
    const controller = new AbortController();
    const cancelled = client.callTool({ name: 'sleep', arguments: { ms: 20_000, marker: path.join(dir, 'cancelled') } }, undefined, { signal: controller.signal });
    await untilCallRunning(server);
    controller.abort(new Error('enough'));
    await expect(cancelled).rejects.toThrow(/enough/);
    expect(await eventually(() => existsSync(path.join(dir, 'cancelled')))).toBe(true);
    expect(readFileSync(path.join(dir, 'cancelled'), 'utf8')).toMatch(/^cancelled:/);

    void client.callTool({ name: 'sleep', arguments: { ms: 20_000, marker: path.join(dir, 'dropped') } }).catch(() => undefined);
    await untilCallRunning(server);
    expect(await sessions(server)).toBe(1);
    await client.close();
    expect(await eventually(() => existsSync(path.join(dir, 'dropped')))).toBe(true);
    expect(await eventually(async () => (await sessions(server)) === 0)).toBe(true);
  });

  it('answers BUSY past http.maxConcurrentCallsPerSession', async () => {
    const { client } = await connectSse(server.baseUrl);
    try {
      const results = (await Promise.all([1, 2, 3].map(() => client.callTool({ name: 'sleep', arguments: { ms: 600 } })))) as Result[];
      expect(results.filter((result) => result.isError).map((result) => (result._meta?.['mcpvisor/error'] as { code: string }).code)).toEqual(['BUSY']);
    } finally {
      await client.close();
    }
  });
});

describe('an optional API left out at the start, over legacy SSE', () => {
  it('is listed once it starts, and the legacy session is told with notifications/tools/list_changed', async () => {
    const api = await flakyApi();
    const config = writeConfig({ shell: { enabled: false }, web: { enabled: false }, apis: [{ apiBaseUrl: api.upstream.url, openApiSpec: api.spec, namespace: 'flaky', affectsHealth: false }] });
    const server = await startHttp('mcpvisor', ['--config', config], tempCacheEnv());
    const { client } = await connectSse(server.baseUrl);
    try {
      expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
      let told!: () => void;
      const changed = new Promise<void>((resolve) => (told = resolve));
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => told());
      expect((await client.listTools()).tools).toEqual([]);
      api.up();
      // The first retry comes 5 s after the start; bounded so that a missing notification fails, not hangs.
      await Promise.race([changed, new Promise((_, reject) => setTimeout(() => reject(new Error('no notifications/tools/list_changed on the legacy stream')), 20_000))]);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('flaky-show-pet-by-id');
    } finally {
      await client.close();
      await server.stop();
      await api.close();
    }
  }, 40_000);
});
