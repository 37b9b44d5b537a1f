import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { writeConfig } from '../../helpers/config';
import { connectHttp, connectStdio, startHttp, textOf } from '../../helpers/mcp';
import { tempCacheEnv } from '../../helpers/processes';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';

// An API with affectsHealth: false whose description host is down at the start is left out; it
// comes back by itself once the host answers, and each session is told its tools changed.

const PETSTORE_FILE = path.join(__dirname, '..', '..', 'fixtures', 'openapi', 'petstore-3.0.yaml');
const PETSTORE = readFileSync(PETSTORE_FILE, 'utf8');
const ENV = tempCacheEnv();

let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());

/** A description host on 127.0.0.1 that answers 503 while `down`. */
async function descriptionHost(): Promise<{ url: string; down: boolean; asked: number; close(): Promise<void> }> {
  const host = { url: '', down: true, asked: 0, close: (): Promise<void> => Promise.resolve() };
  const server: Server = createServer((_req, res) => {
    host.asked++;
    if (host.down) return res.writeHead(503).end('down for maintenance');
    res.writeHead(200, { 'content-type': 'application/yaml' }).end(PETSTORE);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/openapi.yaml`;
  host.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return host;
}

describe('an optional API left out at the start', () => {
  it('is started again once its description host answers, its tools listed and the session told with notifications/tools/list_changed', async () => {
    const host = await descriptionHost();
    const config = writeConfig({
      shell: { enabled: false },
      web: { enabled: false },
      apis: [
        { apiBaseUrl: upstream.url, openApiSpec: PETSTORE_FILE, specInputMethod: 'file', namespace: 'steady' },
        { apiBaseUrl: upstream.url, openApiSpec: host.url, namespace: 'flaky', affectsHealth: false },
      ],
    });
    const conn = await connectStdio('mcpvisor', ['--config', config], ENV);
    try {
      expect(conn.client.getServerCapabilities()?.tools?.listChanged).toBe(true);
      let told!: () => void;
      const changed = new Promise<void>((resolve) => (told = resolve));
      conn.client.setNotificationHandler(ToolListChangedNotificationSchema, () => told());
      const before = (await conn.client.listTools()).tools.map((tool) => tool.name);
      expect(before).toContain('steady-show-pet-by-id');
      expect(before.filter((name) => name.startsWith('flaky-'))).toEqual([]);
      expect(conn.stderr()).toContain('api-flaky could not start and is left out (it does not affect health): failed to load the OpenAPI spec from');
      expect(conn.stderr()).toContain('HTTP 503');

      host.down = false;
      // The first retry comes 5 s after the start; bounded so that code without it fails, not hangs.
      await Promise.race([changed, new Promise((_, reject) => setTimeout(() => reject(new Error(`no notifications/tools/list_changed; stderr:\n${conn.stderr().slice(-2000)}`)), 20_000))]);
      const after = (await conn.client.listTools()).tools.map((tool) => tool.name);
      expect(after).toEqual(expect.arrayContaining(['steady-show-pet-by-id', 'flaky-show-pet-by-id']));
      // Listed after the tools that were there, which keep their places.
      expect(after.slice(0, before.length)).toEqual(before);
      expect(textOf(await conn.client.callTool({ name: 'flaky-show-pet-by-id', arguments: { petId: '42' } }))).toContain('/pets/42');
      expect(conn.stderr()).toContain('api-flaky started after being left out; its tools are listed now');
    } finally {
      await conn.close();
      await host.close();
    }
  }, 40_000);

  it('tells Streamable HTTP sessions on their GET stream, and /health shows the pool failed with why, then ready', async () => {
    const host = await descriptionHost();
    const config = writeConfig({ shell: { enabled: false }, web: { enabled: false }, apis: [{ apiBaseUrl: upstream.url, openApiSpec: host.url, namespace: 'flaky', affectsHealth: false }] });
    const server = await startHttp('mcpvisor', ['--config', config], ENV);
    const { client } = await connectHttp(server.mcpUrl);
    try {
      const pool = async () => ((await (await fetch(`${server.baseUrl}/health`)).json()) as { status: string; pools: Array<{ name: string; state: string; lastError?: string }> });
      const down = await pool();
      expect(down.status).toBe('ok');
      expect(down.pools).toEqual([expect.objectContaining({ name: 'api-flaky', state: 'failed', lastError: expect.stringContaining(`failed to load the OpenAPI spec from ${host.url}: HTTP 503`) })]);
      let told!: () => void;
      const changed = new Promise<void>((resolve) => (told = resolve));
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => told());
      expect((await client.listTools()).tools).toEqual([]);
      host.down = false;
      await Promise.race([changed, new Promise((_, reject) => setTimeout(() => reject(new Error(`no notifications/tools/list_changed; stderr:\n${server.server.stderr().slice(-2000)}`)), 20_000))]);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('flaky-show-pet-by-id');
      expect((await pool()).pools).toEqual([expect.objectContaining({ name: 'api-flaky', state: 'ready' })]);
    } finally {
      await client.close();
      await server.stop();
      await host.close();
    }
  }, 40_000);
});
