import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { loadSpec } from '../../../workers/openapi/load-spec';
import { ToolsManager } from '../../../workers/openapi/tools-manager';
import { rejection } from '../../helpers/rejection';

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'openapi');
const PETSTORE = path.join(FIXTURES, 'petstore-3.0.yaml');

let server: Server;
let base: string;
/** Requests for /secret.yaml, which the SSRF guard must never let through. */
let secretHits = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/secret.yaml') secretHits++;
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
    } else if (req.url === '/silent.yaml') {
      // Takes the request and never answers.
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
afterAll(() => new Promise<void>((resolve) => {
  server.closeAllConnections();
  server.close(() => resolve());
}));

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

  test('says a URL that never answered timed out, and after how long', async () => {
    const silent = await rejection(loadSpec({ openApiSpec: `${base}/silent.yaml`, timeoutMs: 300 }));
    expect(silent).toMatchObject({ code: 'NETWORK_ERROR', message: `failed to load the OpenAPI spec from ${base}/silent.yaml: timed out after 300 ms` });
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

  test('does not read a file of this machine that a description on the network references: the document is unloaded, BLOCKED', async () => {
    const spec = await loadSpec({ openApiSpec: `${base}/file-ref.yaml` });
    expect(spec.external.size).toBe(0);
    expect(spec.unloaded?.get('file:///etc/passwd')).toEqual({
      code: 'BLOCKED',
      reason: `${base}/file-ref.yaml may not reference a local file (file:///etc/passwd)`,
      shown: '/etc/passwd',
      from: `${base}/file-ref.yaml`,
    });
  });

  test('does not fetch a $ref from a description on the network to a private, loopback or link-local address but of its own host, after DNS and redirects', async () => {
    /** The unloaded documents of a description whose parameter is in `target`. */
    const refused = async (target: string) => [...((await loadSpec({ openApiSpec: `${base}/refs-to/${encodeURIComponent(target)}` })).unloaded?.values() ?? [])];
    // Fetched, the metadata service's answer would have been written into the tools.
    expect(await refused('http://169.254.169.254/latest/meta-data/p.yaml')).toEqual([{
      code: 'BLOCKED',
      reason: `${base}/refs-to/${encodeURIComponent('http://169.254.169.254/latest/meta-data/p.yaml')} may not reference http://169.254.169.254/latest/meta-data/p.yaml: 169.254.169.254 is a private, loopback or link-local address, which a description from the network may not make this machine fetch from (but from its own host); load the description from a file to allow it`,
      shown: 'http://169.254.169.254/latest/meta-data/p.yaml',
      from: `${base}/refs-to/${encodeURIComponent('http://169.254.169.254/latest/meta-data/p.yaml')}`,
    }]);
    expect(await refused('http://[::ffff:a9fe:a9fe]/p.yaml')).toEqual([expect.objectContaining({ code: 'BLOCKED' })]);
    // Another host name for this machine: judged by the address it resolves to, and never asked.
    const asked = secretHits;
    expect(await refused('http://localhost:{port}/secret.yaml')).toEqual([expect.objectContaining({ code: 'BLOCKED', reason: expect.stringMatching(/localhost \((127\.0\.0\.1|::1)\) is a private/) })]);
    expect(secretHits).toBe(asked);
    // Its own host, which then redirects away.
    expect(await refused('/to-metadata.yaml')).toEqual([expect.objectContaining({ code: 'BLOCKED', reason: expect.stringContaining('169.254.169.254 is a private') })]);
    // Its own host: followed.
    const own = await loadSpec({ openApiSpec: `${base}/refs-to/${encodeURIComponent('/p.yaml')}` });
    expect(own.external.get(`${base}/p.yaml`)).toEqual({ p: { name: 'q', in: 'query', schema: { type: 'string' } } });
    expect(own.unloaded).toBeUndefined();
  });

  test('follows $refs into files in a folder whose name needs percent-encoding in a URL, and names a referenced file that is not JSON or YAML', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'spec with space é-'));
    try {
      cpSync(path.join(FIXTURES, 'external'), dir, { recursive: true });
      const spec = await loadSpec({ openApiSpec: path.join(dir, 'main.yaml') });
      expect(spec.external.size).toBe(3);
      writeFileSync(path.join(dir, 'schemas.yaml'), '{"Thing": {"type": "object",, }}');
      const broken = await loadSpec({ openApiSpec: path.join(dir, 'main.yaml') });
      expect(broken.unloaded?.get(pathToFileURL(path.join(dir, 'schemas.yaml')).href)).toEqual({
        code: 'BAD_INPUT',
        reason: expect.stringMatching(/^not valid JSON or YAML \(.+\)$/),
        shown: path.join(dir, 'schemas.yaml'),
        from: path.join(dir, 'main.yaml'),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a referenced document that cannot be loaded is no error: it is unloaded with why, and what it references is never asked for', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'spec-unloaded-'));
    try {
      const at = (name: string) => path.join(dir, name);
      writeFileSync(at('a.yaml'), 'A: {$ref: "./b.yaml#/B"}\n');
      writeFileSync(at('bad.yaml'), '{"X": {"type": "object",, }}');
      writeFileSync(at('big.json'), JSON.stringify({ X: { description: 'x'.repeat(2000) } }));
      const refs = ['./a.yaml#/A', './missing.yaml#/M', `${base}/gone.yaml#/G`, './bad.yaml#/X', './big.json#/X', 'ftp://example.com/f.yaml#/F'];
      writeFileSync(at('main.json'), JSON.stringify({
        openapi: '3.0.3',
        info: { title: 't', version: '1' },
        paths: { '/x': { get: { parameters: refs.map((ref, i) => ({ name: `p${i}`, in: 'query', schema: { $ref: ref } })), responses: { 200: { description: 'ok' } } } } },
      }));
      const spec = await loadSpec({ openApiSpec: at('main.json'), maxBytes: 1500 });
      expect([...spec.external.keys()]).toEqual([pathToFileURL(at('a.yaml')).href]);
      const main = at('main.json');
      expect(Object.fromEntries(spec.unloaded!)).toEqual({
        [pathToFileURL(at('b.yaml')).href]: { code: 'NOT_FOUND', reason: 'file not found', shown: at('b.yaml'), from: at('a.yaml') },
        [pathToFileURL(at('missing.yaml')).href]: { code: 'NOT_FOUND', reason: 'file not found', shown: at('missing.yaml'), from: main },
        [`${base}/gone.yaml`]: { code: 'NETWORK_ERROR', reason: 'HTTP 404', shown: `${base}/gone.yaml`, from: main },
        [pathToFileURL(at('bad.yaml')).href]: { code: 'BAD_INPUT', reason: expect.stringMatching(/^not valid JSON or YAML \(/), shown: at('bad.yaml'), from: main },
        [pathToFileURL(at('big.json')).href]: { code: 'BAD_INPUT', reason: 'larger than 1500 bytes', shown: at('big.json'), from: main },
        'ftp://example.com/f.yaml': { code: 'BAD_INPUT', reason: 'cannot follow the $ref to ftp://example.com/f.yaml (only files and http(s) URLs are read)', shown: 'ftp://example.com/f.yaml', from: main },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a host that does not answer is asked once: its other documents fail at once, saying so', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const dead = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const spec = await loadSpec({
      specInputMethod: 'inline',
      openApiSpec: JSON.stringify({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths: { '/x': { get: { parameters: [{ $ref: `${dead}/one.yaml#/P` }, { $ref: `${dead}/two.yaml#/P` }], responses: { 200: { description: 'ok' } } } } } }),
    });
    // Whichever is asked first.
    const reasons = [...spec.unloaded!.values()].map((doc) => [doc.code, doc.reason]).sort();
    expect(reasons).toEqual([['NETWORK_ERROR', 'ECONNREFUSED'], ['NETWORK_ERROR', `${dead} did not answer for another document (ECONNREFUSED)`]]);
  });

  test('what the description as a whole may cost stays an error, documents that failed counted: more than 100 of them, or a cancelled load', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'spec-many-'));
    try {
      const parameters = Array.from({ length: 101 }, (_, i) => ({ $ref: `./missing-${i}.yaml#/P` }));
      const file = path.join(dir, 'main.json');
      writeFileSync(file, JSON.stringify({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths: { '/x': { get: { parameters, responses: { 200: { description: 'ok' } } } } } }));
      expect(await rejection(loadSpec({ openApiSpec: file }))).toMatchObject({ code: 'BAD_INPUT', message: `${file} references more than 100 external documents` });
      writeFileSync(file, JSON.stringify({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths: { '/x': { get: { parameters: [{ $ref: `${base}/p.yaml#/p` }], responses: { 200: { description: 'ok' } } } } } }));
      const cancelled = new AbortController();
      cancelled.abort();
      expect(await rejection(loadSpec({ openApiSpec: file, signal: cancelled.signal }))).toMatchObject({ code: 'NETWORK_ERROR' });
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

