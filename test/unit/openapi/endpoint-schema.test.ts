import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../../helpers/temp';
import { ApiToolService } from '../../../workers/openapi/service';
import { MAX_SCHEMA_ANSWER_CHARS } from '../../../workers/openapi/endpoint-schema';

const GITHUB = path.join(__dirname, '..', '..', '..', 'node_modules', '@octokit', 'openapi', 'generated', 'api.github.com.json');
const EVENTS = 'GET::repos__---owner__---repo__issues__---issue_number__events';

// No request goes upstream in these tests.
const start = (openApiSpec: string, inline = false) =>
  ApiToolService.create({ apiBaseUrl: 'http://127.0.0.1:9', openApiSpec, specCache: false, toolsMode: 'dynamic', ...(inline ? { specInputMethod: 'inline' as const } : {}) });

let github: ApiToolService;
beforeAll(async () => {
  github = await start(GITHUB);
});
afterAll(() => github.close());

const ask = (s: ApiToolService, args: Record<string, unknown>) => s.handle('get-api-endpoint-schema', args);

describe('get-api-endpoint-schema', () => {
  test('answers every GitHub endpoint within its size as sent, text and structuredContent alike', async () => {
    const ids: string[] = [];
    for (let offset: number | undefined = 0; offset !== undefined; ) {
      const page = (await github.handle('list-api-endpoints', { limit: 200, offset })).structuredContent as { endpoints: Array<{ toolId: string }>; nextOffset?: number };
      ids.push(...page.endpoints.map((e) => e.toolId));
      offset = page.nextOffset;
    }
    expect(ids).toHaveLength(1223);
    let largest = 0;
    for (const toolId of ids) {
      const result = await ask(github, { toolId });
      expect(result.isError).toBeUndefined();
      largest = Math.max(largest, JSON.stringify(result).length);
      const text = (result.content[0] as { text: string }).text;
      expect(JSON.parse(text)).toEqual(result.structuredContent);
    }
    expect(largest).toBeLessThanOrEqual(MAX_SCHEMA_ANSWER_CHARS);
  }, 60_000);

  test('puts the input schema first, then success responses cut to a depth, other responses by status, and says how to see more', async () => {
    const result = await ask(github, { toolId: EVENTS });
    const text = (result.content[0] as { text: string }).text;
    // Compact: nothing indented.
    expect(text).not.toMatch(/\n\s/);
    const answer = result.structuredContent as Record<string, any>;
    expect(Object.keys(answer)).toEqual(['toolId', 'name', 'method', 'path', 'summary', 'description', 'tags', 'inputSchema', 'responses', 'otherResponses', 'note']);
    expect(Object.keys(answer.inputSchema.properties)).toEqual(['owner', 'repo', 'issue_number', 'per_page', 'page']);
    expect(answer).not.toHaveProperty('parameters');
    expect(answer.responses['200']).toMatchObject({ description: 'Response', contentType: 'application/json', headers: ['Link'] });
    expect(JSON.stringify(answer.responses['200'].schema)).toContain('x-left-out');
    expect(answer.otherResponses).toEqual({ 410: 'Gone' });
    expect(answer.note).toContain("response: '200'");
  });

  test("shows one response alone, and the part of a schema that 'at' names", async () => {
    // The summary shows the 26 kinds of event as stubs; 'at' passes through the array and the anyOf.
    const summary = (await ask(github, { toolId: EVENTS })).structuredContent as Record<string, any>;
    expect(summary.responses['200'].schema.items.anyOf[0]).toMatchObject({ title: 'Labeled Issue Event', 'x-left-out': '11 properties' });
    const actor = (await ask(github, { toolId: EVENTS, response: '200', at: 'actor' })).structuredContent as Record<string, any>;
    expect(actor).toMatchObject({ response: '200', at: 'actor', schema: { title: 'Simple User' } });
    expect(actor.schema.properties.login).toEqual({ type: 'string' });
    const gone = (await ask(github, { toolId: EVENTS, response: 410 })).structuredContent as Record<string, any>;
    expect(gone).toMatchObject({ response: '410', description: 'Gone', contentType: 'application/json' });
    expect(Object.keys(gone.schema.properties)).toEqual(['message', 'documentation_url', 'url', 'status']);
    // The note names a path that shows what was left out.
    const repo = (await ask(github, { toolId: 'GET::repos__---owner__---repo', response: '200' })).structuredContent as Record<string, any>;
    expect(repo.schema.properties.owner).toMatchObject({ title: 'Simple User', 'x-left-out': '22 properties' });
    expect(repo.note).toContain("response: '200' and at: 'owner'");
    const owner = (await ask(github, { toolId: 'GET::repos__---owner__---repo', response: '200', at: 'template_repository.owner' })).structuredContent as Record<string, any>;
    expect(owner.schema.properties.login).toEqual({ type: 'string' });
    // A part of the input schema.
    const labels = (await ask(github, { toolId: 'POST::repos__---owner__---repo__issues', at: 'labels' })).structuredContent as Record<string, any>;
    expect(labels.schema.type).toBe('array');
  });

  test('refuses a response or a path that is not there, naming what is', async () => {
    await expect(ask(github, { toolId: EVENTS, response: '418' })).rejects.toMatchObject({ code: 'BAD_INPUT', message: "GET /repos/{owner}/{repo}/issues/{issue_number}/events has no response '418'; its responses: 200, 410" });
    await expect(ask(github, { toolId: 'GET::repos__---owner__---repo', response: '200', at: 'owner.nope' })).rejects.toMatchObject({
      code: 'BAD_INPUT',
      message: expect.stringMatching(/^no property 'nope' at 'owner' of response 200's schema \(its properties: name, email, login, /),
    });
  });

  test("follows an 'at' through names holding dots without trying every way to split it, and refuses one deeper than 256 levels", async () => {
    // `a` and `a.a` both lead on: a path of 32 names splits in ~3.5 million ways, each of them walked before.
    const service = await start(
      JSON.stringify({
        openapi: '3.0.3',
        info: { title: 't', version: '1' },
        paths: { '/nodes': { get: { operationId: 'getNode', responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } } } } } },
        components: { schemas: { Node: { type: 'object', properties: { a: { $ref: '#/components/schemas/Node' }, 'a.a': { $ref: '#/components/schemas/Node' }, name: { type: 'string' } } } } },
      }),
      true,
    );
    try {
      await expect(ask(service, { toolId: 'GET::nodes', response: '200', at: `${'a.'.repeat(256)}name` })).rejects.toMatchObject({ code: 'BAD_INPUT', message: "'at' names at most 256 levels (this one 257)" });
      const found = await ask(service, { toolId: 'GET::nodes', response: '200', at: `${'a.'.repeat(255)}name` });
      expect(found.structuredContent).toMatchObject({ schema: { type: 'string' } });
      await expect(ask(service, { toolId: 'GET::nodes', response: '200', at: `${'a.'.repeat(32)}zz` })).rejects.toMatchObject({ code: 'BAD_INPUT', message: `no property 'zz' at '${'a.'.repeat(31)}a' of response 200's schema (its properties: a, a.a, name)` });
    } finally {
      await service.close();
    }
  });

  test('stays within its size for a huge enum, a huge description and an input schema too large to show whole', async () => {
    const props: Record<string, unknown> = {};
    for (let i = 0; i < 200; i++) props[`field${i}`] = { type: 'object', description: 'words '.repeat(40), properties: { a: { type: 'string', description: 'more '.repeat(40) }, b: { type: 'integer' } } };
    const spec = {
      openapi: '3.0.3',
      info: { title: 'huge', version: '1' },
      paths: {
        '/things': {
          post: {
            description: 'x'.repeat(100_000),
            parameters: [{ name: 'kind', in: 'query', description: 'y'.repeat(100_000), schema: { type: 'string', enum: Array.from({ length: 5000 }, (_, i) => `kind-${i}`) } }],
            requestBody: { content: { 'application/json': { schema: { type: 'object', properties: props } } } },
            responses: { 200: { description: 'ok' } },
          },
        },
      },
    };
    const s = await start(JSON.stringify(spec), true);
    const result = await ask(s, { toolId: 'POST::things' });
    expect(JSON.stringify(result).length).toBeLessThanOrEqual(MAX_SCHEMA_ANSWER_CHARS);
    const answer = result.structuredContent as Record<string, any>;
    expect(answer.inputSchema.properties.kind.enum).toHaveLength(50);
    expect(answer.inputSchema.properties.kind['x-enum-left-out']).toBe('4950 more values');
    expect(answer.inputSchema.properties.field199).toEqual({ type: 'object', 'x-left-out': '2 properties' });
    expect(answer.note).toMatch(/long descriptions are cut/);
    await s.close();
  });
});

describe('get-api-endpoint-schema of a description with external documents that could not be loaded', () => {
  const ok = { 200: { description: 'ok' } };
  /** A service over main.json and `files` in a fresh folder, and what it logged as warnings. */
  async function serve(files: Record<string, unknown>) {
    const dir = tempDir('schema-unloaded-');
    for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), JSON.stringify(content));
    const warnings: string[] = [];
    const log = { debug: () => undefined, info: () => undefined, warn: (message: string) => void warnings.push(message), error: () => undefined };
    const s = await ApiToolService.create({ apiBaseUrl: 'http://127.0.0.1:9', openApiSpec: path.join(dir, 'main.json'), specCache: false, toolsMode: 'dynamic' }, log);
    return { dir, s, warnings };
  }
  const described = (paths: Record<string, unknown>) => ({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths });

  test('lists only the operations kept, and shows a response from such a document as not loaded, never why', async () => {
    const { dir, s } = await serve({
      'main.json': described({
        '/pets': {
          post: { requestBody: { content: { 'application/json': { schema: { $ref: './missing.json#/Pet' } } } }, responses: ok },
          get: { responses: { 200: { description: 'the pets', content: { 'application/json': { schema: { $ref: './missing.json#/Pets' } } } }, 404: { $ref: './missing.json#/NotFound' } } },
        },
      }),
    });
    const listed = (await s.handle('list-api-endpoints', {})).structuredContent as { endpoints: Array<{ toolId: string }> };
    expect(listed.endpoints.map((e) => e.toolId)).toEqual(['GET::pets']);
    const asked = await ask(s, { toolId: 'GET::pets' });
    expect(asked.structuredContent).toMatchObject({
      responses: { 200: { description: 'the pets', schema: { 'x-unresolved': './missing.json#/Pets', 'x-not-loaded': 'the document this $ref names could not be loaded' } } },
      otherResponses: { 404: "$ref './missing.json#/NotFound' names a document that could not be loaded" },
    });
    // Why (a path of this machine, 'file not found') is for the log only.
    expect(JSON.stringify(asked)).not.toContain(dir);
    expect(JSON.stringify(asked)).not.toContain('not found');
    expect(await ask(s, { toolId: 'POST::pets' })).toMatchObject({ isError: true, content: [{ text: expect.stringContaining("no endpoint with tool ID or name 'POST::pets'") }] });
    await s.close();
  });

  test('of one that could be loaded at the start and no longer can: an error naming the ref only, and why in the log', async () => {
    const { dir, s, warnings } = await serve({
      'main.json': described({
        '/a': { post: { requestBody: { content: { 'application/json': { schema: { $ref: './body.json#/B' } } } }, responses: ok } },
        '/b': { get: { parameters: [{ $ref: './params.json#/Q' }], responses: ok } },
      }),
      'body.json': { B: { type: 'object', properties: { x: { type: 'string' } } } },
      'params.json': { Q: { name: 'q', in: 'query', schema: { type: 'string' } } },
    });
    rmSync(path.join(dir, 'body.json'));
    rmSync(path.join(dir, 'params.json'));
    const body = await ask(s, { toolId: 'POST::a' }).catch((error: unknown) => error);
    expect(body).toMatchObject({ code: 'NOT_FOUND', message: "$ref './body.json#/B' names a document that could not be loaded" });
    const parameter = await ask(s, { toolId: 'GET::b' }).catch((error: unknown) => error);
    expect(parameter).toMatchObject({ code: 'NOT_FOUND', message: `GET /b cannot be read from the OpenAPI description ${path.join(dir, 'main.json')} now (the server's log says why); its tool may still be called` });
    expect(warnings).toEqual(expect.arrayContaining([
      `get-api-endpoint-schema: external document ${path.join(dir, 'body.json')}, referenced from ${path.join(dir, 'main.json')}, could not be loaded: file not found`,
      `get-api-endpoint-schema: GET /b cannot be read from the description now: $ref './params.json#/Q' in ${path.join(dir, 'main.json')}: ${path.join(dir, 'params.json')} could not be loaded (file not found)`,
    ]));
    await s.close();
  });
});

describe('get-api-endpoint-schema of a description split over several files', () => {
  const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'openapi');
  const pet = { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 }, tags: { type: 'array', items: { type: 'string' } }, owner: { type: 'object', properties: { email: { type: 'string', format: 'email' }, address: { type: 'object', properties: { city: { type: 'string' } } } } } } };

  test('shows the input and response schemas each resolved in the terms of the file it is written in', async () => {
    const s = await start(path.join(FIXTURES, 'split', 'openapi.yaml'));
    // A path item in paths/: its parameter in parameters/, the schema via ids.yaml in schemas/; its response in responses/.
    const summary = (await ask(s, { toolId: 'GET::pets__---petId' })).structuredContent as Record<string, any>;
    expect(summary.inputSchema.properties.petId).toEqual({ type: 'integer', minimum: 1, description: "the pet's number (path parameter 'petId')" });
    expect(summary.responses['200']).toMatchObject({ description: 'the pet', contentType: 'application/json', headers: ['ETag'] });
    expect(summary.responses['200'].schema.properties.owner.properties.email).toEqual({ type: 'string', format: 'email' });
    expect((await ask(s, { toolId: 'GET::pets__---petId', response: '200' })).structuredContent).toMatchObject({ schema: pet });
    expect((await ask(s, { toolId: 'GET::pets__---petId', response: '200', at: 'owner.address' })).structuredContent).toMatchObject({ schema: { type: 'object', properties: { city: { type: 'string' } } } });
    // A body in requests/ whose schema is in schemas/.
    const put = (await ask(s, { toolId: 'PUT::pets__---petId' })).structuredContent as Record<string, any>;
    expect(put.inputSchema.properties.owner).toEqual(pet.properties.owner);
    expect(put.inputSchema.required).toEqual(['petId', 'name']);
    const owner = (await ask(s, { toolId: 'PUT::owners__---ownerId' })).structuredContent as Record<string, any>;
    expect(owner.inputSchema.properties.email).toEqual({ type: 'string', format: 'email' });
    expect(owner.responses['200'].schema).toEqual(pet.properties.owner);
    await s.close();
  });

  test('shows the description of a response header given as a $ref, to the root\'s components or to another file', async () => {
    const split = await start(path.join(FIXTURES, 'split', 'openapi.yaml'));
    // responses/pet.yaml's ETag is './headers.yaml#/ETag', beside it; Location is written inline.
    expect((await ask(split, { toolId: 'GET::pets__---petId', response: '200' })).structuredContent?.headers).toEqual({ ETag: "the pet's version, for If-Match" });
    expect((await ask(split, { toolId: 'PUT::owners__---ownerId', response: '200' })).structuredContent?.headers).toEqual({ Location: 'where the owner is' });
    await split.close();
    const spec = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: { '/r': { get: { responses: { 200: { description: 'ok', headers: { 'X-Page': { $ref: '#/components/headers/Page' }, 'X-Gone': { $ref: '#/components/headers/Nope' } } } } } } },
      components: { headers: { Page: { description: 'the page number', schema: { type: 'integer' } } } },
    };
    const single = await start(JSON.stringify(spec), true);
    expect((await ask(single, { toolId: 'GET::r', response: '200' })).structuredContent?.headers).toEqual({ 'X-Page': 'the page number', 'X-Gone': '' });
    await single.close();
  });

  test('shows a split Swagger 2.0 description\'s parameters and response schemas resolved', async () => {
    const s = await start(path.join(FIXTURES, 'split-2.0', 'swagger.yaml'));
    const get = (await ask(s, { toolId: 'GET::pets__---petId' })).structuredContent as Record<string, any>;
    expect(get.inputSchema.properties.petId).toMatchObject({ type: 'integer', minimum: 1 });
    expect(get.responses['200'].schema.allOf[1]).toEqual({ type: 'object', properties: { id: { type: 'integer', minimum: 1 } } });
    const put = (await ask(s, { toolId: 'PUT::pets__---petId' })).structuredContent as Record<string, any>;
    expect(put.inputSchema.properties.owner).toEqual({ type: 'object', properties: { email: { type: 'string', format: 'email' } } });
    await s.close();
  });
});
