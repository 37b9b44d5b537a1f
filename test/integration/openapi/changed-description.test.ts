import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { errorCodeOf } from '../../../protocol/results';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { descendants, eventually, isAlive, tempCacheEnv } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

const PETSTORE = path.join(__dirname, '..', '..', 'fixtures', 'openapi', 'petstore-3.0.yaml');
const ENV = tempCacheEnv();

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean };

describe('a description edited while the server runs', () => {
  let upstream: Upstream;
  let conn: StdioConnection;
  let spec: string;

  beforeAll(async () => {
    upstream = await startUpstream();
    spec = path.join(tempDir('openapi-changed-'), 'petstore.yaml');
    writeFileSync(spec, readFileSync(PETSTORE));
    conn = await connectStdio('openapi-mcp-server', ['--api-base-url', upstream.url, '--openapi-spec', spec], ENV);
  });
  afterAll(async () => {
    await conn.close();
    await upstream.close();
  });

  test('is not served by a worker that replaces a crashed one: calls fail saying so, and none reaches the changed paths', async () => {
    const call = () => conn.client.callTool({ name: 'show-pet-by-id', arguments: { petId: 'x' } }) as Promise<Result>;
    expect((await call()).isError).toBeFalsy();
    const [worker] = descendants(conn.pid()!);
    // The same operation under another path: the list clients have would now call another endpoint.
    writeFileSync(spec, readFileSync(PETSTORE, 'utf8').replace(/^ {2}\/pets/gm, '  /v2/pets'));
    process.kill(worker, 'SIGKILL');
    // Once the supervisor has seen the exit (a call sent before it goes to the dead worker: WORKER_CRASHED).
    expect(await eventually(() => !isAlive(worker) && conn.stderr().includes('worker exited; restarting'))).toBe(true);
    const before = upstream.requests.length;
    const result = await call();
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result as never)).toBe('POOL_UNAVAILABLE');
    expect(textOf(result as never)).toContain('changed since the server started');
    expect(upstream.requests.slice(before).map((r) => r.url)).toEqual([]);
    expect(await eventually(() => conn.stderr().includes('changed since the server started'))).toBe(true);
  }, 60_000);
});
