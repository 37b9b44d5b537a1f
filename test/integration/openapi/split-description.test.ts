import path from 'node:path';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { eventually, tempCacheEnv } from '../../helpers/processes';
import { startUpstream, type Recorded, type Upstream } from '../../fixtures/openapi/upstream';

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'openapi');
const ENV = tempCacheEnv();

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean; structuredContent?: Record<string, any> };

let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());

/** The `msg` of every JSON log line on the server's stderr. */
const logged = (conn: StdioConnection) => conn.stderr().split('\n').filter((line) => line.startsWith('{')).map((line) => String((JSON.parse(line) as { msg?: unknown }).msg));

/** A call's result and what reached the upstream for it, if anything. */
async function call(conn: StdioConnection, name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean; sent?: Recorded; result: Result }> {
  const before = upstream.requests.length;
  const result = (await conn.client.callTool({ name, arguments: args })) as Result;
  return { text: textOf(result), isError: result.isError === true, sent: upstream.requests[before], result };
}

const owner = { type: 'object', properties: { email: { type: 'string', format: 'email' }, address: { type: 'object', properties: { city: { type: 'string' } } } } };

describe('openapi-mcp-server with a description split over folders (paths/, parameters/, requests/, responses/, schemas/)', () => {
  let conn: StdioConnection;
  beforeAll(async () => {
    conn = await connectStdio('openapi-mcp-server', ['--api-base-url', `${upstream.url}/v1`, '--openapi-spec', path.join(FIXTURES, 'split', 'openapi.yaml')], ENV);
  });
  afterAll(() => conn.close());

  test('lists tools whose arguments are the schemas each file\'s $refs name, with no reference left unresolved', async () => {
    const { tools } = await conn.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['get-pet', 'put-pet', 'replace-tags', 'add-tags', 'put-owner', 'list-api-endpoints', 'get-api-endpoint-schema', 'invoke-api-endpoint']);
    const putPet = tools.find((t) => t.name === 'put-pet')!;
    expect(putPet.inputSchema).toEqual({
      type: 'object',
      properties: {
        petId: { type: 'integer', minimum: 1, description: "the pet's number (path parameter 'petId')" },
        name: { type: 'string', minLength: 1 },
        tags: { type: 'array', items: { type: 'string' } },
        owner,
      },
      required: ['petId', 'name'],
    });
    expect(await eventually(() => logged(conn).includes('api tools ready'))).toBe(true);
    expect(conn.stderr()).not.toMatch(/unresolved reference|operation skipped/);
  });

  test('refuses a bad argument by the resolved schema, naming it, before anything goes upstream', async () => {
    for (const petId of [0, 'x']) {
      const answer = await call(conn, 'put-pet', { petId, name: 'Rex' });
      expect(answer).toMatchObject({ isError: true, sent: undefined });
      expect(answer.text).toMatch(/^BAD_INPUT \(tool put-pet\): invalid arguments: argument 'petId' must be/);
    }
    const nameless = await call(conn, 'put-pet', { petId: 7 });
    expect(nameless).toMatchObject({ isError: true, sent: undefined });
    expect(nameless.text).toMatch(/missing required argument 'name'/);
    expect((await call(conn, 'put-owner', { ownerId: 'Ann!', email: 'a@b.co' })).text).toMatch(/argument 'ownerId' must match pattern/);
  });

  test('sends a good call to the right path with the body and content type the files describe', async () => {
    const pet = await call(conn, 'put-pet', { petId: 7, name: 'Rex', tags: ['good'], owner: { email: 'a@b.co', address: { city: 'Oslo' } } });
    expect(pet.isError).toBe(false);
    expect(pet.sent).toMatchObject({ method: 'PUT', url: '/v1/pets/7', headers: { 'content-type': 'application/json' } });
    expect(JSON.parse(pet.sent!.body)).toEqual({ name: 'Rex', tags: ['good'], owner: { email: 'a@b.co', address: { city: 'Oslo' } } });
    const got = await call(conn, 'get-pet', { petId: 7, fields: ['name', 'owner'] });
    expect(got.sent).toMatchObject({ method: 'GET', url: '/v1/pets/7?fields=name&fields=owner', headers: { accept: 'application/json' } });
    // A multipart form in paths/tags.yaml whose array is in schemas/: one part per tag.
    const tags = await call(conn, 'add-tags', { petId: 7, tags: ['a', 'b'] });
    expect(tags.sent).toMatchObject({ method: 'POST', url: '/v1/pets/7/tags', headers: { 'content-type': expect.stringMatching(/^multipart\/form-data; boundary=/) } });
    expect(tags.sent!.body.match(/name="tags"\r\n\r\n(\w)\r\n/g)).toEqual(['name="tags"\r\n\r\na\r\n', 'name="tags"\r\n\r\nb\r\n']);
  });

  test('get-api-endpoint-schema shows the resolved input and response schemas', async () => {
    const answer = (await conn.client.callTool({ name: 'get-api-endpoint-schema', arguments: { toolId: 'put-pet', response: '200' } })) as Result;
    expect(answer.structuredContent).toMatchObject({ toolId: 'PUT::pets__---petId', response: '200', schema: { type: 'object', required: ['name'], properties: { tags: { type: 'array', items: { type: 'string' } }, owner } } });
    const summary = (await conn.client.callTool({ name: 'get-api-endpoint-schema', arguments: { toolId: 'put-owner' } })) as Result;
    expect(summary.structuredContent?.inputSchema).toEqual({
      type: 'object',
      properties: { ownerId: { type: 'string', pattern: '^[a-z]+$', minLength: 1, description: "(path parameter 'ownerId')" }, email: { type: 'string', format: 'email' }, nickname: { type: 'string' } },
      required: ['ownerId', 'email'],
    });
    expect(summary.structuredContent?.responses).toMatchObject({ 200: { schema: owner, headers: ['Location'] } });
  });
});

describe('openapi-mcp-server with fields beside path item $refs (split/siblings.yaml)', () => {
  let conn: StdioConnection;
  beforeAll(async () => {
    conn = await connectStdio('openapi-mcp-server', ['--api-base-url', `${upstream.url}/v1`, '--openapi-spec', path.join(FIXTURES, 'split', 'siblings.yaml')], ENV);
  });
  afterAll(() => conn.close());

  test('lists the operations beside each $ref and those of the items it names, and warns of each field given in both', async () => {
    const { tools } = await conn.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['get-pets', 'add-pet', 'clear-pets', 'get-owner-pets', 'replace-owner-pets', 'add-owner-pet', 'list-api-endpoints', 'get-api-endpoint-schema', 'invoke-api-endpoint']);
    // The post beside the $ref: its body from requests/ beside the root, the path-level
    // parameters of both items (limit from beside the $ref, sort from paths/pets.yaml).
    expect(tools.find((t) => t.name === 'add-pet')!.inputSchema).toEqual({
      type: 'object',
      properties: {
        limit: { type: 'integer', minimum: 1, description: "at most this many (query parameter 'limit')" },
        sort: { type: 'array', items: { type: 'string', enum: ['name', 'tags', 'owner'] }, description: "(query parameter 'sort')" },
        'X-Shop': { type: 'string', description: "(header parameter 'X-Shop')" },
        name: { type: 'string', minLength: 1 },
        tags: { type: 'array', items: { type: 'string' } },
        owner,
      },
      required: ['name'],
    });
    expect(await eventually(() => logged(conn).includes('api tools ready'))).toBe(true);
    expect(logged(conn)).toEqual(expect.arrayContaining([
      "DELETE /pets: defined both beside a $ref and in the path item './paths/pets.yaml' names (OpenAPI leaves which undefined); the one beside the $ref is used",
      "GET /owners/{ownerId}/pets: defined both beside a $ref and in the path item '#/Shared' names (OpenAPI leaves which undefined); the one beside the $ref is used",
    ]));
    expect(conn.stderr()).not.toMatch(/unresolved reference|operation skipped/);
  });

  test('sends the post written beside the $ref with its body, parameters of both items and content type', async () => {
    const pet = await call(conn, 'add-pet', { limit: 20, sort: ['name'], 'X-Shop': 'north', name: 'Rex', tags: ['good'], owner: { email: 'a@b.co' } });
    expect(pet.isError).toBe(false);
    expect(pet.sent).toMatchObject({ method: 'POST', url: '/v1/pets?limit=20&sort=name', headers: { 'content-type': 'application/json', 'x-shop': 'north' } });
    expect(JSON.parse(pet.sent!.body)).toEqual({ name: 'Rex', tags: ['good'], owner: { email: 'a@b.co' } });
    const owned = await call(conn, 'add-owner-pet', { ownerId: 'ann', name: 'Tom' });
    expect(owned.sent).toMatchObject({ method: 'POST', url: '/v1/owners/ann/pets' });
    expect(JSON.parse(owned.sent!.body)).toEqual({ name: 'Tom' });
    const cleared = await call(conn, 'clear-pets', {});
    expect(cleared.sent).toMatchObject({ method: 'DELETE', url: '/v1/pets' });
  });

  test('checks the operations of a referenced item by the schemas its own relative $refs name', async () => {
    const bad = await call(conn, 'get-pets', { fields: ['name', 'colour'] });
    expect(bad).toMatchObject({ isError: true, sent: undefined });
    expect(bad.text).toMatch(/argument 'fields.1' must be one of \["name","tags","owner"\]/);
    const good = await call(conn, 'get-pets', { fields: ['name'], limit: 3 });
    expect(good.sent).toMatchObject({ method: 'GET', url: '/v1/pets?limit=3&fields=name' });
    // Three layers: ownerId from parameters/ named in paths/owner-pets.yaml, limit from its Shared.
    expect((await call(conn, 'replace-owner-pets', { ownerId: 'Ann!', name: 'Rex' })).text).toMatch(/argument 'ownerId' must match pattern/);
    expect((await call(conn, 'get-owner-pets', { ownerId: 'ann', limit: 0 })).text).toMatch(/argument 'limit' must be >= 1/);
    const listed = await call(conn, 'get-owner-pets', { ownerId: 'ann', limit: 2, fields: ['tags'] });
    expect(listed.sent).toMatchObject({ method: 'GET', url: '/v1/owners/ann/pets?limit=2&fields=tags' });
  });

  test('get-api-endpoint-schema reads the post beside the $ref in the root\'s terms', async () => {
    const answer = (await conn.client.callTool({ name: 'get-api-endpoint-schema', arguments: { toolId: 'add-pet', response: '201' } })) as Result;
    expect(answer.structuredContent).toMatchObject({ toolId: 'POST::pets', response: '201', schema: { type: 'object', required: ['name'], properties: { tags: { type: 'array', items: { type: 'string' } }, owner } } });
  });
});

describe('openapi-mcp-server with form bodies composed of parts in other files (split/forms.yaml)', () => {
  let conn: StdioConnection;
  beforeAll(async () => {
    conn = await connectStdio('openapi-mcp-server', ['--api-base-url', `${upstream.url}/v1`, '--openapi-spec', path.join(FIXTURES, 'split', 'forms.yaml')], ENV);
  });
  afterAll(() => conn.close());

  /** The values of the multipart parts named `name`, in order. */
  const parts = (body: string, name: string) => [...body.matchAll(new RegExp(`name="${name}"\\r\\n\\r\\n([^\\r]*)\\r\\n`, 'g'))].map((m) => m[1]);

  test('sends each array of an allOf one part per item, a $ref in a part file read in that file\'s terms', async () => {
    const sent = await call(conn, 'add-labels', { petId: 7, labels: ['a', 'b'], colours: ['red', 'blue'], note: 'n' });
    expect(sent.isError).toBe(false);
    expect(sent.sent).toMatchObject({ method: 'POST', url: '/v1/pets/7/labels', headers: { 'content-type': expect.stringMatching(/^multipart\/form-data; boundary=/) } });
    expect([parts(sent.sent!.body, 'labels'), parts(sent.sent!.body, 'colours'), parts(sent.sent!.body, 'note')]).toEqual([['a', 'b'], ['red', 'blue'], ['n']]);
    const form = await call(conn, 'set-labels', { petId: 7, labels: ['a', 'b'], colours: ['red'] });
    expect(form.sent).toMatchObject({ method: 'PUT', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'labels=a&labels=b&colours=red' });
    expect(conn.stderr()).not.toMatch(/unresolved reference|operation skipped/);
  });

  test('sends the arrays of whichever oneOf branch the body is, one part per item', async () => {
    const labelled = await call(conn, 'add-marks', { petId: 7, body: { labels: ['a', 'b'] } });
    expect(parts(labelled.sent!.body, 'labels')).toEqual(['a', 'b']);
    const scored = await call(conn, 'add-marks', { petId: 7, body: { scores: [1, 2] } });
    expect(parts(scored.sent!.body, 'scores')).toEqual(['1', '2']);
  });
});

describe('openapi-mcp-server with a split Swagger 2.0 description', () => {
  test('checks and sends a body parameter from a parameter file whose schema is in definitions/', async () => {
    const conn = await connectStdio('openapi-mcp-server', ['--api-base-url', `${upstream.url}/v1`, '--openapi-spec', path.join(FIXTURES, 'split-2.0', 'swagger.yaml')], ENV);
    try {
      const { tools } = await conn.client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['add-pet', 'get-pet', 'put-pet', 'list-api-endpoints', 'get-api-endpoint-schema', 'invoke-api-endpoint']);
      const bad = await call(conn, 'put-pet', { petId: 0, name: 'Rex' });
      expect(bad).toMatchObject({ isError: true, sent: undefined });
      expect(bad.text).toMatch(/argument 'petId' must be >= 1/);
      const sent = await call(conn, 'put-pet', { petId: 3, name: 'Rex', owner: { email: 'a@b.co' } });
      expect(sent.sent).toMatchObject({ method: 'PUT', url: '/v1/pets/3', headers: { 'content-type': 'application/json' } });
      expect(JSON.parse(sent.sent!.body)).toEqual({ name: 'Rex', owner: { email: 'a@b.co' } });
    } finally {
      await conn.close();
    }
  });
});
