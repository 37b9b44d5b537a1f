import path from 'node:path';
import { ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { loadSpec } from '../../../workers/openapi/load-spec';
import { ApiToolService } from '../../../workers/openapi/service';
import { ToolsManager, type EndpointTool } from '../../../workers/openapi/tools-manager';
import { ArgumentValidator } from '../../../workers/openapi/validate-args';
import { serveFixtures } from '../../helpers/fixture-server';

const ROOT = path.join(__dirname, '..', '..', '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'openapi');
const GITHUB = path.join(ROOT, 'node_modules', '@octokit', 'openapi', 'generated', 'api.github.com.json');

async function toolsOf(file: string): Promise<Map<string, EndpointTool>> {
  const spec = await loadSpec({ openApiSpec: path.join(FIXTURES, file) });
  return new Map(new ToolsManager({}, spec).generateTools().map((t) => [t.toolId, t]));
}

const props = (tool: EndpointTool) => tool.inputSchema.properties as Record<string, Record<string, unknown>>;

describe('input schemas', () => {
  test('list a path parameter as non-empty even where the description says minLength 0', async () => {
    // AWS networkmanager: "" was listed as valid, and the call refused it (an empty segment).
    const openApiSpec = JSON.stringify({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/networks/{id}': {
          get: {
            operationId: 'getNetwork',
            parameters: [
              { name: 'id', in: 'path', required: true, schema: { type: 'string', minLength: 0 } },
              { name: 'q', in: 'query', schema: { type: 'string', minLength: 0 } },
            ],
            responses: { '200': { description: 'ok' } },
          },
        },
      },
    });
    const spec = await loadSpec({ specInputMethod: 'inline', openApiSpec });
    const [tool] = new ToolsManager({}, spec).generateTools();
    expect(props(tool).id.minLength).toBe(1);
    // An optional query parameter keeps what the description says.
    expect(props(tool).q.minLength).toBe(0);
  });

  test("offer no argument for a parameter or body property whose schema is false (OAS 3.1: no value is valid), and refuse it when given", async () => {
    const openApiSpec = JSON.stringify({
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: {
        '/x': {
          post: {
            operationId: 'makeX',
            parameters: [{ name: 'q', in: 'query', schema: false }],
            requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { a: { type: 'string' }, gone: false, any: true } } } } },
            responses: { '200': { description: 'ok' } },
          },
        },
      },
    });
    const spec = await loadSpec({ specInputMethod: 'inline', openApiSpec });
    const [tool] = new ToolsManager({}, spec).generateTools();
    // Both read `{}` before, which takes any value, and went out with it.
    expect(Object.keys(props(tool))).toEqual(['a', 'any']);
    expect(props(tool).any).toEqual({});
    expect(() => new ArgumentValidator().check(tool.toolId, tool.inputSchema, { a: 's', gone: 1 })).toThrow("unknown argument 'gone'; expected 'a', 'any'");
  });

  test('keep same-name parameters of different locations and colliding body properties distinct', async () => {
    const tool = (await toolsOf('collisions.yaml')).get('POST::items__---id')!;
    expect(tool.inputSchema.type).toBe('object');
    expect(Object.keys(props(tool))).toEqual(['id', 'query_id', 'filter_name_', 'header_id', 'body_id', 'label']);
    expect(tool.inputSchema.required).toEqual(['id', 'body_id', 'label']);
    expect([...tool.targets.entries()]).toEqual([
      ['id', { kind: 'parameter', in: 'path', name: 'id' }],
      ['query_id', { kind: 'parameter', in: 'query', name: 'id' }],
      ['filter_name_', { kind: 'parameter', in: 'query', name: 'filter[name]' }],
      ['header_id', { kind: 'parameter', in: 'header', name: 'id' }],
      ['body_id', { kind: 'bodyProperty', name: 'id' }],
      ['label', { kind: 'bodyProperty', name: 'label' }],
    ]);
    expect(props(tool).body_id).toMatchObject({ type: 'integer', description: "(request body property 'id')" });
    expect(props(tool).query_id.description).toBe("(query parameter 'id')");
  });

  test('make a non-object body one body argument', async () => {
    const tools = await toolsOf('collisions.yaml');
    const array = tools.get('PUT::items')!;
    expect(props(array).body).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(array.inputSchema.required).toEqual(['body']);
    expect(array.body).toMatchObject({ shape: 'whole', contentType: 'application/json' });
    const primitive = tools.get('POST::items__count')!;
    expect(props(primitive).body).toMatchObject({ type: 'integer' });
    expect(primitive.body?.contentType).toBe('text/plain');
    const oneOf = (await toolsOf('openapi-3.1.yaml')).get('PUT::notes__---id')!;
    expect(Object.keys(props(oneOf))).toEqual(['id', 'body']);
    // oneOf is listed and checked as anyOf (normalise in input-schema.ts).
    expect((props(oneOf).body.anyOf as unknown[]).length).toBe(2);
  });

  test('resolve $refs, merge allOf, drop readOnly properties and turn nullable into a type list', async () => {
    const tools = await toolsOf('petstore-3.0.yaml');
    const create = tools.get('POST::pets')!;
    expect(Object.keys(props(create))).toEqual(['name', 'tag', 'status', 'owner', 'birthday']);
    expect(create.inputSchema.required).toEqual(['name']);
    expect(props(create).tag.type).toEqual(['string', 'null']);
    expect(props(create).status.enum).toEqual(['available', 'pending', 'sold']);
    expect(props(create).birthday).toEqual({ type: 'string', format: 'date' });
    const show = tools.get('GET::pets__---petId')!;
    expect(props(show).petId).toMatchObject({ type: 'string', description: "The id of the pet to retrieve (path parameter 'petId')" });
    expect(show.inputSchema.required).toEqual(['petId']);
    expect(tools.get('GET::store__inventory')!.inputSchema).toEqual({ type: 'object', properties: {} });
  });

  test('read Swagger 2.0 body and formData parameters', async () => {
    const tools = await toolsOf('swagger-2.0.json');
    const place = tools.get('POST::orders')!;
    expect(place.inputSchema.required).toEqual(['petId', 'quantity']);
    expect(place.body).toMatchObject({ swaggerBodyName: 'order', shape: 'object' });
    const upload = tools.get('POST::uploads__---kind')!;
    expect(upload.body).toMatchObject({ contentType: 'multipart/form-data', swaggerForm: true });
    expect(props(upload).file.type).toBe('string');
    expect(tools.get('POST::login')!.body?.contentType).toBe('application/x-www-form-urlencoded');
    expect(props(tools.get('GET::orders')!).status).toMatchObject({ type: 'array', items: { type: 'string' } });
  });

  test('take every value a real description\'s overlapping oneOf allows, and ask for text where an empty value cannot be sent', async () => {
    const tools = await toolsOf('real-world-shapes.yaml');
    const validator = new ArgumentValidator();
    const check = (toolId: string, args: Record<string, unknown>) => {
      try {
        validator.check(toolId, tools.get(toolId)!.inputSchema, args);
        return undefined;
      } catch (error) {
        return (error as Error).message;
      }
    };
    // A Cat with pet_type also matches the Dog schema (both inherit the discriminator): oneOf refused both.
    expect(check('PATCH::pets', { body: { pet_type: 'Cat', hunts: true, age: 3 } })).toBeUndefined();
    expect(check('PATCH::pets', { body: { pet_type: 'Dog', bark: true, breed: 'Husky' } })).toBeUndefined();
    expect(check('PATCH::pets', { body: { hunts: true } })).toBe("invalid arguments: 'body.pet_type' is required");
    expect(check('POST::shapes', { body: { a: '1', b: '2' } })).toBeUndefined();
    const login = props(tools.get('GET::user__login__---realm')!);
    expect([login.realm.minLength, login.username.minLength, login.note.minLength, login.hint.minLength]).toEqual([1, 1, undefined, undefined]);
    expect(check('GET::user__login__---realm', { realm: 'r', username: '', note: '' })).toMatch(/'username' must NOT have fewer than 1 characters/);
    // An optional body: nothing of it is fine, but once part of it is given its required fields are needed.
    expect(check('POST::token', {})).toBeUndefined();
    expect(check('POST::token', { scope: 3 })).toMatch(/client_id/);
    expect(check('POST::token', { client_id: 'a', client_secret: 'b', scope: 3 })).toBeUndefined();
  });

  test('ask for all the required properties of an optional body of 1,000 properties in a schema of about their size, refusing a partial body twice at most', async () => {
    // Each property listing every required one under it: 3.4 MB, and a validator that ran out of memory.
    const names = Array.from({ length: 1_000 }, (_, i) => `p${i}`);
    const openApiSpec = JSON.stringify({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: { '/wide': { post: { operationId: 'wide', requestBody: { content: { 'application/json': { schema: { type: 'object', required: names.slice(0, 500), properties: Object.fromEntries(names.map((name) => [name, { type: 'string' }])) } } } }, responses: { '200': { description: 'ok' } } } } },
    });
    const spec = await loadSpec({ specInputMethod: 'inline', openApiSpec });
    const [tool] = new ToolsManager({}, spec).generateTools();
    expect(JSON.stringify(tool.inputSchema.dependentRequired).length).toBeLessThan(20_000);
    const validator = new ArgumentValidator();
    const check = (args: Record<string, unknown>) => {
      try {
        validator.check(tool.toolId, tool.inputSchema, args);
        return undefined;
      } catch (error) {
        return (error as Error).message;
      }
    };
    const required = Object.fromEntries(names.slice(0, 500).map((name) => [name, 'x']));
    expect(check({})).toBeUndefined();
    expect(check({ p900: 'x' })).toBe('invalid arguments: arguments must have property p0 when property p900 is present');
    expect(check({ p900: 'x', p0: 'x' })).toMatch(/^invalid arguments: arguments must have properties p1, p2, .*, p499 when property p0 is present$/);
    expect(check({ ...required, p0: undefined, p900: 'x' })).toMatch(/must have property p0 when property p\d+ is present/);
    expect(check({ ...required, p900: 'x' })).toBeUndefined();
    expect(check(required)).toBeUndefined();
  });

  test('are accepted by the MCP SDK schema for every fixture and for GitHub', async () => {
    for (const file of ['petstore-3.0.yaml', 'swagger-2.0.json', 'openapi-3.1.yaml', 'collisions.yaml', 'real-world-shapes.yaml', GITHUB]) {
      const service = await ApiToolService.create({ apiBaseUrl: 'http://127.0.0.1:9', openApiSpec: path.isAbsolute(file) ? file : path.join(FIXTURES, file), specCache: false });
      const parsed = ListToolsResultSchema.parse({ tools: service.tools });
      expect(parsed.tools.length).toBe(service.tools.length);
      for (const tool of service.tools) {
        expect(tool.inputSchema.type).toBe('object');
        expect(Object.keys(tool).sort()).toEqual(expect.arrayContaining(['description', 'inputSchema', 'name']));
        for (const key of Object.keys(tool)) expect(['name', 'title', 'description', 'inputSchema', 'annotations']).toContain(key);
        expect(tool.name).toMatch(/^[a-z0-9-]{1,64}$/);
      }
      await service.close();
    }
  });
});

describe('input schemas of a description split over several files', () => {
  /** The tools of a description by ID and the warnings of their build; `source` a path or URL. */
  async function splitTools(source: string) {
    const spec = await loadSpec({ openApiSpec: source });
    const warnings: string[] = [];
    const tools = new ToolsManager({}, spec).generateTools(false, { warn: (message) => warnings.push(message) });
    return { tools: new Map(tools.map((t) => [t.toolId, t])), warnings };
  }

  test('resolve each $ref against the file it is written in, whether the files are read from disk or from URLs', async () => {
    const served = await serveFixtures();
    try {
      for (const source of [path.join(FIXTURES, 'split', 'openapi.yaml'), `${served.url}/split/openapi.yaml`]) {
        const { tools, warnings } = await splitTools(source);
        expect(warnings).toEqual([]);
        // A parameter in parameters/ whose schema is in its sibling ids.yaml, which goes on into schemas/.
        const petId = { type: 'integer', minimum: 1, description: "the pet's number (path parameter 'petId')" };
        // A path item in paths/ naming that parameter and a schema of schemas/.
        const get = tools.get('GET::pets__---petId')!;
        expect(get.inputSchema).toEqual({
          type: 'object',
          properties: { petId, fields: { type: 'array', items: { type: 'string', enum: ['name', 'tags', 'owner'] }, description: "(query parameter 'fields')" } },
          required: ['petId'],
        });
        // A body in requests/ whose schema is in schemas/, with refs internal to schemas/pet.yaml
        // (#/TagList) and to schemas/owner.yaml (#/Address), not to the root.
        const put = tools.get('PUT::pets__---petId')!;
        expect(put.body).toEqual({ contentType: 'application/json', required: true, shape: 'object' });
        expect(put.inputSchema).toEqual({
          type: 'object',
          properties: {
            petId,
            name: { type: 'string', minLength: 1 },
            tags: { type: 'array', items: { type: 'string' } },
            owner: { type: 'object', properties: { email: { type: 'string', format: 'email' }, address: { type: 'object', properties: { city: { type: 'string' } } } } },
          },
          required: ['petId', 'name'],
        });
        // The root's own path item: a parameter and a body in other folders, the body's schema internal to its file.
        const owner = tools.get('PUT::owners__---ownerId')!;
        expect(props(owner).ownerId).toEqual({ type: 'string', pattern: '^[a-z]+$', minLength: 1, description: "(path parameter 'ownerId')" });
        expect(props(owner).email).toEqual({ type: 'string', format: 'email' });
        expect(owner.inputSchema.required).toEqual(['ownerId', 'email']);
        const tags = tools.get('POST::pets__---petId__tags')!;
        expect(tags.body?.contentType).toBe('multipart/form-data');
        expect(props(tags).tags).toEqual({ type: 'array', items: { type: 'string' } });
      }
    } finally {
      await served.close();
    }
  });

  test('read a split Swagger 2.0 description: parameter files, body parameters and definitions in other folders', async () => {
    const { tools, warnings } = await splitTools(path.join(FIXTURES, 'split-2.0', 'swagger.yaml'));
    expect(warnings).toEqual([]);
    const pet = { name: { type: 'string' }, owner: { type: 'object', properties: { email: { type: 'string', format: 'email' } } } };
    const add = tools.get('POST::pets')!;
    expect(add.body).toEqual({ contentType: 'application/json', required: true, shape: 'object', swaggerBodyName: 'pet' });
    expect(add.inputSchema).toEqual({ type: 'object', properties: pet, required: ['name'] });
    const put = tools.get('PUT::pets__---petId')!;
    expect(put.inputSchema).toEqual({ type: 'object', properties: { petId: { type: 'integer', minimum: 1, description: "(path parameter 'petId')" }, ...pet }, required: ['petId', 'name'] });
    expect(props(tools.get('GET::pets__---petId')!).petId).toMatchObject({ type: 'integer', minimum: 1 });
  });
});

describe('ArgumentValidator', () => {
  const schema = {
    type: 'object' as const,
    properties: { id: { type: 'integer' }, status: { type: 'string', enum: ['a', 'b'] }, when: { type: 'string', format: 'date' } },
    required: ['id'],
  };
  const validator = new ArgumentValidator();
  const check = (args: Record<string, unknown>) => {
    try {
      validator.check('t', schema, args);
      return undefined;
    } catch (error) {
      return error as { code: string; message: string };
    }
  };

  test('accepts valid arguments', () => {
    expect(check({ id: 1, status: 'a', when: '2024-01-31' })).toBeUndefined();
  });

  test('names a missing, mistyped, out-of-enum or unknown argument', () => {
    expect(check({})).toMatchObject({ code: 'BAD_INPUT', message: "invalid arguments: 'id' is required" });
    expect(check({ id: 'x' })).toMatchObject({ code: 'BAD_INPUT', message: 'invalid arguments: \'id\' must be integer, got the string "x"' });
    expect(check({ id: 1, status: 'c' })?.message).toBe('invalid arguments: \'status\' must be one of ["a","b"]');
    // Formats are annotations (JSON Schema 2020-12), but for base64 `byte`.
    expect(check({ id: 1, when: 'tomorrow' })).toBeUndefined();
    expect(check({ id: 1, stauts: 'a' })).toMatchObject({ code: 'BAD_INPUT', message: "unknown argument 'stauts'; expected 'id', 'status', 'when'" });
  });
});
