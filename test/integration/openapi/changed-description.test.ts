import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorCodeOf } from '../../../protocol/results';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { descendants, eventually, isAlive, tempCacheEnv } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

const PETSTORE = path.join(__dirname, '..', '..', 'fixtures', 'openapi', 'petstore-3.0.yaml');
const ENV = tempCacheEnv();

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean };
type Health = { status: string; pools: Array<{ name: string; state: string; alive: number; lastError?: string }> };

describe('a description edited while the server runs', () => {
  let upstream: Upstream;
  let server: HttpServer;
  let client: Client;
  let spec: string;

  beforeAll(async () => {
    upstream = await startUpstream();
    spec = path.join(tempDir('openapi-changed-'), 'petstore.yaml');
    writeFileSync(spec, readFileSync(PETSTORE));
    server = await startHttp('openapi-mcp-server', ['--api-base-url', upstream.url, '--openapi-spec', spec], ENV);
    ({ client } = await connectHttp(server.mcpUrl));
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
    await upstream.close();
  });

  test('is not served by a worker that replaces a crashed one: calls fail saying to restart, none reaches the changed paths, and /health shows the pool degraded', async () => {
    const call = () => client.callTool({ name: 'show-pet-by-id', arguments: { petId: 'x' } }) as Promise<Result>;
    const health = async () => (await (await fetch(`${server.baseUrl}/health`)).json()) as Health;
    expect((await call()).isError).toBeFalsy();
    expect((await health()).pools[0]).toMatchObject({ state: 'ready', alive: 1 });
    const [worker] = descendants(server.server.child.pid!);
    // The same operation under another path: the list clients have would now call another endpoint.
    writeFileSync(spec, readFileSync(PETSTORE, 'utf8').replace(/^ {2}\/pets/gm, '  /v2/pets'));
    process.kill(worker, 'SIGKILL');
    // Once the replacement was refused (a call sent before the exit was seen goes to the dead worker).
    expect(await eventually(() => !isAlive(worker) && server.server.stderr().includes('changed since the server started'))).toBe(true);
    const before = upstream.requests.length;
    const result = await call();
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result as never)).toBe('POOL_UNAVAILABLE');
    expect(textOf(result as never)).toContain('changed since the server started; restart the server to serve the new one');
    // Waiting does not help: the call must not say so.
    expect(textOf(result as never)).not.toContain('try again');
    expect(upstream.requests.slice(before).map((r) => r.url)).toEqual([]);
    const after = await health();
    expect(after.status).toBe('degraded');
    expect(after.pools[0]).toMatchObject({ state: 'degraded', alive: 0, lastError: expect.stringContaining('changed since the server started') });
  }, 60_000);
});
