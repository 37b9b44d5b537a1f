import path from 'node:path';
import { errorCodeOf } from '../../../protocol/results';
import type { WorkerLogger } from '../../../protocol/worker-runtime';
import { ApiToolService, type ApiServiceOptions } from '../../../workers/openapi/service';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'openapi');
const GITHUB = path.join(__dirname, '..', '..', '..', 'node_modules', '@octokit', 'openapi', 'generated', 'api.github.com.json');

let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());

function recorder(): { log: WorkerLogger; warnings: string[] } {
  const warnings: string[] = [];
  const noop = () => undefined;
  return { warnings, log: { debug: noop, info: noop, error: noop, warn: (msg) => warnings.push(msg) } };
}

async function service(options: Partial<ApiServiceOptions>, file = 'petstore-3.0.yaml') {
  const { log, warnings } = recorder();
  const s = await ApiToolService.create({ apiBaseUrl: `${upstream.url}/v1`, openApiSpec: path.isAbsolute(file) ? file : path.join(FIXTURES, file), specCache: false, ...options }, log);
  return { s, warnings, names: s.tools.map((t) => t.name) };
}

const META = ['list-api-endpoints', 'get-api-endpoint-schema', 'invoke-api-endpoint'];

describe('modes and filters', () => {
  test('all lists every endpoint tool plus the three meta-tools', async () => {
    const { s, names, warnings } = await service({});
    expect(warnings).toContain('3 tool name(s) abbreviated, e.g. listPets → lst-pets, createPets → crt-pets, deletePet → del-pet');
    expect(names).toEqual(['lst-pets', 'crt-pets', 'show-pet-by-id', 'del-pet', 'get-inventory', ...META]);
    expect(s.getStats()).toEqual({ tools: { total: 8, endpointTools: 5, metaTools: 3 }, openapi: { version: '3.0.3', paths: 3, operations: 5 }, filtering: { applied: false } });
    await s.close();
  });

  test('dynamic lists only the meta-tools', async () => {
    const { s, names } = await service({ toolsMode: 'dynamic' });
    expect(names).toEqual(META);
    expect(s.getStats().tools).toEqual({ total: 3, endpointTools: 0, metaTools: 3 });
    await s.close();
  });

  test('explicit lists only the tools named by ID or name', async () => {
    const { s, names } = await service({ toolsMode: 'explicit', includeTools: ['GET::pets', 'del-pet', 'invoke-api-endpoint'] });
    expect(names).toEqual(['lst-pets', 'del-pet', 'invoke-api-endpoint']);
    await s.close();
  });

  test('filters by tag (case-sensitive), method and resource, combined', async () => {
    expect((await service({ includeTags: ['store'] })).names).toEqual(['get-inventory', ...META]);
    const wrongCase = await service({ includeTags: ['Store'] });
    expect(wrongCase.names).toEqual(META);
    expect(wrongCase.warnings).toEqual(expect.arrayContaining(["no operations for tag 'Store' (tags are case-sensitive: the description has 'store')", 'no tools left after filtering']));
    expect((await service({ includeOperations: ['delete'] })).names).toEqual(['del-pet', ...META]);
    expect((await service({ includeResources: ['pets'] })).names).toEqual(['lst-pets', 'crt-pets', 'show-pet-by-id', 'del-pet', ...META]);
    expect((await service({ includeResources: ['/pets'], includeOperations: ['GET'] })).names).toEqual(['lst-pets', 'show-pet-by-id', ...META]);
    const filtered = await service({ includeTags: ['pets'], includeOperations: ['GET'] });
    expect(filtered.s.getStats().filtering).toEqual({ applied: true, includedTags: ['pets'], includedOperations: ['GET'] });
  });

  test('warns when explicit mode has no includeTools', async () => {
    const { names, warnings } = await service({ toolsMode: 'explicit' });
    expect(names).toEqual([]);
    expect(warnings).toContain('toolsMode explicit without includeTools: no endpoint tools');
  });

  test('renames later duplicate names with a warning', async () => {
    const { names, warnings } = await service({}, 'collisions.yaml');
    expect(names).toEqual(expect.arrayContaining(['get-usrs', 'get-usrs-2', 'get-usrs-3']));
    expect(warnings.filter((w) => w.startsWith("duplicate tool name 'get-usrs'"))).toHaveLength(2);
  });

  test('logs the first 20 renames one by one and the rest in one line', async () => {
    // 30 operations without operationIds and with one summary: all named alike.
    const paths = Array.from({ length: 30 }, (_, i) => `  /same${i}:\n    get:\n      summary: Get the thing\n      responses: {'200': {description: ok}}`).join('\n');
    const { names, warnings } = await service({ specInputMethod: 'inline', openApiSpec: `openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n${paths}\n` });
    expect(new Set(names).size).toBe(33);
    const renames = warnings.filter((w) => w.startsWith('duplicate tool name'));
    expect(renames).toHaveLength(20);
    expect(warnings).toContainEqual(expect.stringMatching(/^9 more duplicate tool name\(s\) given a suffix, e\.g\. '[a-z-]+-22', /));
  });

  test('refuses names over 64 characters with disableAbbreviation, listing them', async () => {
    const long = `openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      operationId: ${'veryLong'.repeat(10)}\n      responses: {'200': {description: ok}}\n`;
    await expect(ApiToolService.create({ apiBaseUrl: upstream.url, specInputMethod: 'inline', openApiSpec: long, disableAbbreviation: true, specCache: false })).rejects.toMatchObject({
      code: 'BAD_INPUT',
      message: expect.stringContaining('exceed 64 characters: very-longvery-long'),
    });
  });
});

describe('calls', () => {
  test('validate arguments before any upstream request and name the bad one', async () => {
    const { s } = await service({});
    const before = upstream.requests.length;
    await expect(s.handle('lst-pets', { limit: 'ten' })).rejects.toMatchObject({ code: 'BAD_INPUT', message: 'invalid arguments: \'limit\' must be integer, got the string "ten"' });
    await expect(s.handle('show-pet-by-id', {})).rejects.toMatchObject({ code: 'BAD_INPUT', message: "invalid arguments: 'petId' is required" });
    expect(upstream.requests.length).toBe(before);
    await s.close();
  });

  test('enforce every keyword of OpenAPI schemas: 3.0 exclusive bounds, discriminated oneOf, 3.1 (JSON Schema 2020-12)', async () => {
    const openapi30 = JSON.stringify({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/payments': {
          post: {
            operationId: 'pay',
            requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['amount', 'currency'], properties: { amount: { type: 'number', minimum: 0, exclusiveMinimum: true }, currency: { type: 'string', enum: ['USD', 'EUR'] }, ref: { type: 'string', pattern: '(?i)^abc$' }, month: { type: 'string', pattern: '^\\d{4}\\-\\d{2}$' }, kind: { enum: [{ 'x-kind': 'a', nullable: true }] } } } } } },
            responses: { '200': { description: 'ok' } },
          },
        },
        '/pets': {
          post: {
            operationId: 'addPet',
            requestBody: { content: { 'application/json': { schema: { oneOf: [{ $ref: '#/components/schemas/Dog' }, { $ref: '#/components/schemas/Cat' }], discriminator: { propertyName: 'petType' } } } } },
            responses: { '200': { description: 'ok' } },
          },
        },
        'x-internal': { get: { operationId: 'hidden', responses: { '200': { description: 'ok' } } } },
      },
      components: {
        schemas: {
          Dog: { type: 'object', required: ['petType'], properties: { petType: { type: 'string' }, bark: { type: 'boolean' } } },
          Cat: { type: 'object', required: ['petType'], properties: { petType: { type: 'string' } } },
        },
      },
    });
    const { s, names } = await service({ specInputMethod: 'inline', openApiSpec: openapi30 });
    expect(names).not.toContain('hidden');
    expect(s.getStats().openapi.paths).toBe(2);
    const before = upstream.requests.length;
    await expect(s.handle('pay', {})).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining("'amount' is required") });
    await expect(s.handle('pay', { amount: 'lots', currency: 'XXX' })).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringMatching(/'amount' must be number.*'currency' must be one of/) });
    await expect(s.handle('pay', { amount: 0, currency: 'USD' })).rejects.toMatchObject({ code: 'BAD_INPUT', message: "invalid arguments: 'amount' must be > 0" });
    expect(upstream.requests.length).toBe(before);
    expect((await s.handle('pay', { amount: 1, currency: 'USD', ref: 'ABC' })).isError).toBeUndefined();
    // A pattern valid without the u flag only is enforced; enum values are kept as written.
    expect((await s.handle('pay', { amount: 1, currency: 'USD', month: '2024-05', kind: { 'x-kind': 'a', nullable: true } })).isError).toBeUndefined();
    await expect(s.handle('pay', { amount: 1, currency: 'USD', month: '2024_05' })).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining("'month'") });
    expect((await s.handle('add-pet', { body: { petType: 'Dog', bark: true } })).isError).toBeUndefined();
    await expect(s.handle('add-pet', { body: { bark: true } })).rejects.toMatchObject({ code: 'BAD_INPUT' });
    await s.close();

    const swagger = JSON.stringify({
      swagger: '2.0',
      info: { title: 't', version: '1' },
      paths: { '/items': { get: { operationId: 'listItems', parameters: [{ name: 'limit', in: 'query', type: 'integer', minimum: 0, exclusiveMinimum: true }], responses: { '200': { description: 'ok' } } } } },
    });
    const v2 = await service({ specInputMethod: 'inline', openApiSpec: swagger });
    await expect(v2.s.handle(v2.names[0], { limit: 0 })).rejects.toMatchObject({ code: 'BAD_INPUT', message: "invalid arguments: 'limit' must be > 0" });
    expect((await v2.s.handle(v2.names[0], { limit: 1 })).isError).toBeUndefined();
    await v2.s.close();

    const openapi31 = JSON.stringify({
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: { '/points': { post: { operationId: 'addPoint', requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { point: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false }, range: { type: 'object', properties: { min: { type: 'number' }, max: { type: 'number' } }, dependentRequired: { min: ['max'] } } } } } } }, responses: { '200': { description: 'ok' } } } } },
    });
    const v31 = await service({ specInputMethod: 'inline', openApiSpec: openapi31 });
    expect((await v31.s.handle('add-point', { point: ['a', 1], range: { min: 1, max: 2 } })).isError).toBeUndefined();
    await expect(v31.s.handle('add-point', { point: ['a', 1, 2] })).rejects.toMatchObject({ code: 'BAD_INPUT' });
    await expect(v31.s.handle('add-point', { range: { min: 1 } })).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining('max') });
    await v31.s.close();
  });

  test('send the request and return JSON as text plus structuredContent', async () => {
    const { s } = await service({ headers: { 'X-Api-Key': 'secret' } });
    const result = await s.handle('show-pet-by-id', { petId: 'a b' });
    const echo = (result.structuredContent as { echo: { url: string; method: string; headers: Record<string, string> } }).echo;
    expect(echo).toMatchObject({ method: 'GET', url: '/v1/pets/a%20b' });
    expect(echo.headers['x-api-key']).toBe('secret');
    await expect(s.handle('no-such-tool', {})).rejects.toMatchObject({ code: 'UNKNOWN_TOOL' });
    await s.close();
  });
});

describe('meta-tools', () => {
  test('list-api-endpoints filters and pages a large API', async () => {
    const { s } = await service({ toolsMode: 'dynamic' }, GITHUB);
    const first = (await s.handle('list-api-endpoints', {})).structuredContent as { total: number; nextOffset: number; endpoints: unknown[] };
    expect(first.total).toBe(1223);
    expect(first.endpoints).toHaveLength(50);
    expect(first.nextOffset).toBe(50);
    const issues = (await s.handle('list-api-endpoints', { tag: 'issues', method: 'post', limit: 200 })).structuredContent as { total: number; endpoints: Array<{ method: string; tags: string[] }> };
    expect(issues.total).toBeGreaterThan(5);
    expect(issues.endpoints.every((e) => e.method === 'POST' && e.tags.includes('issues'))).toBe(true);
    const text = (await s.handle('list-api-endpoints', { search: 'create an issue' })).content[0] as { text: string };
    expect(text.text).toContain('POST::repos__---owner__---repo__issues');
    expect(text.text.length).toBeLessThan(20_000);
    await s.close();
  });

  test('list-api-endpoints and get-api-endpoint-schema refuse arguments they do not take, naming the one meant and those they take', async () => {
    const { s } = await service({ toolsMode: 'dynamic' });
    await expect(s.handle('list-api-endpoints', { query: 'pets' })).rejects.toMatchObject({
      code: 'BAD_INPUT',
      message: "unknown argument 'query' (did you mean 'search'?); list-api-endpoints takes 'tag', 'method', 'path', 'search', 'limit', 'offset'",
    });
    for (const [name, meant] of [['q', 'search'], ['keyword', 'search'], ['tags', 'tag'], ['page', 'offset'], ['methods', 'method'], ['Limit', 'limit']]) {
      await expect(s.handle('list-api-endpoints', { [name]: 'x' })).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining(`'${name}' (did you mean '${meant}'?)`) });
    }
    await expect(s.handle('list-api-endpoints', { zz: 1, search: 'pets' })).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringMatching(/^unknown argument 'zz'; /) });
    await expect(s.handle('get-api-endpoint-schema', { toolId: 'GET::nope', status: '200' })).rejects.toMatchObject({
      code: 'BAD_INPUT',
      message: "unknown argument 'status' (did you mean 'response'?); get-api-endpoint-schema takes 'toolId', 'response', 'at'",
    });
    expect((await s.handle('list-api-endpoints', { search: 'pets', limit: 1 })).isError).toBeUndefined();
    await s.close();
  });

  test('list-api-endpoints search takes words, ranks endpoints matching more of them first and leaves out the rest', async () => {
    const { s } = await service({ toolsMode: 'dynamic' }, GITHUB);
    const ids = async (search: string) => ((await s.handle('list-api-endpoints', { search, limit: 200 })).structuredContent as { endpoints: Array<{ toolId: string }> }).endpoints.map((e) => e.toolId);
    // The tool is issues-create ("Create an issue"): the words match in another order.
    expect((await ids('create issue')).slice(0, 10)).toContain('POST::repos__---owner__---repo__issues');
    expect((await ids('open an issue')).slice(0, 200)).toContain('POST::repos__---owner__---repo__issues');
    expect((await ids('list my repositories')).slice(0, 10)).toContain('GET::user__repos');
    expect(await ids('zzqx nothing-like-this')).toEqual([]);
    await s.close();
  });

  test('get-api-endpoint-schema returns resolved schemas', async () => {
    const { s } = await service({ toolsMode: 'dynamic' });
    const schema = (await s.handle('get-api-endpoint-schema', { toolId: 'GET::pets__---petId' })).structuredContent as Record<string, any>;
    expect(schema).toMatchObject({ toolId: 'GET::pets__---petId', name: 'show-pet-by-id', method: 'GET', path: '/pets/{petId}' });
    expect(schema.inputSchema.properties.petId).toMatchObject({ type: 'string', description: expect.stringContaining("(path parameter 'petId')") });
    expect(schema.responses['200']).toMatchObject({ contentType: 'application/json' });
    expect(schema.responses['200'].schema.properties.name).toEqual({ type: 'string' });
    expect(JSON.stringify(schema)).not.toContain('$ref');
    const missing = await s.handle('get-api-endpoint-schema', { toolId: 'GET::nope' });
    expect(missing.isError).toBe(true);
    expect(errorCodeOf(missing)).toBe('NOT_FOUND');
    await s.close();
  });

  test('get-api-endpoint-schema stays within its size when shared refs would write out exponentially', async () => {
    // 20 schemas, each using the one before twice: a small graph, 2^20 copies once written out.
    const schemas: Record<string, unknown> = { s0: { type: 'string' } };
    for (let i = 1; i < 20; i++) schemas[`s${i}`] = { type: 'object', properties: { left: { $ref: `#/components/schemas/s${i - 1}` }, right: { $ref: `#/components/schemas/s${i - 1}` }, label: { type: 'string' } } };
    const body = { content: { 'application/json': { schema: { $ref: '#/components/schemas/s19' } } } };
    const spec = { openapi: '3.0.3', info: { title: 'dag', version: '1' }, paths: { '/dag': { post: { operationId: 'postDag', requestBody: body, responses: { 200: { description: 'ok', ...body } } } } }, components: { schemas } };
    const { s } = await service({ toolsMode: 'dynamic', specInputMethod: 'inline', openApiSpec: JSON.stringify(spec) });
    const answer = await s.handle('get-api-endpoint-schema', { toolId: 'POST::dag' });
    expect(JSON.stringify(answer).length).toBeLessThanOrEqual(40_000);
    const schema = answer.structuredContent as Record<string, any>;
    expect(schema.inputSchema.properties.left.properties.left.type).toBe('object');
    expect(JSON.stringify(schema)).toMatch(/x-left-out|not written out/);
    await s.close();
  });

  test('get-api-endpoint-schema answers the same whatever was asked before', async () => {
    const schemas: Record<string, unknown> = { s0: { type: 'string' } };
    for (let i = 1; i < 6; i++) schemas[`s${i}`] = { type: 'object', properties: { left: { $ref: `#/components/schemas/s${i - 1}` }, right: { $ref: `#/components/schemas/s${i - 1}` } } };
    // /big spends the deref budget on its own properties before it reaches s5, which /small writes out whole.
    const pad = { type: 'object', properties: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`p${i}`, { type: 'string' }])) };
    schemas.big = { type: 'object', properties: { pad, x: { $ref: '#/components/schemas/s5' } } };
    const op = (name: string) => ({ post: { requestBody: { content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } }, responses: { 200: { description: 'ok' } } } });
    const spec = { openapi: '3.0.3', info: { title: 'dag', version: '1' }, paths: { '/big': op('big'), '/small': op('s5') }, components: { schemas } };
    const { s } = await service({ toolsMode: 'dynamic', specInputMethod: 'inline', openApiSpec: JSON.stringify(spec) });
    const ask = async (toolId: string) => JSON.stringify(await s.handle('get-api-endpoint-schema', { toolId }));
    const first = await ask('POST::big');
    await ask('POST::small');
    expect(await ask('POST::big')).toBe(first);
    await s.close();
  });

  test('meta-tools find an endpoint by its method in any case, or by method and path, and suggest one for an unknown toolId', async () => {
    const { s } = await service({ toolsMode: 'dynamic' });
    const echo = async (toolId: string) => ((await s.handle('invoke-api-endpoint', { toolId, parameters: { petId: '42' } })).structuredContent as { echo: { method: string; url: string } }).echo;
    expect(await echo('get::pets__---petId')).toMatchObject({ method: 'GET', url: '/v1/pets/42' });
    expect(await echo('Delete::pets__---petId')).toMatchObject({ method: 'DELETE', url: '/v1/pets/42' });
    expect(await echo('GET /pets/{petId}')).toMatchObject({ method: 'GET', url: '/v1/pets/42' });
    expect(((await s.handle('get-api-endpoint-schema', { toolId: 'get::pets__---petId' })).structuredContent as { toolId: string }).toolId).toBe('GET::pets__---petId');
    const message = async (toolId: string) => {
      const result = await s.handle('get-api-endpoint-schema', { toolId });
      expect(errorCodeOf(result)).toBe('NOT_FOUND');
      return (result.content[0] as { text: string }).text;
    };
    expect(await message('POST::pets__---petId')).toContain("no endpoint with tool ID or name 'POST::pets__---petId'; its path /pets/{petId} has GET, DELETE: GET::pets__---petId, DELETE::pets__---petId");
    expect(await message('/pets/{petId}')).toContain('its path /pets/{petId} has GET, DELETE');
    expect(await message('GET::petz')).toContain("did you mean GET::pets");
    expect(await message('lst-petz')).toContain("did you mean lst-pets");
    expect(await message('zzzzzzzzzzzzzzzzzzzz')).not.toContain('did you mean');
    await s.close();
  });

  test('invoke-api-endpoint validates and fills path templates', async () => {
    const { s } = await service({ toolsMode: 'dynamic' });
    const result = await s.handle('invoke-api-endpoint', { toolId: 'GET::pets__---petId', parameters: { petId: '42' } });
    expect((result.structuredContent as { echo: { url: string } }).echo.url).toBe('/v1/pets/42');
    const byName = await s.handle('invoke-api-endpoint', { toolId: 'lst-pets', parameters: { limit: 5 } });
    expect((byName.structuredContent as { echo: { url: string } }).echo.url).toBe('/v1/pets?limit=5');
    await expect(s.handle('invoke-api-endpoint', { toolId: 'GET::pets__---petId', parameters: {} })).rejects.toMatchObject({ code: 'BAD_INPUT', message: "invalid arguments: 'petId' is required" });
    await expect(s.handle('invoke-api-endpoint', { toolId: 'GET::pets__---petId', petId: '7' })).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining("arguments inside 'parameters'") });
    await s.close();
  });
});

describe('a query parameter the base URL sets (Azure api-version)', () => {
  const SPEC = JSON.stringify({
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    paths: { '/things': { get: { operationId: 'listThings', parameters: [{ name: 'api-version', in: 'query', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'ok' } } } } },
  });

  test('is optional, says the base sets it, and goes out once: the base value when left out, the given one otherwise', async () => {
    const { s } = await service({ apiBaseUrl: `${upstream.url}/v1?api-version=2023-01-01`, specInputMethod: 'inline', openApiSpec: SPEC });
    try {
      const schema = s.tools.find((t) => t.name === 'lst-things')!.inputSchema as { required?: string[]; properties: Record<string, { description?: string }> };
      expect(schema.required ?? []).not.toContain('api-version');
      expect(schema.properties['api-version'].description).toContain('the base URL sets api-version=2023-01-01');
      const sent = async (args: Record<string, unknown>) => {
        const before = upstream.requests.length;
        await s.handle('lst-things', args);
        return upstream.requests.slice(before).map((r) => r.url);
      };
      expect(await sent({})).toEqual(['/v1/things?api-version=2023-01-01']);
      expect(await sent({ 'api-version': '2024-05-01' })).toEqual(['/v1/things?api-version=2024-05-01']);
    } finally {
      await s.close();
    }
  });

  test('is optional in get-api-endpoint-schema\'s answer too, and invoke-api-endpoint sends the base value', async () => {
    const { s } = await service({ apiBaseUrl: `${upstream.url}/v1?api-version=2023-01-01`, specInputMethod: 'inline', openApiSpec: SPEC, toolsMode: 'dynamic' });
    try {
      const answer = (await s.handle('get-api-endpoint-schema', { toolId: 'GET::things' })).structuredContent as { inputSchema: { required?: string[]; properties: Record<string, { description?: string }> } };
      expect(answer.inputSchema.required ?? []).not.toContain('api-version');
      expect(answer.inputSchema.properties['api-version'].description).toContain('the base URL sets api-version=2023-01-01');
      const before = upstream.requests.length;
      await s.handle('invoke-api-endpoint', { toolId: 'GET::things', parameters: {} });
      expect(upstream.requests.slice(before).map((r) => r.url)).toEqual(['/v1/things?api-version=2023-01-01']);
    } finally {
      await s.close();
    }
  });

  test('a credential the base URL sets is named, never shown, in the tool and in get-api-endpoint-schema', async () => {
    const KEY = 'qk-0a1b2c3d4e5f';
    const spec = JSON.stringify({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: { '/things': { get: { operationId: 'listThings', parameters: [{ name: 'api-version', in: 'query', schema: { type: 'string' } }, { name: 'api_key', in: 'query', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'ok' } } } } },
    });
    const { s } = await service({ apiBaseUrl: `${upstream.url}/v1?api-version=2023-01-01&api_key=${KEY}`, specInputMethod: 'inline', openApiSpec: spec });
    try {
      const schema = s.tools.find((t) => t.name === 'lst-things')!.inputSchema as { required?: string[]; properties: Record<string, { description?: string }> };
      expect(schema.properties.api_key.description).toBe("(query parameter 'api_key') Optional: the base URL sets api_key (its value is not shown); give it to send another value.");
      expect(schema.properties['api-version'].description).toContain('the base URL sets api-version=2023-01-01');
      expect(schema.required ?? []).not.toContain('api_key');
      const answer = await s.handle('get-api-endpoint-schema', { toolId: 'GET::things' });
      for (const shown of [JSON.stringify(s.tools), JSON.stringify(s.toolTexts()), JSON.stringify(answer)]) expect(shown).not.toContain(KEY);
    } finally {
      await s.close();
    }
  });

  test('stays required without a base URL query', async () => {
    const { s } = await service({ specInputMethod: 'inline', openApiSpec: SPEC });
    try {
      expect(s.tools.find((t) => t.name === 'lst-things')!.inputSchema.required).toEqual(['api-version']);
    } finally {
      await s.close();
    }
  });
});
