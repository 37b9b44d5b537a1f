import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { connectHttp, startHttp, connectStdio, type HttpServer } from '../../helpers/mcp';
import { eventually, spawnBin, tempCacheEnv } from '../../helpers/processes';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';
import { tempDir } from '../../helpers/temp';

const ROOT = path.join(__dirname, '..', '..', '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'openapi');
const GITHUB = path.join(ROOT, 'node_modules', '@octokit', 'openapi', 'generated');

let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());
const ENV = tempCacheEnv();

describe('openapi-mcp-server over HTTP', () => {
  let server: HttpServer;
  beforeAll(async () => {
    server = await startHttp('openapi-mcp-server', ['--api-base-url', upstream.url, '--openapi-spec', path.join(FIXTURES, 'petstore-3.0.yaml')], ENV);
  });
  afterAll(() => server.stop());

  test('answers 20 concurrent sessions with overlapping JSON-RPC ids, each response to its own caller', async () => {
    const sessions = await Promise.all(Array.from({ length: 20 }, (_, i) => connectHttp(server.mcpUrl, `client-${i}`)));
    try {
      // Every SDK client numbers its requests from 0, so the ids overlap across sessions.
      const rounds = await Promise.all(
        sessions.map(async ({ client }, i) => {
          const answers: string[] = [];
          for (let round = 0; round < 5; round++) {
            const results = await Promise.all(
              [0, 1].map((k) => client.callTool({ name: 'show-pet-by-id', arguments: { petId: `s${i}-r${round}-k${k}` } })),
            );
            for (const [k, result] of results.entries()) {
              const echo = (result.structuredContent as { echo: { url: string } }).echo;
              expect(echo.url).toBe(`/pets/s${i}-r${round}-k${k}`);
              answers.push(echo.url);
            }
          }
          return answers.length;
        }),
      );
      expect(rounds).toEqual(Array(20).fill(10));
    } finally {
      await Promise.all(sessions.map(({ client }) => client.close()));
    }
  });

  test('counts the upstream statuses its calls got in /metrics', async () => {
    const { client } = await connectHttp(server.mcpUrl);
    try {
      await client.callTool({ name: 'show-pet-by-id', arguments: { petId: 'm1' } });
      await client.callTool({ name: 'show-pet-by-id', arguments: { petId: 'm2' } });
      const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
      const count = Number(/^mcpvisor_upstream_responses_total\{pool="api-0",status="200"\} (\d+)$/m.exec(text)?.[1]);
      expect(count).toBeGreaterThanOrEqual(2);
    } finally {
      await client.close();
    }
  });
});

describe("openapi-mcp-server reads the server's MCPVISOR_* variables, as every server command does", () => {
  const TOKEN = 'openapi-token-0123456789';
  const PETSTORE = () => ['--api-base-url', upstream.url, '--openapi-spec', path.join(FIXTURES, 'petstore-3.0.yaml')];

  test('MCPVISOR_AUTH_TOKEN, which its refusal to serve a network address without a token names, guards its endpoint', async () => {
    const refused = spawnBin('openapi-mcp-server', [...PETSTORE(), '--transport', 'http', '--host', '0.0.0.0'], ENV);
    expect(await refused.exited).toBe(2);
    expect(refused.stderr()).toContain('set MCPVISOR_AUTH_TOKEN');
    const server = await startHttp('openapi-mcp-server', PETSTORE(), { ...ENV, MCPVISOR_AUTH_TOKEN: TOKEN });
    try {
      const url = server.mcpUrl;
      const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
      const none = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: init });
      expect(none.status).toBe(401);
      const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
      const client = new Client({ name: 'authorised', version: '1' });
      await client.connect(transport);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('show-pet-by-id');
      await client.close();
    } finally {
      await server.stop();
    }
  });

  test('MCPVISOR_PATH sets its endpoint, and a mistyped MCPVISOR_ variable is refused naming the one meant', async () => {
    const server = await startHttp('openapi-mcp-server', PETSTORE(), { ...ENV, MCPVISOR_PATH: '/api-mcp' });
    try {
      expect(new URL(server.mcpUrl).pathname).toBe('/api-mcp');
    } finally {
      await server.stop();
    }
    const typo = spawnBin('openapi-mcp-server', PETSTORE(), { ...ENV, MCPVISOR_AUTH_TOKN: TOKEN });
    typo.child.stdin!.end();
    expect(await typo.exited).toBe(2);
    expect(typo.stderr()).toContain("unknown environment variable MCPVISOR_AUTH_TOKN (did you mean 'MCPVISOR_AUTH_TOKEN'?)");
  });
});

describe('real descriptions', () => {
  test('GitHub (13 MB, 1,223 operations) and its dereferenced 73 MB variant load and serve', async () => {
    for (const file of ['api.github.com.json', 'api.github.com.deref.json']) {
      const conn = await connectStdio('openapi-mcp-server', ['--api-base-url', `${upstream.url}/gh`, '--openapi-spec', path.join(GITHUB, file)], ENV);
      try {
        const { tools } = await conn.client.listTools();
        expect(tools).toHaveLength(1223 + 3);
        expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
        const result = await conn.client.callTool({ name: 'issues-create', arguments: { owner: 'o', repo: 'r', title: 'T', labels: ['bug'] } });
        const echo = (result.structuredContent as { echo: { url: string; method: string; body: string } }).echo;
        expect(echo).toMatchObject({ method: 'POST', url: '/gh/repos/o/r/issues' });
        expect(JSON.parse(echo.body)).toEqual({ title: 'T', labels: ['bug'] });
      } finally {
        await conn.close();
      }
    }
  });

  test('Swagger 2.0 and OpenAPI 3.1 descriptions serve their parameter styles', async () => {
    const legacy = await connectStdio('openapi-mcp-server', ['--api-base-url', upstream.url, '--openapi-spec', path.join(FIXTURES, 'swagger-2.0.json')], ENV);
    const notes = await connectStdio('openapi-mcp-server', ['--api-base-url', upstream.url, '--openapi-spec', path.join(FIXTURES, 'openapi-3.1.yaml')], ENV);
    try {
      const orders = await legacy.client.callTool({ name: 'get-orders', arguments: { status: ['a', 'b'], 'X-Trace': 't1' } });
      const o = (orders.structuredContent as { echo: { url: string; headers: Record<string, string> } }).echo;
      expect(o.url).toBe('/orders?status=a,b');
      expect(o.headers['x-trace']).toBe('t1');
      const list = await notes.client.callTool({ name: 'lst-notes', arguments: { q: null, labels: ['x', 'y'], session: 'c1' } });
      const n = (list.structuredContent as { echo: { url: string; headers: Record<string, string> } }).echo;
      expect(n.url).toBe('/notes?labels=x,y');
      expect(n.headers.cookie).toBe('session=c1');
    } finally {
      await Promise.all([legacy.close(), notes.close()]);
    }
  });
});

describe('mcpvisor with several APIs', () => {
  test('serves each API in its own pool with its namespace', async () => {
    const dir = tempDir('openapi-multi-');
    const config = path.join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        shell: { enabled: false },
        web: { enabled: false },
        apis: [
          { namespace: 'pets', apiBaseUrl: `${upstream.url}/p`, openApiSpec: path.join(FIXTURES, 'petstore-3.0.yaml'), toolsMode: 'dynamic' },
          { namespace: 'notes', apiBaseUrl: `${upstream.url}/n`, openApiSpec: path.join(FIXTURES, 'openapi-3.1.yaml'), includeTags: ['notes'] },
        ],
      }),
    );
    const conn = await connectStdio('mcpvisor', ['--config', config], ENV);
    try {
      const names = (await conn.client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['pets-list-api-endpoints', 'notes-lst-notes', 'notes-crt-note', 'notes-list-api-endpoints']));
      expect(names.every((n) => n.length <= 64 && /^[a-z0-9-]+$/.test(n))).toBe(true);
      const pet = await conn.client.callTool({ name: 'pets-invoke-api-endpoint', arguments: { toolId: 'GET::pets__---petId', parameters: { petId: '1' } } });
      expect((pet.structuredContent as { echo: { url: string } }).echo.url).toBe('/p/pets/1');
      const note = await conn.client.callTool({ name: 'notes-crt-note', arguments: { title: 'hello' } });
      expect((note.structuredContent as { echo: { url: string } }).echo.url).toBe('/n/notes');
    } finally {
      await conn.close();
    }
  });

  test('an API with affectsHealth: false leaves /health 200 while it has no live worker; by default it turns 503', async () => {
    const dir = tempDir('openapi-health-');
    for (const affectsHealth of [false, undefined]) {
      const config = path.join(dir, `config-${String(affectsHealth)}.json`);
      writeFileSync(
        config,
        JSON.stringify({
          logLevel: 'debug',
          shell: { enabled: false },
          web: { enabled: false },
          // A restart 20 s after a crash: the window this test looks through.
          pools: { restart: { maxRestarts: 5, windowMs: 60_000, backoffBaseMs: 20_000, backoffMaxMs: 20_000 } },
          apis: [
            { namespace: 'pets', apiBaseUrl: `${upstream.url}/p`, openApiSpec: path.join(FIXTURES, 'petstore-3.0.yaml') },
            { namespace: 'notes', apiBaseUrl: `${upstream.url}/n`, openApiSpec: path.join(FIXTURES, 'openapi-3.1.yaml'), ...(affectsHealth === undefined ? {} : { affectsHealth }) },
          ],
        }),
      );
      const server = await startHttp('mcpvisor', ['--config', config], ENV);
      try {
        const health = async () => {
          const res = await fetch(`${server.baseUrl}/health`);
          return { code: res.status, body: (await res.json()) as { status: string; pools: Array<{ name: string; alive: number }> } };
        };
        expect((await health()).code).toBe(200);
        const started = await server.server.waitForLog((line) => line.msg === 'worker started' && line.pool === 'api-notes');
        process.kill(started.pid as number, 'SIGKILL');
        expect(await eventually(async () => (await health()).body.pools.find((pool) => pool.name === 'api-notes')?.alive === 0)).toBe(true);
        const now = await health();
        expect([now.code, now.body.status]).toEqual(affectsHealth === false ? [200, 'ok'] : [503, 'degraded']);
        expect(now.body.pools.find((pool) => pool.name === 'api-pets')?.alive).toBe(1);
      } finally {
        await server.stop();
      }
    }
  }, 30_000);
});

describe('openapi-mcp-server spec cache', () => {
  test('a restart with an unchanged description is a cache hit; --spec-cache off reads and writes nothing', async () => {
    const cache = path.join(tempDir('mcpvisor-cli-cache-'), 'cache');
    const args = ['--api-base-url', upstream.url, '--openapi-spec', path.join(FIXTURES, 'petstore-3.0.yaml'), '--log-level', 'debug'];
    const ready = async (extra: string[]) => {
      const server = await startHttp('openapi-mcp-server', [...args, ...extra], ENV);
      const entry = await server.server.waitForLog((e) => e.msg === 'api tools ready');
      return { server, specCache: entry.specCache, tools: entry.tools };
    };
    try {
      const first = await ready(['--spec-cache', cache]);
      expect(first).toMatchObject({ specCache: 'miss', tools: 8 });
      await first.server.server.waitForLog((e) => e.msg === 'spec cache written');
      await first.server.stop();
      const second = await ready(['--spec-cache', cache]);
      expect(second).toMatchObject({ specCache: 'hit', tools: 8 });
      await second.server.stop();
      const off = await ready(['--spec-cache', 'off']);
      expect(off).toMatchObject({ specCache: 'off', tools: 8 });
      expect(off.server.server.stderr()).not.toContain('spec cache');
      await off.server.stop();
      // One artifact: its index and its data.
      expect(readdirSync(cache).map((name) => path.extname(name)).sort()).toEqual(['.data', '.json']);
    } finally {
      rmSync(path.dirname(cache), { recursive: true, force: true });
    }
  });
});
