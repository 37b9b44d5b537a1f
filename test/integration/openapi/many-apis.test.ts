import { readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { writeConfig } from '../../helpers/config';
import { spawnBin, tempCacheEnv } from '../../helpers/processes';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';

const FIXTURES = path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'openapi');
const PETSTORE = path.join(FIXTURES, 'petstore-3.0.yaml');
const ENV = tempCacheEnv();

/** Bytes a process has read through read(2) and the like, from /proc/<pid>/io. */
function bytesRead(pid: number): number {
  return Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))![1]);
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
});
