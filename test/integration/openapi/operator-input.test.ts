import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { connectStdio, textOf } from '../../helpers/mcp';
import { spawnBin, tempCacheEnv, type Spawned } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';
import { writeConfig } from '../../helpers/config';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';

// The description file and the settings of an API, as the operator gives them.

const ENV = tempCacheEnv();
let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());

const running: Spawned[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop(1000)));
});

function serve(spec: string): Spawned {
  const server = spawnBin('openapi-mcp-server', ['--api-base-url', 'http://127.0.0.1:9', '--openapi-spec', spec, '--transport', 'http', '--host', '127.0.0.1', '--port', '0'], ENV);
  running.push(server);
  return server;
}

describe('a description path that is not a regular file', () => {
  it('refuses a FIFO at once: its reading waited for a writer until the worker start timeout', async () => {
    const fifo = path.join(tempDir('openapi-fifo-'), 'openapi.yaml');
    execFileSync('mkfifo', [fifo]);
    const server = serve(fifo);
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toContain(`openapi-mcp-server: failed to start: failed to load the OpenAPI spec from ${fifo}: it is a FIFO (named pipe), not a regular file\n`);
  });

  it('refuses a device (/dev/zero was read until V8 gave up on the string, "Invalid string length")', async () => {
    // /dev/null, whose reading ends: the old reader called it an invalid description format.
    const server = serve('/dev/null');
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toContain('failed to load the OpenAPI spec from /dev/null: it is a character device, not a regular file\n');
  });
});

describe('an external document that is not a regular file', () => {
  it('is reported as not loaded and skips only what needs it, where its reading waited for a writer', async () => {
    const dir = tempDir('openapi-fifo-ref-');
    execFileSync('mkfifo', [path.join(dir, 'pet.yaml')]);
    const spec = path.join(dir, 'openapi.json');
    const ok = { 200: { description: 'ok' } };
    writeFileSync(spec, JSON.stringify({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/pets': { post: { operationId: 'make', requestBody: { content: { 'application/json': { schema: { $ref: './pet.yaml#/Pet' } } } }, responses: ok } },
        '/plain': { get: { operationId: 'plain', responses: ok } },
      },
    }));
    const conn = await connectStdio('openapi-mcp-server', ['--api-base-url', upstream.url, '--openapi-spec', spec], ENV);
    try {
      const names = (await conn.client.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain('plain');
      expect(names).not.toContain('make');
      expect(conn.stderr()).toContain('could not be loaded: is a FIFO (named pipe), not a regular file');
    } finally {
      await conn.close();
    }
  });
});

describe('the longest upstream timeout', () => {
  it('leaves calls their time: twice it plus a slack, the call budget, passed the longest timer and timed every call out at once', async () => {
    const spec = path.join(tempDir('openapi-timeout-'), 'openapi.json');
    writeFileSync(spec, JSON.stringify({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths: { '/echo': { get: { operationId: 'echo', responses: { 200: { description: 'ok' } } } } } }));
    const config = writeConfig({ apis: [{ apiBaseUrl: upstream.url, openApiSpec: spec, specInputMethod: 'file', requestTimeoutMs: 2 ** 31 - 1 }] });
    const conn = await connectStdio('openapi-mcp-server', ['--config', config], ENV);
    try {
      const result = (await conn.client.callTool({ name: 'echo', arguments: {} })) as { isError?: boolean };
      expect(textOf(result)).not.toContain('TIMEOUT');
      expect(result.isError).toBeFalsy();
    } finally {
      await conn.close();
    }
  });
});
