import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { descendants, eventually, isAlive, spawnBin, tempCacheEnv } from '../../helpers/processes';
import { errorCodeOf } from '../../../protocol/results';
import { startUpstream, type Recorded, type Upstream } from '../../fixtures/openapi/upstream';
import { tempDir } from '../../helpers/temp';

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'openapi');
const SECRET = 'sk-very-secret-value-123';

let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());
const ENV = tempCacheEnv();

async function call(conn: StdioConnection, name: string, args: Record<string, unknown>) {
  const before = upstream.requests.length;
  const result = (await conn.client.callTool({ name, arguments: args })) as { content: Array<{ type: string; text?: string }>; isError?: boolean; structuredContent?: Record<string, unknown>; _meta?: Record<string, unknown> };
  const sent: Recorded | undefined = upstream.requests[before];
  return { result, sent, count: upstream.requests.length - before };
}

describe('openapi-mcp-server over stdio', () => {
  let conn: StdioConnection;
  beforeAll(async () => {
    conn = await connectStdio(
      'openapi-mcp-server',
      ['--api-base-url', `${upstream.url}/v1`, '--openapi-spec', path.join(FIXTURES, 'collisions.yaml'), '--headers', `Authorization:Bearer ${SECRET}`, '--header', 'X-Extra=1', '--debug'],
      { ...ENV, API_HEADERS: 'X-From-Env:env' },
    );
  });
  afterAll(() => conn.close());

  test('lists tools the SDK client accepts, without internal fields', async () => {
    const { tools } = await conn.client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'upd-item', 'replace-items', 'set-count', 'get-usrs', 'get-usrs-2', 'get-usrs-3', 'send-form', 'send-file',
      'list-api-endpoints', 'get-api-endpoint-schema', 'invoke-api-endpoint',
    ]);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      for (const key of Object.keys(tool)) expect(['name', 'title', 'description', 'inputSchema', 'annotations']).toContain(key);
    }
    // destructiveHint false would let a host skip its confirmation: only for reads; POST says nothing (MCP's default, true).
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    expect(hints['get-usrs']).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
    expect(hints['replace-items']).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    expect(hints['upd-item']).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    expect(hints['upd-item']).not.toHaveProperty('destructiveHint');
    // The lookups read the loaded description only; invoking calls the API.
    for (const lookup of ['list-api-endpoints', 'get-api-endpoint-schema']) expect(hints[lookup]).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    expect(hints['invoke-api-endpoint']).toEqual({ readOnlyHint: false, openWorldHint: true });
    expect(tools.find((t) => t.name === 'list-api-endpoints')?.title).toBe('List API endpoints');
  });

  test('sends same-name parameters and colliding body properties to their own places, with the static headers', async () => {
    const { result, sent } = await call(conn, 'upd-item', { id: 'a/b', query_id: 'q', header_id: 'h', filter_name_: 'f', body_id: 3, label: 'L' });
    expect(result.isError).toBeUndefined();
    expect(sent).toMatchObject({ method: 'POST', url: '/v1/items/a%2Fb?id=q&filter%5Bname%5D=f' });
    expect(sent!.headers).toMatchObject({ id: 'h', authorization: `Bearer ${SECRET}`, 'x-extra': '1', 'x-from-env': 'env', 'content-type': 'application/json' });
    expect(JSON.parse(sent!.body)).toEqual({ id: 3, label: 'L' });
    expect(result.structuredContent).toMatchObject({ echo: { method: 'POST' } });
  });

  test('sends each body kind as the description says', async () => {
    expect(JSON.parse((await call(conn, 'replace-items', { body: ['x', 'y'] })).sent!.body)).toEqual(['x', 'y']);
    const count = (await call(conn, 'set-count', { body: 12 })).sent!;
    expect(count.headers['content-type']).toBe('text/plain');
    expect(count.body).toBe('12');
    const form = (await call(conn, 'send-form', { a: 'x&y', b: 2 })).sent!;
    expect(form.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(form.body).toBe('a=x%26y&b=2');
    // A binary property comes as base64 and goes as a file part of the decoded bytes.
    const file = (await call(conn, 'send-file', { name: 'n1', file: Buffer.from('file body').toString('base64') })).sent!;
    expect(file.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(file.body).toContain('name="name"');
    expect(file.body).toMatch(/name="file"; filename="file"\r\nContent-Type: application\/octet-stream\r\n\r\nfile body\r\n/);
    const notBase64 = await call(conn, 'send-file', { name: 'n1', file: 'not base64!' });
    expect(notBase64.result.isError).toBe(true);
    expect(notBase64.count).toBe(0);
    expect(JSON.stringify(notBase64.result.content)).toContain("argument 'file' must be base64");
  });

  test('refuses bad arguments before any upstream request, naming them', async () => {
    const { result, count } = await call(conn, 'upd-item', { id: 'x', body_id: 'not a number', label: 'L' });
    expect(count).toBe(0);
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('BAD_INPUT');
    expect(textOf(result)).toContain("'body_id' must be integer");
    const unknown = await call(conn, 'get-usrs', { bogus: 1 });
    expect(textOf(unknown.result)).toContain("unknown argument 'bogus'");
  });

  test('invokes a templated path through invoke-api-endpoint', async () => {
    const { sent } = await call(conn, 'invoke-api-endpoint', { toolId: 'POST::items__---id', parameters: { id: '9', body_id: 1, label: 'z' } });
    expect(sent!.url).toBe('/v1/items/9');
  });

  test('runs one api worker: the one forked before the supervisor loaded, adopted by the pool', () => {
    const children = descendants(conn.pid()!);
    expect(children).toHaveLength(1);
    expect(readFileSync(`/proc/${children[0]}/cmdline`, 'utf8')).toContain(path.join('workers', 'openapi', 'worker.js'));
    expect(conn.stderr()).toMatch(new RegExp(`"pid":${children[0]},"forkedEarly":true,"msg":"worker started"`));
  });

  test('never writes header values to its logs', () => {
    expect(conn.stderr()).not.toContain(SECRET);
  });

  test('sends credentials of the base URL as Basic auth, and shows them nowhere', async () => {
    const withUser = upstream.url.replace('http://', `http://bot:${SECRET}@`);
    const other = await connectStdio('openapi-mcp-server', ['--api-base-url', `${withUser}/v1`, '--openapi-spec', path.join(FIXTURES, 'collisions.yaml'), '--debug'], ENV);
    try {
      const { result, sent } = await call(other, 'get-usrs', {});
      expect(sent!.headers.authorization).toBe(`Basic ${Buffer.from(`bot:${SECRET}`).toString('base64')}`);
      expect(JSON.stringify(result)).not.toContain(SECRET);
      expect(other.stderr()).toContain('http://***@127.0.0.1');
      expect(other.stderr()).not.toContain(SECRET);
    } finally {
      await other.close();
    }
  });
});

describe('openapi-mcp-server errors and limits', () => {
  test('a run that starts no server (a bad flag) leaves no worker behind', async () => {
    const run = spawnBin('openapi-mcp-server', ['--api-base-url', upstream.url, '--openapi-spec', path.join(FIXTURES, 'collisions.yaml'), '--no-such-flag'], ENV);
    // Its early-forked worker, if any, is a child until the CLI exits.
    const seen = new Set<number>();
    const watch = setInterval(() => descendants(run.child.pid!).forEach((pid) => seen.add(pid)), 5);
    expect(await run.exited).toBe(2);
    clearInterval(watch);
    expect(run.stderr()).toContain('--no-such-flag');
    expect(await eventually(() => [...seen].every((pid) => !isAlive(pid)), 5000)).toBe(true);
  });

  test('reports upstream HTTP errors and timeouts as isError results', async () => {
    const dir = tempDir('openapi-it-');
    const spec = path.join(dir, 'api.yaml');
    writeFileSync(
      spec,
      [
        'openapi: 3.0.3', 'info: {title: t, version: "1"}', 'paths:',
        '  /status/{code}:', '    get:', '      operationId: getStatus', '      parameters: [{name: code, in: path, required: true, schema: {type: integer}}]', '      responses: {"200": {description: ok}}',
        '  /hang:', '    get:', '      operationId: hang', '      responses: {"200": {description: ok}}',
        '  /text:', '    get:', '      operationId: getText', '      responses: {"200": {description: ok}}',
        '  /big/{n}:', '    get:', '      operationId: getBig', '      parameters: [{name: n, in: path, required: true, schema: {type: integer}}]', '      responses: {"200": {description: ok}}',
        '  /json/{n}:', '    get:', '      operationId: getJson', '      parameters: [{name: n, in: path, required: true, schema: {type: integer}}]', '      responses: {"200": {description: ok}}',
        '  /latin1:', '    get:', '      operationId: getLatin1', '      responses: {"200": {description: ok}}',
      ].join('\n'),
    );
    const config = path.join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ apis: [{ apiBaseUrl: upstream.url, openApiSpec: spec, requestTimeoutMs: 500, maxResponseBytes: 1000 }] }));
    // A second API without the 1000-byte cap, for results past maxResultBytes.
    writeFileSync(
      path.join(dir, 'big.json'),
      JSON.stringify({ apis: [{ apiBaseUrl: upstream.url, openApiSpec: spec, namespace: 'big', maxResponseBytes: 8 * 1024 * 1024 }, { apiBaseUrl: upstream.url, openApiSpec: spec, namespace: 'small', maxResultBytes: 4096 }] }),
    );
    const conn = await connectStdio('openapi-mcp-server', ['--config', config], ENV);
    try {
      const notFound = await call(conn, 'get-status', { code: 404 });
      expect(notFound.result.isError).toBe(true);
      expect(errorCodeOf(notFound.result)).toBe('UPSTREAM_ERROR');
      expect(textOf(notFound.result)).toMatch(/^UPSTREAM_ERROR.*HTTP 404: \{"error":"status 404"/);
      expect(textOf(notFound.result).length).toBeLessThan(2200);
      const slow = await call(conn, 'hang', {});
      expect(slow.result.isError).toBe(true);
      expect(errorCodeOf(slow.result)).toBe('TIMEOUT');
      // The upstream's own timeout, not the call's larger deadline.
      expect(textOf(slow.result)).toMatch(/^TIMEOUT: the upstream request timed out after 500 ms \(GET http:\/\/127\.0\.0\.1:\d+\/hang\)$/);
      expect(textOf((await call(conn, 'get-latin-1', {})).result)).toBe('h\u00e9');
      expect(textOf((await call(conn, 'get-text', {})).result)).toBe('plain words');
      // A body past maxResponseBytes (streamed, no length given) is cut, and the worker lives on.
      const big = await call(conn, 'get-big', { n: 50_000 });
      expect(big.result.isError).toBeUndefined();
      expect(textOf(big.result)).toMatch(/\n\[response cut at 1000 bytes\]$/);
      expect(textOf((await call(conn, 'get-text', {})).result)).toBe('plain words');
    } finally {
      await conn.close();
    }
    // 6 MB of JSON: as text and structuredContent it was a 12 MB line, past the SDK stdio
    // client's 10 MiB, which closed the session. Now cut at maxResultBytes (2 MiB by default).
    const both = await connectStdio('mcpvisor', ['--config', path.join(dir, 'big.json')], ENV);
    try {
      const big = await call(both, 'big-get-json', { n: 6 * 1024 * 1024 });
      expect(big.result.isError).toBeUndefined();
      expect(big.result.structuredContent).toBeUndefined();
      const text = textOf(big.result);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(2 * 1024 * 1024);
      expect(text).toMatch(/^\{\n {2}"data": "xxx/);
      expect(text).toMatch(/\n\[result cut at 2097152 of \d+ bytes: ask for less/);
      const small = await call(both, 'small-get-json', { n: 3000 });
      // Text and structuredContent would pass 4096 bytes together: the text alone, whole.
      expect(small.result.structuredContent).toBeUndefined();
      expect(JSON.parse(textOf(small.result))).toEqual({ data: 'x'.repeat(3000) });
      // The session lives on.
      expect(textOf((await call(both, 'big-get-text', {})).result)).toBe('plain words');
    } finally {
      await both.close();
    }
  });

  test('exits with the spec error when apiBaseUrl or the description is missing', async () => {
    const noBase = spawnBin('openapi-mcp-server', ['--openapi-spec', path.join(FIXTURES, 'petstore-3.0.yaml')], ENV);
    expect(await noBase.exited).toBe(2);
    expect(noBase.stderr()).toContain('apiBaseUrl is required');
    const missing = spawnBin('openapi-mcp-server', ['--api-base-url', upstream.url, '--openapi-spec', '/no/such/spec.yaml'], ENV);
    expect(await missing.exited).toBe(1);
    expect(missing.stderr()).toContain('OpenAPI spec file not found: /no/such/spec.yaml');
    const nothing = spawnBin('openapi-mcp-server', ['--api-base-url', upstream.url], ENV);
    expect(await nothing.exited).toBe(2);
    expect(nothing.stderr()).toContain('no OpenAPI description given');
    // A description piped on standard input is named so, not "inline content".
    const piped = spawnBin('openapi-mcp-server', ['--api-base-url', upstream.url, '--spec-input-method', 'stdin', '--transport', 'http', '--port', '0'], ENV);
    piped.child.stdin!.end('garbage: [');
    expect(await piped.exited).toBe(1);
    expect(piped.stderr()).toContain('invalid OpenAPI specification format in standard input');
  });
});
