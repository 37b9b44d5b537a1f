import { loadSpec } from '../../../workers/openapi/load-spec';
import { ToolsManager } from '../../../workers/openapi/tools-manager';

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

