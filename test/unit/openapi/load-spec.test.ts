import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { loadSpec } from '../../../workers/openapi/load-spec';
import { ToolsManager } from '../../../workers/openapi/tools-manager';
import { rejection } from '../../helpers/rejection';

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'openapi');
const PETSTORE = path.join(FIXTURES, 'petstore-3.0.yaml');

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/petstore.yaml') {
      res.setHeader('content-type', 'application/yaml');
      res.end(readFileSync(PETSTORE));
    } else if (req.url === '/file-ref.yaml') {
      res.end(`openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /x:\n    get:\n      parameters:\n        - $ref: 'file:///etc/passwd#/p'\n      responses: {'200': {description: ok}}\n`);
    } else if (req.url?.startsWith('/padded/')) {
      // A JSON document of about 600 bytes.
      res.end(JSON.stringify({ Pad: { type: 'string', description: 'x'.repeat(560) } }));
    } else if (req.url?.startsWith('/loop/')) {
      res.writeHead(302, { location: `/loop/${Number(req.url.slice(6)) + 1}` });
      res.end();
    } else if (req.url === '/continue.yaml') {
      // A 100 Continue nobody asked for (no Expect header): undici refuses the response.
      res.writeContinue();
      res.end(readFileSync(PETSTORE));
    } else if (req.url?.startsWith('/refs-to/')) {
      // A description whose parameter is in the document the rest of the URL names.
      const target = decodeURIComponent(req.url.slice('/refs-to/'.length)).replace('{port}', String((server.address() as AddressInfo).port));
      res.end(`openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /x:\n    get:\n      parameters:\n        - $ref: '${target}#/p'\n      responses: {'200': {description: ok}}\n`);
    } else if (req.url === '/to-metadata.yaml') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/p.yaml' });
      res.end();
    } else if (req.url === '/p.yaml') {
      res.end('p: {name: q, in: query, schema: {type: string}}');
    } else if (req.url?.startsWith('/external/')) {
      res.end(readFileSync(path.join(FIXTURES, req.url.slice(1))));
    } else {
      res.statusCode = 404;
      res.end('no');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('loadSpec', () => {
  test('reads a YAML file, a JSON file, a URL, standard input and inline content', async () => {
    const fromFile = await loadSpec({ openApiSpec: PETSTORE, specInputMethod: 'file' });
    expect(fromFile.version).toBe('3.0.3');
    const json = await loadSpec({ openApiSpec: path.join(FIXTURES, 'swagger-2.0.json') });
    expect(json).toMatchObject({ version: '2.0', isSwagger2: true });
    const fromUrl = await loadSpec({ openApiSpec: `${base}/petstore.yaml` });
    expect(fromUrl.root).toEqual(fromFile.root);
    const fromStdin = await loadSpec({ specInputMethod: 'stdin', stdin: Readable.from([readFileSync(PETSTORE)]) });
    expect(fromStdin).toMatchObject({ source: 'standard input', root: fromFile.root });
    const inline = await loadSpec({ specInputMethod: 'inline', openApiSpec: readFileSync(path.join(FIXTURES, 'openapi-3.1.yaml'), 'utf8') });
    expect(inline.version).toBe('3.1.0');
  });

  test('says that the spec file was not found, naming it', async () => {
    const error = await rejection(loadSpec({ openApiSpec: '/nonexistent/openapi.yaml' }));
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toBe('OpenAPI spec file not found: /nonexistent/openapi.yaml');
  });

  test('says that the spec failed to load from a URL, naming it', async () => {
    const error = await rejection(loadSpec({ openApiSpec: `${base}/missing.yaml` }));
    expect(error.code).toBe('NETWORK_ERROR');
    expect(error.message).toBe(`failed to load the OpenAPI spec from ${base}/missing.yaml: HTTP 404`);
  });

  test('says a URL that keeps redirecting redirected too often, and where to, and gives undici\'s words with its code', async () => {
    const loop = await rejection(loadSpec({ openApiSpec: `${base}/loop/0` }));
    expect(loop.code).toBe('NETWORK_ERROR');
    expect(loop.message).toBe(`failed to load the OpenAPI spec from ${base}/loop/0: more than 5 redirects (the last, HTTP 302, to /loop/6)`);
    const stray = await rejection(loadSpec({ openApiSpec: `${base}/continue.yaml` }));
    expect(stray.message).toBe(`failed to load the OpenAPI spec from ${base}/continue.yaml: UND_ERR_SOCKET: bad response`);
  });

  test('reports an invalid format naming the source', async () => {
    const error = await rejection(loadSpec({ specInputMethod: 'inline', openApiSpec: '{ "openapi": ' }));
    expect(error.code).toBe('BAD_INPUT');
    expect(error.message).toMatch(/^invalid OpenAPI specification format in inline content: not valid JSON or YAML/);
    const scalar = await rejection(loadSpec({ specInputMethod: 'inline', openApiSpec: 'just text' }));
    expect(scalar.message).toBe('invalid OpenAPI specification format in inline content: expected an object at the top level');
  });

  test('reports a description without paths as missing the required field paths', async () => {
    const error = await rejection(loadSpec({ specInputMethod: 'inline', openApiSpec: 'openapi: 3.0.0\ninfo: {title: t, version: "1"}\n' }));
    expect(error.code).toBe('BAD_INPUT');
    expect(error.message).toBe("invalid OpenAPI specification in inline content: missing required field 'paths'");
    const noVersion = await rejection(loadSpec({ specInputMethod: 'inline', openApiSpec: '{"paths": {}}' }));
    expect(noVersion.message).toMatch(/missing or unsupported 'openapi' \/ 'swagger' version field/);
  });

  test('lists the ways to give a description when none is given', async () => {
    const error = await rejection(loadSpec({}));
    expect(error.code).toBe('BAD_INPUT');
    expect(error.message).toMatch(/--openapi-spec .*OPENAPI_SPEC_PATH.*stdin.*inline/);
  });

  test('follows $refs into files and URLs relative to the description, cutting cycles', async () => {
    for (const source of [path.join(FIXTURES, 'external', 'main.yaml'), `${base}/external/main.yaml`]) {
      const spec = await loadSpec({ openApiSpec: source });
      expect(spec.external.size).toBe(3);
      const [tool] = new ToolsManager({}, spec).generateTools();
      expect(tool.inputSchema.required).toEqual(['id', 'label']);
      const props = tool.inputSchema.properties as Record<string, Record<string, unknown>>;
      expect(props.id).toMatchObject({ type: 'string', pattern: '^[a-z]+$' });
      expect(props.size).toEqual({ type: 'integer', minimum: 0 });
      expect(props.parent).toEqual({ type: 'object', description: 'recursive reference to #/Thing' });
    }
  });

  test('loads an OpenAPI 3.1 document with webhooks and no paths (valid there) as one without operations', async () => {
    const spec = await loadSpec({ openApiSpec: path.join(FIXTURES, 'webhooks-only-3.1.yaml') });
    expect(new ToolsManager({}, spec).generateTools()).toEqual([]);
  });

  test('says why a TRACE operation is not served', async () => {
    const spec = await loadSpec({ openApiSpec: path.join(FIXTURES, 'real-world-shapes.yaml') });
    const warnings: string[] = [];
    new ToolsManager({}, spec).generateTools(false, { warn: (message: string) => warnings.push(message) });
    expect(warnings).toContain('operation skipped: TRACE /pods/{name}: TRACE operations are not served (tool IDs take GET, POST, PUT, PATCH, DELETE, HEAD and OPTIONS)');
  });

  test('refuses a $ref from a description on the network to a file of this machine', async () => {
    expect(await rejection(loadSpec({ openApiSpec: `${base}/file-ref.yaml` }))).toMatchObject({ code: 'BLOCKED', message: expect.stringContaining('may not reference a local file (file:///etc/passwd)') });
  });

  test('refuses a $ref from a description on the network to a private, loopback or link-local address but of its own host, after DNS and redirects', async () => {
    const refused = (target: string) => rejection(loadSpec({ openApiSpec: `${base}/refs-to/${encodeURIComponent(target)}` }));
    // Fetched, the metadata service's answer would have been written into the tools.
    expect(await refused('http://169.254.169.254/latest/meta-data/p.yaml')).toMatchObject({
      code: 'BLOCKED',
      message: `${base}/refs-to/${encodeURIComponent('http://169.254.169.254/latest/meta-data/p.yaml')} may not reference http://169.254.169.254/latest/meta-data/p.yaml: 169.254.169.254 is a private, loopback or link-local address, which a description from the network may not make this machine fetch from (but from its own host); load the description from a file to allow it`,
    });
    expect(await refused('http://[::ffff:a9fe:a9fe]/p.yaml')).toMatchObject({ code: 'BLOCKED' });
    // Another host name for this machine: judged by the address it resolves to.
    expect(await refused('http://localhost:{port}/p.yaml')).toMatchObject({ code: 'BLOCKED', message: expect.stringMatching(/localhost \((127\.0\.0\.1|::1)\) is a private/) });
    // Its own host, which then redirects away.
    expect(await refused('/to-metadata.yaml')).toMatchObject({ code: 'BLOCKED', message: expect.stringContaining('169.254.169.254 is a private') });
    // Its own host: followed.
    const own = await loadSpec({ openApiSpec: `${base}/refs-to/${encodeURIComponent('/p.yaml')}` });
    expect(own.external.get(`${base}/p.yaml`)).toEqual({ p: { name: 'q', in: 'query', schema: { type: 'string' } } });
  });

  test('follows $refs into files in a folder whose name needs percent-encoding in a URL, and names a referenced file that is not JSON or YAML', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'spec with space é-'));
    try {
      cpSync(path.join(FIXTURES, 'external'), dir, { recursive: true });
      const spec = await loadSpec({ openApiSpec: path.join(dir, 'main.yaml') });
      expect(spec.external.size).toBe(3);
      writeFileSync(path.join(dir, 'schemas.yaml'), '{"Thing": {"type": "object",, }}');
      const error = await rejection(loadSpec({ openApiSpec: path.join(dir, 'main.yaml') }));
      expect(error).toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining(`invalid OpenAPI specification format in ${path.join(dir, 'schemas.yaml')} (referenced from ${path.join(dir, 'main.yaml')}): not valid JSON or YAML`) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('refuses external documents that pass maxExternalBytes together, naming the limit and the document', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'spec-external-total-'));
    const described = (name: string, refs: string[]) => {
      const file = path.join(dir, name);
      writeFileSync(file, JSON.stringify({
        openapi: '3.0.3',
        info: { title: 't', version: '1' },
        paths: { '/x': { get: { parameters: refs.map((ref, i) => ({ name: `p${i}`, in: 'query', schema: { $ref: `${ref}#/Pad` } })), responses: { 200: { description: 'ok' } } } } },
      }));
      return file;
    };
    try {
      // Two documents of ~600 bytes each: each within the budget, both together not.
      const pad = JSON.stringify({ Pad: { type: 'string', description: 'x'.repeat(560) } });
      writeFileSync(path.join(dir, 'a.json'), pad);
      writeFileSync(path.join(dir, 'b.json'), pad);
      const files = described('files.json', ['a.json', 'b.json']);
      expect(await rejection(loadSpec({ openApiSpec: files, maxExternalBytes: 1000 }))).toMatchObject({
        code: 'BAD_INPUT',
        // Whichever of the two is read second.
        message: expect.stringMatching(new RegExp(`^the external documents of ${files} come to more than 1000 bytes together, past it at ${dir}/[ab]\\.json$`)),
      });
      const urls = described('urls.json', [`${base}/padded/one.json`, `${base}/padded/two.json`]);
      expect(await rejection(loadSpec({ openApiSpec: urls, maxExternalBytes: 1000 }))).toMatchObject({
        code: 'BAD_INPUT',
        message: expect.stringMatching(new RegExp(`^the external documents of ${urls} come to more than 1000 bytes together, past it at ${base}/padded/(one|two)\\.json$`)),
      });
      expect((await loadSpec({ openApiSpec: urls, maxExternalBytes: 2000 })).external.size).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('reads a JSON description, and a JSON document it references, that start with a UTF-8 byte order mark', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'spec-bom-'));
    try {
      writeFileSync(path.join(dir, 'schemas.json'), `\ufeff${JSON.stringify({ Id: { type: 'string' } })}`);
      const main = path.join(dir, 'main.json');
      writeFileSync(main, `\ufeff${JSON.stringify({
        openapi: '3.0.3',
        info: { title: 't', version: '1' },
        paths: { '/x': { get: { operationId: 'x', parameters: [{ name: 'id', in: 'query', schema: { $ref: 'schemas.json#/Id' } }], responses: { 200: { description: 'ok' } } } } },
      })}`);
      const spec = await loadSpec({ openApiSpec: main });
      const [tool] = new ToolsManager({}, spec).generateTools();
      expect(tool.inputSchema.properties).toEqual({ id: { type: 'string', description: "(query parameter 'id')" } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

