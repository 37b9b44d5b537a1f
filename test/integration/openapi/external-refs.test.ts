import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { errorCodeOf } from '../../../protocol/results';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { eventually, tempCacheEnv } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

const ENV = tempCacheEnv();
const ok = { 200: { description: 'ok' } };
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const described = (paths: Record<string, unknown>) => JSON.stringify({ openapi: '3.0.3', info: { title: 'refs', version: '1' }, paths });

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean; structuredContent?: Record<string, unknown> };

let upstream: Upstream;
/** Serves the network description and the documents it references; counts requests for /secret.yaml. */
let documents: Server;
let docsBase: string;
let secretHits = 0;
beforeAll(async () => {
  upstream = await startUpstream();
  documents = createServer((req, res) => {
    const port = (documents.address() as AddressInfo).port;
    if (req.url === '/secret.yaml') secretHits++;
    if (req.url === '/api.json') {
      // localhost is this machine under another name than the description's host: refused.
      return res.end(described({
        '/secret': { get: { operationId: 'getSecret', parameters: [{ $ref: `http://localhost:${port}/secret.yaml#/P` }], responses: ok } },
        '/health': { get: { operationId: 'health', responses: ok } },
      }));
    }
    if (req.url === '/secret.yaml') return res.end('P: {name: q, in: query, schema: {type: string}}');
    res.statusCode = 404;
    res.end('no');
  });
  await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
  docsBase = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await upstream.close();
  await new Promise<void>((resolve) => documents.close(() => resolve()));
});

/** The `msg` of every JSON log line on the server's stderr. */
const logged = (conn: StdioConnection) => conn.stderr().split('\n').filter((line) => line.startsWith('{')).map((line) => String((JSON.parse(line) as { msg?: unknown }).msg));

describe('openapi-mcp-server with external $refs that cannot be loaded', () => {
  let conn: StdioConnection;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir('openapi-external-refs-');
    writeFileSync(path.join(dir, 'api.json'), described({
      '/pets': {
        // Its body schema is in a file that does not exist.
        post: { operationId: 'createPet', requestBody: json({ $ref: './missing.yaml#/Pet' }), responses: ok },
        // Only a response is in a document that answers 404.
        get: { operationId: 'getPets', parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer' } }], responses: { 200: { description: 'the pets', ...json({ $ref: `${docsBase}/gone.yaml#/Pets` }) } } },
      },
      // a.yaml loads; b.yaml, which it references, does not exist.
      '/owners/{id}': { put: { operationId: 'putOwner', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], requestBody: json({ $ref: './a.yaml#/Owner' }), responses: ok } },
      '/health': { get: { operationId: 'health', responses: ok } },
    }));
    writeFileSync(path.join(dir, 'a.yaml'), 'Owner: {type: object, properties: {pet: {$ref: "./b.yaml#/Pet"}}}\n');
    conn = await connectStdio('openapi-mcp-server', ['--api-base-url', `${upstream.url}/v1`, '--openapi-spec', path.join(dir, 'api.json')], ENV);
  });
  afterAll(() => conn.close());

  test('starts, serving every operation but those whose arguments need a missing document, and logs each with the ref, its document and why', async () => {
    const { tools } = await conn.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['get-pets', 'health', 'list-api-endpoints', 'get-api-endpoint-schema', 'invoke-api-endpoint']);
    const at = (name: string) => path.join(dir, name);
    expect(await eventually(() => logged(conn).includes('api tools ready'))).toBe(true);
    expect(logged(conn)).toEqual(expect.arrayContaining([
      `operation skipped: POST /pets: $ref './missing.yaml#/Pet' in ${at('api.json')}: ${at('missing.yaml')} could not be loaded (file not found)`,
      `operation skipped: PUT /owners/{id}: $ref './b.yaml#/Pet' in ${at('a.yaml')}: ${at('b.yaml')} could not be loaded (file not found)`,
      `external document ${docsBase}/gone.yaml, referenced from ${at('api.json')}, could not be loaded: HTTP 404; operations whose arguments need it are skipped`,
    ]));
  });

  test('calls the operations kept, the one with an unloaded response schema too', async () => {
    const before = upstream.requests.length;
    const pets = (await conn.client.callTool({ name: 'get-pets', arguments: { limit: 2 } })) as Result;
    expect(pets.isError).toBeFalsy();
    const health = (await conn.client.callTool({ name: 'health', arguments: {} })) as Result;
    expect(health.isError).toBeFalsy();
    expect(upstream.requests.slice(before).map((r) => `${r.method} ${r.url}`)).toEqual(['GET /v1/pets?limit=2', 'GET /v1/health']);
  });

  test('meta-tools agree: the skipped operations are not listed nor described, and an unloaded response shows as such without why', async () => {
    const listed = (await conn.client.callTool({ name: 'list-api-endpoints', arguments: {} })) as Result;
    expect((listed.structuredContent as { endpoints: Array<{ toolId: string }> }).endpoints.map((e) => e.toolId)).toEqual(['GET::pets', 'GET::health']);
    const schema = (await conn.client.callTool({ name: 'get-api-endpoint-schema', arguments: { toolId: 'GET::pets' } })) as Result;
    expect(schema.structuredContent).toMatchObject({ responses: { 200: { schema: { 'x-unresolved': `${docsBase}/gone.yaml#/Pets`, 'x-not-loaded': 'the document this $ref names could not be loaded' } } } });
    // No status of the failed load (a word: the docs server's port, e.g. 40493, may hold "404").
    expect(textOf(schema)).not.toMatch(/\b404\b/);
    for (const toolId of ['POST::pets', 'PUT::owners__---id']) {
      const skipped = (await conn.client.callTool({ name: 'get-api-endpoint-schema', arguments: { toolId } })) as Result;
      expect(skipped.isError).toBe(true);
      expect(errorCodeOf(skipped as never)).toBe('NOT_FOUND');
      const invoked = (await conn.client.callTool({ name: 'invoke-api-endpoint', arguments: { toolId, parameters: {} } })) as Result;
      expect(errorCodeOf(invoked as never)).toBe('NOT_FOUND');
    }
  });
});

describe('openapi-mcp-server with a description on the network whose $ref the SSRF guard refuses', () => {
  test('starts without that operation, never fetching the refused document, and logs why', async () => {
    const conn = await connectStdio('openapi-mcp-server', ['--api-base-url', `${upstream.url}/v1`, '--openapi-spec', `${docsBase}/api.json`], ENV);
    try {
      const { tools } = await conn.client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['health', 'list-api-endpoints', 'get-api-endpoint-schema', 'invoke-api-endpoint']);
      expect(secretHits).toBe(0);
      const port = (documents.address() as AddressInfo).port;
      expect(await eventually(() => logged(conn).includes('api tools ready'))).toBe(true);
      const skipped = logged(conn).find((msg) => msg.startsWith('operation skipped: GET /secret: '));
      expect(skipped).toMatch(new RegExp(`^operation skipped: GET /secret: \\$ref 'http://localhost:${port}/secret\\.yaml#/P' in ${docsBase}/api\\.json: http://localhost:${port}/secret\\.yaml could not be loaded \\(.* localhost \\((127\\.0\\.0\\.1|::1)\\) is a private, loopback or link-local address`));
    } finally {
      await conn.close();
    }
  });
});
