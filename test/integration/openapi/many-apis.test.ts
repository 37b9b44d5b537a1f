import { readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { connectHttp, startHttp, textOf } from '../../helpers/mcp';
import { writeConfig } from '../../helpers/config';
import { eventually, spawnBin, tempCacheEnv } from '../../helpers/processes';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';

const FIXTURES = path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'openapi');
const PETSTORE = path.join(FIXTURES, 'petstore-3.0.yaml');
const GITHUB = path.join(__dirname, '..', '..', '..', 'node_modules', '@octokit', 'openapi', 'generated', 'api.github.com.json');
const ENV = tempCacheEnv();

/** Bytes a process has read through read(2) and the like, from /proc/<pid>/io. */
function bytesRead(pid: number): number {
  return Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))![1]);
}

/** A process's resident and peak resident memory, MB (VmRSS, VmHWM). */
function residentMb(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)![1]);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

/** Serves the Petstore description at /openapi.yaml once `release()` is called; until then it holds the request. */
async function heldDescription(): Promise<{ url: string; release(): void; close(): Promise<void> }> {
  const held: ServerResponse[] = [];
  let released = false;
  const answer = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/yaml' }).end(readFileSync(PETSTORE));
  const server: Server = createServer((_req, res) => (released ? answer(res) : held.push(res)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/openapi.yaml`,
    release() {
      released = true;
      for (const res of held.splice(0)) answer(res);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const base = { shell: { enabled: false }, web: { enabled: false }, pools: { livenessIntervalMs: 0 } };

describe('mcpvisor with many APIs', () => {
  let upstreamA: Upstream;
  let upstreamB: Upstream;
  beforeAll(async () => {
    upstreamA = await startUpstream();
    upstreamB = await startUpstream();
  });
  afterAll(async () => {
    await upstreamA.close();
    await upstreamB.close();
  });

  test('an API worker loads its call modules only once the whole server has started, and a replacement loads them too', async () => {
    const description = await heldDescription();
    const config = writeConfig({
      ...base,
      logLevel: 'debug',
      apis: [
        { namespace: 'fast', apiBaseUrl: upstreamA.url, openApiSpec: PETSTORE },
        { namespace: 'slow', apiBaseUrl: upstreamB.url, openApiSpec: description.url },
      ],
    });
    const server = spawnBin('mcpvisor', ['--config', config, '--transport', 'http', '--host', '127.0.0.1', '--port', '0'], ENV);
    try {
      const ready = await server.waitForLog((line) => line.msg === 'api tools ready' && line.pool === 'api-fast');
      const pid = ready.pid as number;
      const before = bytesRead(pid);
      // The other API is still loading: before, this worker read its ~2 MB bundle of call modules
      // 300 ms after its own ready, on the cores the other workers were starting on.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(bytesRead(pid) - before).toBeLessThan(1_000_000);
      expect(server.stderr()).not.toContain('"msg":"listening"');
      description.release();
      await server.waitForLog((line) => line.msg === 'listening');
      await server.waitForLog((line) => line.msg === 'warmed up' && line.pool === 'api-fast');
      await server.waitForLog((line) => line.msg === 'warmed up' && line.pool === 'api-slow');
      expect(bytesRead(pid) - before).toBeGreaterThan(1_000_000);
      // One pool after another, after the start.
      const order = server
        .stderr()
        .split('\n')
        .flatMap((line) => (/"msg":"(listening|warmed up)"/.test(line) ? [JSON.parse(line) as { msg: string; pool?: string }] : []))
        .map((line) => line.pool ?? line.msg);
      expect(order).toEqual(['listening', 'api-fast', 'api-slow']);

      // A replacement worker warms up as soon as it is ready.
      process.kill(pid, 'SIGKILL');
      const replacement = await server.waitForLog((line) => line.msg === 'api tools ready' && line.pool === 'api-fast' && line.pid !== pid);
      await server.waitForLog((line) => line.msg === 'warmed up' && line.pool === 'api-fast' && line.pid === replacement.pid);
    } finally {
      await server.stop();
      await description.close();
    }
  }, 60_000);

  test('an API with affectsHealth: false whose description cannot be loaded is left out; the others are served and /health names it', async () => {
    const config = writeConfig({
      ...base,
      apis: [
        { namespace: 'a', apiBaseUrl: upstreamA.url, openApiSpec: PETSTORE },
        { namespace: 'gone', apiBaseUrl: upstreamA.url, openApiSpec: '/no/such/openapi.yaml', specInputMethod: 'file', affectsHealth: false },
        { namespace: 'down', apiBaseUrl: upstreamA.url, openApiSpec: 'http://127.0.0.1:9/openapi.json', affectsHealth: false },
        { namespace: 'b', apiBaseUrl: upstreamB.url, openApiSpec: PETSTORE },
      ],
    });
    const server = await startHttp('mcpvisor', ['--config', config], ENV);
    try {
      const health = await fetch(`${server.baseUrl}/health`);
      const body = (await health.json()) as { status: string; pools: Array<{ name: string; state: string; lastError?: string }> };
      expect([health.status, body.status]).toEqual([200, 'ok']);
      expect(body.pools.map((pool) => [pool.name, pool.state])).toEqual([
        ['api-a', 'ready'],
        ['api-gone', 'failed'],
        ['api-down', 'failed'],
        ['api-b', 'ready'],
      ]);
      expect(body.pools.find((pool) => pool.name === 'api-gone')?.lastError).toBe('OpenAPI spec file not found: /no/such/openapi.yaml');
      expect(body.pools.find((pool) => pool.name === 'api-down')?.lastError).toContain('failed to load the OpenAPI spec from http://127.0.0.1:9/openapi.json');
      const log = await server.server.waitForLog((line) => typeof line.msg === 'string' && line.msg.startsWith('api-gone could not start'));
      expect(log).toMatchObject({ level: 50, pool: 'api-gone', code: 'NOT_FOUND' });

      const { client } = await connectHttp(server.mcpUrl);
      try {
        const names = (await client.listTools()).tools.map((tool) => tool.name);
        expect(names.filter((name) => name.startsWith('a-'))).toHaveLength(8);
        expect(names.filter((name) => name.startsWith('b-'))).toHaveLength(8);
        expect(names.some((name) => name.startsWith('gone-') || name.startsWith('down-'))).toBe(false);
        const result = await client.callTool({ name: 'b-show-pet-by-id', arguments: { petId: '7' } });
        expect(textOf(result)).toContain('/pets/7');
      } finally {
        await client.close();
      }
    } finally {
      await server.stop();
    }
  }, 30_000);

  test('APIs that affect health and cannot start stop the start, each named with its place in the configuration', async () => {
    const config = writeConfig({
      ...base,
      apis: [
        { namespace: 'a', apiBaseUrl: upstreamA.url, openApiSpec: PETSTORE },
        { namespace: 'gone', apiBaseUrl: upstreamA.url, openApiSpec: '/no/such/openapi.yaml', specInputMethod: 'file' },
        { namespace: 'down', apiBaseUrl: upstreamA.url, openApiSpec: 'http://127.0.0.1:9/openapi.json' },
      ],
    });
    const server = spawnBin('mcpvisor', ['--config', config], ENV);
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toContain(
      'mcpvisor: failed to start: api-gone (apis[1]): OpenAPI spec file not found: /no/such/openapi.yaml; 1 more could not start either: api-down (apis[2]): failed to load the OpenAPI spec from http://127.0.0.1:9/openapi.json',
    );
  }, 30_000);

  test("each API's headers go to its own upstream only, and a crash loop in one API leaves the other's worker and calls alone", async () => {
    const config = writeConfig({
      ...base,
      pools: { livenessIntervalMs: 0, restart: { maxRestarts: 2, windowMs: 60_000, backoffBaseMs: 20, backoffMaxMs: 200 } },
      apis: [
        { namespace: 'a', apiBaseUrl: upstreamA.url, openApiSpec: PETSTORE, headers: { 'X-Api-A': 'secret-a', Authorization: 'Bearer token-a' }, requestTimeoutMs: 5000 },
        { namespace: 'b', apiBaseUrl: upstreamB.url, openApiSpec: PETSTORE, headers: { 'X-Api-B': 'secret-b' }, affectsHealth: false },
      ],
    });
    const server = await startHttp('mcpvisor', ['--config', config, '--log-level', 'debug'], ENV);
    const { client } = await connectHttp(server.mcpUrl);
    try {
      await client.callTool({ name: 'a-show-pet-by-id', arguments: { petId: '1' } });
      await client.callTool({ name: 'b-show-pet-by-id', arguments: { petId: '2' } });
      const seenA = upstreamA.requests.filter((r) => r.url === '/pets/1');
      const seenB = upstreamB.requests.filter((r) => r.url === '/pets/2');
      expect(seenA).toHaveLength(1);
      expect(seenB).toHaveLength(1);
      expect(seenA[0].headers).toMatchObject({ 'x-api-a': 'secret-a', authorization: 'Bearer token-a' });
      expect(seenA[0].headers['x-api-b']).toBeUndefined();
      expect(seenB[0].headers).toMatchObject({ 'x-api-b': 'secret-b' });
      expect(seenB[0].headers['x-api-a']).toBeUndefined();
      expect(seenB[0].headers.authorization).toBeUndefined();
      expect(upstreamA.requests.some((r) => r.headers['x-api-b'] !== undefined)).toBe(false);
      expect(upstreamB.requests.some((r) => r.headers['x-api-a'] !== undefined || r.headers.authorization !== undefined)).toBe(false);

      // B's worker killed each time it comes back, past its restart intensity.
      const workerA = (await server.server.waitForLog((line) => line.msg === 'worker started' && line.pool === 'api-a')).pid as number;
      const killed = new Set<number>();
      for (let i = 0; i < 4; i++) {
        const worker = await server.server.waitForLog((line) => line.msg === 'worker ready' && line.pool === 'api-b' && !killed.has(line.pid as number));
        killed.add(worker.pid as number);
        process.kill(worker.pid as number, 'SIGKILL');
        const a = await client.callTool({ name: 'a-show-pet-by-id', arguments: { petId: `during-${i}` } });
        expect(a.isError).toBeFalsy();
      }
      const pools = async () => ((await (await fetch(`${server.baseUrl}/health`)).json()) as { status: string; pools: Array<{ name: string; state: string; restarts: number; alive: number }> });
      expect(await eventually(async () => (await pools()).pools.find((pool) => pool.name === 'api-b')?.state === 'degraded')).toBe(true);
      const health = await pools();
      expect(health.status).toBe('ok');
      expect(health.pools.find((pool) => pool.name === 'api-a')).toMatchObject({ state: 'ready', restarts: 0, alive: 1 });
      expect(server.server.stderr()).not.toMatch(/"pool":"api-a"[^\n]*"msg":"worker exited/);
      // A's one worker served every call: the same process as at the start.
      expect(process.kill(workerA, 0)).toBe(true);
      expect(upstreamA.requests.filter((r) => r.url.startsWith('/pets/during-'))).toHaveLength(4);
    } finally {
      await client.close();
      await server.stop();
    }
  }, 60_000);

  test('each API keeps its own request timeout and worker count', async () => {
    const config = writeConfig({
      ...base,
      apis: [
        { namespace: 'a', apiBaseUrl: upstreamA.url, openApiSpec: PETSTORE, requestTimeoutMs: 300, workers: 2 },
        { namespace: 'b', apiBaseUrl: upstreamA.url, openApiSpec: PETSTORE, requestTimeoutMs: 1500 },
      ],
    });
    const server = await startHttp('mcpvisor', ['--config', config], ENV);
    const { client } = await connectHttp(server.mcpUrl);
    try {
      // The upstream never answers a path holding `/hang`.
      const [a, b] = await Promise.all(['a', 'b'].map((api) => client.callTool({ name: `${api}-show-pet-by-id`, arguments: { petId: 'hang' } })));
      expect(textOf(a)).toContain('the upstream request timed out after 300 ms (GET');
      expect(textOf(b)).toContain('the upstream request timed out after 1500 ms (GET');
      const health = (await (await fetch(`${server.baseUrl}/health`)).json()) as { pools: Array<{ name: string; workers: number; alive: number }> };
      expect(health.pools.map((pool) => [pool.name, pool.workers, pool.alive])).toEqual([
        ['api-a', 2, 2],
        ['api-b', 1, 1],
      ]);
    } finally {
      await client.close();
      await server.stop();
    }
  }, 30_000);

  test('at most max(4, cores) APIs start at once, the others in turn: a description held loading holds a place, not every API', async () => {
    const atOnce = Math.max(4, availableParallelism());
    const requests: ServerResponse[] = [];
    let released = false;
    const answer = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/yaml' }).end(readFileSync(PETSTORE));
    const descriptions = createServer((_req, res) => (released ? answer(res) : requests.push(res)));
    await new Promise<void>((resolve) => descriptions.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(descriptions.address() as AddressInfo).port}`;
    const config = writeConfig({ ...base, apis: Array.from({ length: atOnce + 2 }, (_, i) => ({ namespace: `api${i}`, apiBaseUrl: upstreamA.url, openApiSpec: `${url}/${i}.yaml` })) });
    const server = spawnBin('mcpvisor', ['--config', config, '--transport', 'http', '--host', '127.0.0.1', '--port', '0'], ENV);
    try {
      expect(await eventually(() => requests.length >= atOnce, 30_000)).toBe(true);
      // Before, every API's worker asked for its description at once.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect(requests.length).toBe(atOnce);
      released = true;
      for (const res of requests.splice(0)) answer(res);
      const listening = await server.waitForLog((line) => line.msg === 'listening', 30_000);
      const { client } = await connectHttp(String(listening.url));
      try {
        const names = (await client.listTools()).tools.map((tool) => tool.name);
        expect(names.filter((name) => name.endsWith('-show-pet-by-id'))).toHaveLength(atOnce + 2);
      } finally {
        await client.close();
      }
    } finally {
      await server.stop();
      released = true;
      for (const res of requests.splice(0)) answer(res);
      await new Promise((resolve) => descriptions.close(resolve));
    }
  }, 90_000);

  test('an API worker that read and built its description (a first start) gives back what parsing it took', async () => {
    const config = writeConfig({ ...base, apis: [{ namespace: 'gh', apiBaseUrl: upstreamA.url, openApiSpec: GITHUB }] });
    // A first start: an empty spec cache.
    const server = spawnBin('mcpvisor', ['--config', config, '--transport', 'http', '--host', '127.0.0.1', '--port', '0'], tempCacheEnv());
    try {
      const ready = await server.waitForLog((line) => line.msg === 'api tools ready' && line.pool === 'api-gh', 60_000);
      expect(ready.specCache).toBe('miss');
      const pid = ready.pid as number;
      // GitHub's 13 MB: ~150 MB at its peak, ~120 MB after a full collection, and ~165 MB kept
      // without one (an idle worker never collected it).
      let memory = residentMb(pid);
      await eventually(() => {
        memory = residentMb(pid);
        return memory.hwm - memory.rss >= 20;
      });
      expect(memory.hwm - memory.rss).toBeGreaterThanOrEqual(20);
    } finally {
      await server.stop();
    }
  }, 90_000);
});
