import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connectStdio, textOf } from '../../helpers/mcp';
import { spawnBin, tempCacheEnv, type Spawned } from '../../helpers/processes';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';

const ENV = tempCacheEnv();
let upstream: Upstream;
let dir: string;
beforeAll(async () => {
  upstream = await startUpstream();
  dir = mkdtempSync(path.join(tmpdir(), 'openapi-hostile-'));
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes a description into the test's folder and returns its path. */
function specFile(name: string, spec: Record<string, unknown>): string {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(spec));
  return file;
}
const MAX_SPEC_BYTES = 200 * 1024 * 1024;
// Stopped after each test even when it timed out waiting for an exit.
const running: Spawned[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop(1000)));
});
const start = (args: string[]) => {
  const server = spawnBin('openapi-mcp-server', args, ENV);
  running.push(server);
  return server;
};
const STDIN_ARGS = ['--api-base-url', 'http://127.0.0.1:9', '--spec-input-method', 'stdin', '--transport', 'http', '--host', '127.0.0.1', '--port', '0'];

/** Writes `chunk` to the child's stdin until `total` bytes are out or it exits; never ends stdin. */
async function feed(server: Spawned, chunk: Buffer, total: number): Promise<void> {
  const stdin = server.child.stdin!;
  stdin.on('error', () => undefined);
  let exited = false;
  void server.exited.then(() => (exited = true));
  for (let sent = 0; sent < total && !exited; sent += chunk.length) {
    if (!stdin.write(chunk)) await new Promise((resolve) => { stdin.once('drain', resolve); void server.exited.then(resolve); });
  }
}

describe('openapi-mcp-server --spec-input-method stdin', () => {
  test('stops reading an endless description at the loader\'s cap and says which limit it passed', async () => {
    const server = start(STDIN_ARGS);
    // Past the cap and stdin left open: the old reader waited for an end that never came.
    await feed(server, Buffer.alloc(1024 * 1024, 'aaaaaaa\n'), MAX_SPEC_BYTES + 4 * 1024 * 1024);
    expect(await server.exited).toBe(2);
    expect(server.stderr()).toContain(`the OpenAPI spec on standard input is larger than ${MAX_SPEC_BYTES} bytes`);
  });

  test('an empty standard input is reported as empty, not as a missing --spec-input-method', async () => {
    const server = start(STDIN_ARGS);
    server.child.stdin!.end();
    expect(await server.exited).toBe(2);
    expect(server.stderr()).toContain('standard input was empty');
    expect(server.stderr()).not.toContain('use --openapi-spec');
  });
});

describe('a pattern from the description', () => {
  test('that backtracks exponentially (^(a+)+$) still answers an argument that fails it: BAD_INPUT', async () => {
    const spec = specFile('redos.json', {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: { '/s': { get: { operationId: 'search', parameters: [{ name: 'q', in: 'query', schema: { type: 'string', pattern: '^(a+)+$' } }], responses: { 200: { description: 'ok' } } } } },
    });
    const conn = await connectStdio('openapi-mcp-server', ['--api-base-url', upstream.url, '--openapi-spec', spec], ENV);
    try {
      const result = await conn.client.callTool({ name: 'search', arguments: { q: `${'a'.repeat(40)}!` } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^BAD_INPUT\b.*'q' must match pattern/);
      const fine = await conn.client.callTool({ name: 'search', arguments: { q: 'aaa' } });
      expect(fine.isError).toBeFalsy();
    } finally {
      await conn.close();
    }
    // Through invoke-api-endpoint the worker's own validator sees the argument first.
    const dynamic = await connectStdio('openapi-mcp-server', ['--api-base-url', upstream.url, '--openapi-spec', spec, '--tools', 'dynamic'], ENV);
    try {
      const result = await dynamic.client.callTool({ name: 'invoke-api-endpoint', arguments: { toolId: 'GET::s', parameters: { q: `${'a'.repeat(40)}!` } } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^BAD_INPUT\b.*'q' must match pattern/);
    } finally {
      await dynamic.close();
    }
  }, 150_000);
});
