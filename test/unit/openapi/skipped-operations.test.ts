import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadSpec } from '../../../workers/openapi/load-spec';
import { ToolsManager } from '../../../workers/openapi/tools-manager';
import { tempDir } from '../../helpers/temp';

const ok = { 200: { description: 'ok' } };
const body = (schema: unknown) => ({ content: { 'application/json': { schema } } });

/** The tools of a description given as text, and the warnings of their build. */
async function build(text: string) {
  const spec = await loadSpec({ specInputMethod: 'inline', openApiSpec: text });
  const warnings: string[] = [];
  const tools = new ToolsManager({}, spec).generateTools(false, { warn: (message) => warnings.push(message) });
  return { ids: tools.map((t) => t.toolId), warnings };
}

describe('an operation the description makes unusable', () => {
  test('is skipped with a warning naming it and why, and every other operation still becomes a tool', async () => {
    const depth = 10_000;
    const deep = `${'{"type":"object","properties":{"a":'.repeat(depth)}{"type":"string"}${'}}'.repeat(depth)}`;
    const schemas: Record<string, unknown> = { S5000: { type: 'string' } };
    for (let i = 0; i < 5000; i++) schemas[`S${i}`] = { $ref: `#/components/schemas/S${i + 1}` };
    const spec = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/loop': { post: { requestBody: { $ref: '#/components/requestBodies/B' }, responses: ok } },
        '/escape': { post: { requestBody: body({ $ref: '#/components/schemas/%E0%A4%A' }), responses: ok } },
        '/chain': { get: { parameters: [{ name: 'q', in: 'query', schema: { $ref: '#/components/schemas/S0' } }], responses: ok } },
        '/deep': { post: { requestBody: body('DEEP'), responses: ok } },
        '/fine': { get: { parameters: [{ name: 'q', in: 'query', schema: { type: 'string' } }], responses: ok } },
      },
      components: { requestBodies: { B: { $ref: '#/components/requestBodies/B' } }, schemas },
    };
    const { ids, warnings } = await build(JSON.stringify(spec).replace('"DEEP"', deep));
    // A broken %-escape is an unresolved ref (refs.ts): its operation stays, with a warning.
    expect(ids).toEqual(['POST::escape', 'GET::fine']);
    expect(warnings).toEqual(expect.arrayContaining([
      'operation skipped: POST /loop: a $ref chain loops (or is longer than 32 hops)',
      'POST /escape: unresolved reference #/components/schemas/%E0%A4%A',
      'operation skipped: GET /chain: its schema nests too deep',
      'operation skipped: POST /deep: its schema nests too deep',
    ]));
  });

  test('a header parameter whose name is no HTTP header name is left out saying so, or its operation skipped when required', async () => {
    const header = (name: string, required: boolean) => ({ name, in: 'header', required, schema: { type: 'string' } });
    const spec = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/h': { get: { parameters: [header('bad header', false), header('X-Good', false)], responses: ok } },
        '/r': { get: { parameters: [header('h\r\nX-Injected: 1', true)], responses: ok } },
      },
    };
    const loaded = await loadSpec({ specInputMethod: 'inline', openApiSpec: JSON.stringify(spec) });
    const warnings: string[] = [];
    const tools = new ToolsManager({}, loaded).generateTools(false, { warn: (message) => warnings.push(message) });
    expect(tools.map((t) => [t.toolId, Object.keys(t.inputSchema.properties!)])).toEqual([['GET::h', ['X-Good']]]);
    expect(warnings).toEqual(expect.arrayContaining([
      'GET /h: parameter left out: header parameter "bad header" is not a valid HTTP header name',
      'operation skipped: GET /r: header parameter "h\\r\\nX-Injected: 1" is not a valid HTTP header name',
    ]));
  });

  test('an operation or a path item that is not an object is reported, not dropped silently', async () => {
    const { ids, warnings } = await build(JSON.stringify({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: { '/x': { get: 'nope', post: [], put: null, patch: { responses: ok } }, '/y': null, '/z': [] },
    }));
    expect(ids).toEqual(['PATCH::x']);
    expect(warnings).toEqual(expect.arrayContaining([
      'operation skipped: GET /x: the operation is a string, not an object',
      'operation skipped: POST /x: the operation is an array, not an object',
      'operation skipped: PUT /x: the operation is null, not an object',
      'operation skipped: /y: the path item is null, not an object',
      'operation skipped: /z: the path item is an array, not an object',
    ]));
  });
});


describe('an operation that needs an external document that could not be loaded', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      res.statusCode = 404;
      res.end('no');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** The tools built from `files` (name → content) written into a fresh folder, main.json first. */
  async function fromFiles(files: Record<string, unknown>) {
    const dir = tempDir('spec-unloaded-');
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
    }
    const spec = await loadSpec({ openApiSpec: path.join(dir, 'main.json') });
    const warnings: Array<{ message: string; fields?: Record<string, unknown> }> = [];
    const tools = new ToolsManager({}, spec).generateTools(false, { warn: (message, fields) => warnings.push({ message, fields }) });
    return { dir, tools, ids: tools.map((t) => t.toolId), messages: warnings.map((w) => w.message), warnings };
  }
  const described = (paths: Record<string, unknown>, components?: Record<string, unknown>) => ({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths, ...(components ? { components } : {}) });

  test('is skipped when its arguments need it, naming the operation, the ref, where it is written and why; the others stay tools', async () => {
    const { dir, ids, messages, warnings } = await fromFiles({
      'main.json': described({
        '/pets': { post: { requestBody: body({ $ref: './missing.yaml#/Pet' }), responses: ok }, get: { responses: ok } },
        '/owners': { get: { parameters: [{ name: 'q', in: 'query', schema: { $ref: './a.yaml#/Q' } }], responses: ok } },
        '/whole': { $ref: './paths.yaml#/Whole' },
        '/health': { get: { responses: ok } },
      }),
      // A loads; B, which it references, does not exist.
      'a.yaml': 'Q: {type: object, properties: {b: {$ref: "./b.yaml#/B"}}}\n',
    });
    expect(ids).toEqual(['GET::pets', 'GET::health']);
    const at = (name: string) => path.join(dir, name);
    expect(messages).toEqual(expect.arrayContaining([
      `external document ${at('missing.yaml')}, referenced from ${at('main.json')}, could not be loaded: file not found; operations whose arguments need it are skipped`,
      `external document ${at('b.yaml')}, referenced from ${at('a.yaml')}, could not be loaded: file not found; operations whose arguments need it are skipped`,
      `operation skipped: POST /pets: $ref './missing.yaml#/Pet' in ${at('main.json')}: ${at('missing.yaml')} could not be loaded (file not found)`,
      `operation skipped: GET /owners: $ref './b.yaml#/B' in ${at('a.yaml')}: ${at('b.yaml')} could not be loaded (file not found)`,
      `operation skipped: /whole: $ref './paths.yaml#/Whole' in ${at('main.json')}: ${at('paths.yaml')} could not be loaded (file not found)`,
    ]));
    expect(warnings.find((w) => w.message.startsWith('operation skipped: POST /pets'))?.fields).toEqual({
      operation: 'POST /pets',
      reason: `$ref './missing.yaml#/Pet' in ${at('main.json')}: ${at('missing.yaml')} could not be loaded (file not found)`,
      ref: './missing.yaml#/Pet',
      document: at('missing.yaml'),
      code: 'NOT_FOUND',
    });
  });

  test('is skipped naming the file its $ref is written in when that is a parameter, a body or a path item in another folder', async () => {
    const { dir, ids, messages, warnings } = await fromFiles({
      'main.json': described({
        '/a': { get: { parameters: [{ $ref: './parameters/p.json#/P' }], responses: ok } },
        '/b': { put: { requestBody: { $ref: './bodies/b.json#/B' }, responses: ok } },
        '/c': { $ref: './paths/c.json#/C' },
        '/health': { get: { responses: ok } },
      }),
      // Each names a file beside itself that does not exist.
      'parameters/p.json': { P: { name: 'q', in: 'query', required: true, schema: { $ref: './gone.json#/Q' } } },
      'bodies/b.json': { B: { content: { 'application/json': { schema: { $ref: './gone.json#/B' } } } } },
      'paths/c.json': { C: { get: { parameters: [{ name: 'q', in: 'query', schema: { $ref: '../schemas/gone.json#/Q' } }], responses: ok } } },
    });
    expect(ids).toEqual(['GET::health']);
    const at = (name: string) => path.join(dir, name);
    expect(messages).toEqual(expect.arrayContaining([
      `operation skipped: GET /a: $ref './gone.json#/Q' in ${at('parameters/p.json')}: ${at('parameters/gone.json')} could not be loaded (file not found)`,
      `operation skipped: PUT /b: $ref './gone.json#/B' in ${at('bodies/b.json')}: ${at('bodies/gone.json')} could not be loaded (file not found)`,
      `operation skipped: GET /c: $ref '../schemas/gone.json#/Q' in ${at('paths/c.json')}: ${at('schemas/gone.json')} could not be loaded (file not found)`,
    ]));
    expect(warnings.find((w) => w.message.startsWith('operation skipped: GET /a'))?.fields).toMatchObject({ ref: './gone.json#/Q', document: at('parameters/gone.json'), code: 'NOT_FOUND' });
  });

  test('beside a path item $ref it needs: the operations written beside the $ref are skipped too, each named', async () => {
    const header = { name: 'X-Shop', in: 'header', schema: { type: 'string' } };
    const petId = { name: 'petId', in: 'path', required: true, schema: { type: 'integer' } };
    const { dir, tools, messages, warnings } = await fromFiles({
      'main.json': described({
        '/pets': { $ref: './paths/gone.json', parameters: [header], post: { requestBody: body({ type: 'object', properties: { name: { type: 'string' } } }), responses: ok } },
        '/pets/{petId}': { $ref: './paths/gone.json#/Pet', parameters: [petId], put: { responses: ok } },
        '/tags': { $ref: '#/components/x-paths/Missing', get: { responses: ok } },
        '/health': { get: { responses: ok } },
      }),
    });
    // What the $ref names may declare parameters (required ones too): no tool rather than a partial one.
    expect(tools.map((t) => t.toolId)).toEqual(['GET::health']);
    const at = (name: string) => path.join(dir, name);
    const gone = (ref: string) => `$ref '${ref}' in ${at('main.json')}: ${at('paths/gone.json')} could not be loaded (file not found)`;
    expect(messages).toEqual(expect.arrayContaining([
      `operation skipped: /pets: ${gone('./paths/gone.json')}`,
      `operation skipped: POST /pets: ${gone('./paths/gone.json')}`,
      `operation skipped: /pets/{petId}: ${gone('./paths/gone.json#/Pet')}`,
      `operation skipped: PUT /pets/{petId}: ${gone('./paths/gone.json#/Pet')}`,
      "operation skipped: /tags: unresolvable $ref '#/components/x-paths/Missing'",
      "operation skipped: GET /tags: unresolvable $ref '#/components/x-paths/Missing'",
    ]));
    expect(warnings.find((w) => w.message.startsWith('operation skipped: POST /pets'))?.fields).toMatchObject({ ref: './paths/gone.json', document: at('paths/gone.json'), code: 'NOT_FOUND' });
  });

  test('is skipped when only its request plan needs it (a multipart encoding), not its input schema', async () => {
    const multipart = { content: { 'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string' } } }, encoding: { file: { headers: { 'X-Part': { $ref: './gone.yaml#/H' } } } } } } };
    const { ids, messages } = await fromFiles({ 'main.json': described({ '/upload': { post: { requestBody: multipart, responses: ok } }, '/health': { get: { responses: ok } } }) });
    expect(ids).toEqual(['GET::health']);
    expect(messages).toEqual(expect.arrayContaining([expect.stringMatching(/^operation skipped: POST \/upload: \$ref '\.\/gone\.yaml#\/H' in .*main\.json: .*gone\.yaml could not be loaded \(file not found\)$/)]));
  });

  test('is kept when it needs it only in a response (a URL answering 404) or an unused component, with the document warned about', async () => {
    const { tools, messages } = await fromFiles({
      'main.json': described(
        {
          '/pets': {
            get: {
              parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer' } }],
              responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: `${base}/gone.yaml#/Pets` } } } }, 404: { $ref: './responses.yaml#/NotFound' } },
            },
          },
        },
        { schemas: { Unused: { $ref: './unused.yaml#/U' } } },
      ),
    });
    expect(tools.map((t) => [t.toolId, Object.keys(t.inputSchema.properties!)])).toEqual([['GET::pets', ['limit']]]);
    // Its request plan is whole: the 2xx media types go to Accept.
    expect(tools[0].planSpec).toMatchObject({ paths: { '/pets': { get: { responses: { 200: { content: { 'application/json': {} } } } } } } });
    expect(messages.filter((m) => m.startsWith('operation skipped'))).toEqual([]);
    expect(messages).toEqual(expect.arrayContaining([
      expect.stringMatching(new RegExp(`^external document ${base}/gone\\.yaml, referenced from .*main\\.json, could not be loaded: HTTP 404;`)),
      expect.stringMatching(/^external document .*responses\.yaml, referenced from .*main\.json, could not be loaded: file not found;/),
      expect.stringMatching(/^external document .*unused\.yaml, referenced from .*main\.json, could not be loaded: file not found;/),
    ]));
  });
});
