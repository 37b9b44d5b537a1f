import path from 'node:path';
import { loadSpec } from '../../../workers/openapi/load-spec';
import { buildUpstreamRequest, checkUrl, planSpec, requestPlan } from '../../../workers/openapi/request';
import { ToolsManager } from '../../../workers/openapi/tools-manager';
import { swaggerBuildRequest } from '../../../workers/openapi/lazy';
import type { JsonObject } from '../../../workers/openapi/refs';
import type { ArgumentTarget } from '../../../workers/openapi/input-schema';

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'openapi');
const BASE = 'http://127.0.0.1:8080/api/v1';

async function builder(file: string) {
  const spec = await loadSpec({ openApiSpec: path.join(FIXTURES, file) });
  const manager = new ToolsManager({}, spec);
  manager.generateTools();
  return (toolId: string, args: Record<string, unknown>) => {
    const tool = manager.getToolById(toolId)!;
    return buildUpstreamRequest(requestPlan(tool.entry!, spec, tool.targets, tool.body), args, BASE);
  };
}

describe('buildUpstreamRequest', () => {
  test('maps same-name parameters and colliding body properties back to their places', async () => {
    const build = await builder('collisions.yaml');
    const req = build('POST::items__---id', { id: 'p 1', query_id: 'q', header_id: 'h', filter_name_: 'n', body_id: 7, label: 'L' });
    expect(req.method).toBe('POST');
    expect(req.url).toBe(`${BASE}/items/p%201?id=q&filter%5Bname%5D=n`);
    expect(req.headers).toMatchObject({ id: 'h', 'content-type': 'application/json' });
    expect(JSON.parse(req.body as string)).toEqual({ id: 7, label: 'L' });
  });

  test('refuses a header argument with a line break or a character HTTP headers cannot carry, naming it', async () => {
    const build = await builder('collisions.yaml');
    const args = { id: 'p', body_id: 7, label: 'L' };
    expect(() => build('POST::items__---id', { ...args, header_id: 'v\r\nX-Injected: 1' })).toThrow("header argument 'header_id' has a line break");
    expect(() => build('POST::items__---id', { ...args, header_id: '\u65e5\u672c' })).toThrow(/header argument 'header_id'.*beyond Latin-1/);
    expect(build('POST::items__---id', { ...args, header_id: 'caf\u00e9 \ttab' }).headers.id).toBe('caf\u00e9 \ttab');
  });

  test('refuses a path argument with a lone UTF-16 surrogate, as a query one is, instead of sending U+FFFD', async () => {
    const build = await builder('collisions.yaml');
    const args = { body_id: 7, label: 'L' };
    expect(() => build('POST::items__---id', { ...args, id: 'a\ud800' })).toThrow("argument 'id' has a lone UTF-16 surrogate, which a URL cannot carry");
    expect(build('POST::items__---id', { ...args, id: '\ud83d\ude00' }).url).toBe(`${BASE}/items/%F0%9F%98%80`);
  });

  test('refuses a lone UTF-16 surrogate in a query or cookie argument the builder writes, nested too, instead of sending U+FFFD', async () => {
    const collisions = await builder('collisions.yaml');
    const args = { id: 'p', body_id: 7, label: 'L' };
    expect(() => collisions('POST::items__---id', { ...args, query_id: 'q\ud800' })).toThrow("argument 'query_id' has a lone UTF-16 surrogate, which a URL cannot carry");
    expect(new URL(collisions('POST::items__---id', { ...args, query_id: '\ud83d\ude00' }).url).search).toBe('?id=%F0%9F%98%80');
    const serialization = await builder('serialization.yaml');
    expect(() => serialization('GET::search', { color: ['red', 'x\udc00'] })).toThrow("argument 'color' has a lone UTF-16 surrogate");
  });

  test('sends a non-object body as it is', async () => {
    const build = await builder('collisions.yaml');
    expect(JSON.parse(build('PUT::items', { body: ['a', 'b'] }).body as string)).toEqual(['a', 'b']);
    const count = build('POST::items__count', { body: 5 });
    expect(count.headers['content-type']).toBe('text/plain');
    expect(count.body).toBe('5');
  });

  test('encodes form-urlencoded and multipart bodies', async () => {
    const build = await builder('collisions.yaml');
    const form = build('POST::forms', { a: 'x y', b: 2 });
    expect(form).toMatchObject({ body: 'a=x%20y&b=2', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const multipart = build('POST::files', { name: 'n', file: Buffer.from('content').toString('base64') });
    expect(multipart.body).toBeInstanceOf(FormData);
    expect(multipart.headers['content-type']).toBeUndefined();
    expect((multipart.body as FormData).get('name')).toBe('n');
    const file = (multipart.body as FormData).get('file') as File;
    expect(file).toBeInstanceOf(File);
    expect(Buffer.from(await file.arrayBuffer()).toString()).toBe('content');
  });

  test('applies query style and explode, cookies and Swagger 2.0 collection formats', async () => {
    const notes = await builder('openapi-3.1.yaml');
    const req = notes('GET::notes', { q: 'hi', labels: ['a', 'b'], session: 's1' });
    expect(req.url).toBe(`${BASE}/notes?q=hi&labels=a,b`);
    expect(req.headers.cookie).toBe('session=s1');
    const legacy = await builder('swagger-2.0.json');
    const orders = legacy('GET::orders', { status: ['new', 'paid'], 'X-Trace': 't' });
    expect(orders.url).toBe(`${BASE}/orders?status=new,paid`);
    expect(orders.headers['x-trace']).toBe('t');
    const place = legacy('POST::orders', { petId: 1, quantity: 2 });
    expect(JSON.parse(place.body as string)).toEqual({ petId: 1, quantity: 2 });
    const login = legacy('POST::login', { user: 'u', password: 'p&q' });
    expect(login.body).toBe('user=u&password=p%26q');
  });

  test('sends the media types of 2xx responses as accept, from a plan without body or response schemas', async () => {
    const spec = await loadSpec({ openApiSpec: path.join(FIXTURES, 'petstore-3.0.yaml') });
    const manager = new ToolsManager({}, spec);
    manager.generateTools();
    const operation = (id: string, p: string, method: string) => (planSpec(manager.getToolById(id)!.entry!, spec).paths as Record<string, any>)[p][method];
    expect(operation('GET::pets', '/pets', 'get').responses).toEqual({ '200': { content: { 'application/json': {} } } });
    expect(operation('POST::pets', '/pets', 'post').requestBody).toEqual({ content: { 'application/json': {} } });
    expect(operation('GET::pets', '/pets', 'get').parameters).toEqual([{ name: 'limit', in: 'query', required: false, schema: { type: 'integer', format: 'int32', maximum: 100 } }]);
    const build = await builder('petstore-3.0.yaml');
    expect(build('GET::pets', { limit: 1 }).headers.accept).toBe('application/json');
    expect(build('DELETE::pets__---petId', { petId: '1' }).headers.accept).toBeUndefined();
  });

  test('gives the accept header swagger-client derives itself, for several 2xx responses and media types', () => {
    const responses = {
      '200': { content: { 'application/json': {}, 'text/plain': {} } },
      '201': { content: { 'application/xml': {} } },
      '204': { description: 'none' },
      '2XX': { content: { 'text/csv': {} } },
      '302': { content: { 'text/html': {} } },
    };
    for (const kept of [responses, {}, { '404': { content: { 'application/json': {} } } }]) {
      const spec = { openapi: '3.0.3', paths: { '/r': { get: { operationId: 'op', parameters: [], responses: kept } } } } as unknown as JsonObject;
      const ours = buildUpstreamRequest({ spec, targets: new Map() }, {}, BASE).headers.accept;
      const theirs = (swaggerBuildRequest()({ spec, operationId: 'op', parameters: {}, baseURL: BASE }) as { headers: Record<string, string> }).headers.accept;
      expect(ours).toBe(theirs);
    }
    const spec = { openapi: '3.0.3', paths: { '/r': { get: { operationId: 'op', parameters: [], responses } } } };
    expect(buildUpstreamRequest({ spec, targets: new Map() }, {}, BASE).headers.accept).toBe('application/json, text/plain, application/xml');
  });

  test('never lets a path argument change the host or leave the base path', async () => {
    const build = await builder('petstore-3.0.yaml');
    for (const petId of ['//evil.example', '@evil.example', 'http://evil.example/', '../../../x', '%2e%2e', '?x=1#y']) {
      const req = build('GET::pets__---petId', { petId });
      const url = new URL(req.url);
      expect(url.origin).toBe('http://127.0.0.1:8080');
      expect(url.pathname.startsWith('/api/v1/pets/')).toBe(true);
    }
    expect(() => build('GET::pets__---petId', { petId: '..' })).toThrow(expect.objectContaining({ code: 'BAD_INPUT' }));
  });
});

describe('buildUpstreamRequest at the edges', () => {
  test('refuses an empty path argument, and a path parameter left out, instead of calling another URL', async () => {
    const build = await builder('edges.yaml');
    expect(build('DELETE::users__---user__keys__---key', { user: 'u', key: 'k' }).url).toBe(`${BASE}/users/u/keys/k`);
    expect(() => build('DELETE::users__---user__keys__---key', { user: '', key: 'k' })).toThrow("path argument 'user' may not be empty, '.' or '..'");
    expect(() => build('DELETE::users__---user__keys__---key', { user: 'u', key: '' })).toThrow(expect.objectContaining({ code: 'BAD_INPUT' }));
    expect(() => build('GET::things__---id', {})).toThrow("path argument 'id' is required");
    expect(() => build('GET::things__---id', { id: null })).toThrow("path argument 'id' is required");
    expect(build('GET::things__---id', { id: 't' }).url).toBe(`${BASE}/things/t`);
  });

  test('sends every cookie parameter, and no content type without a body', async () => {
    const build = await builder('edges.yaml');
    expect(build('GET::session', { c1: 'a', c2: 'b' }).headers.cookie).toBe('c1=a; c2=b');
    expect(build('GET::session', { c2: 'b' }).headers.cookie).toBe('c2=b');
    const empty = build('POST::notes', {});
    expect(empty.body).toBeUndefined();
    expect(empty.headers['content-type']).toBeUndefined();
    const note = build('POST::notes', { text: 't' });
    expect(note.headers['content-type']).toBe('application/json');
    expect(JSON.parse(note.body as string)).toEqual({ text: 't' });
  });

  test('explodes form-urlencoded arrays by default, and keeps an explicit explode: false', async () => {
    const build = await builder('edges.yaml');
    const req = build('POST::tags', { tags: ['a', 'b'], ids: [1, 2], name: 'n m' });
    expect(new URLSearchParams(req.body as string).getAll('tags')).toEqual(['a', 'b']);
    expect(req.body).toContain('ids=1,2');
    expect(req.body).toContain('name=n%20m');
    // A part with its own contentType stays JSON-encoded.
    expect(build('POST::tags', { meta: { a: 1 } }).body).toBe(`meta=${encodeURIComponent('{"a":1}')}`);
  });

  test('leaves framing headers, and OpenAPI 3 Accept, Content-Type and Authorization, out of the tool', async () => {
    const spec = await loadSpec({ openApiSpec: path.join(FIXTURES, 'edges.yaml') });
    const manager = new ToolsManager({}, spec);
    manager.generateTools();
    expect(Object.keys(manager.getToolById('GET::session')!.inputSchema.properties ?? {}).sort()).toEqual(['X-Api-Key', 'c1', 'c2']);
  });
});

describe('buildUpstreamRequest: what swagger-client serialises wrongly', () => {
  test('allowReserved keeps reserved characters and percent-encoded triples, and still encodes #, [, ] and the rest', async () => {
    const build = await builder('serialization.yaml');
    const query = (args: Record<string, unknown>) => new URL(build('GET::search', args).url).search;
    expect(query({ q: 'C#', page: 2 })).toBe('?page=2&q=C%23');
    expect(query({ q: 'issue #42 a/b?c=d&e+f' })).toBe('?q=issue%20%2342%20a/b?c=d&e+f');
    expect(query({ q: '%41 100% [x] é' })).toBe('?q=%41%20100%25%20%5Bx%5D%20%C3%A9');
    expect(() => build('GET::search', { q: 'bad \ud800' })).toThrow("argument 'q' has a lone UTF-16 surrogate");
  });

  test('space- and pipe-delimited parameters use their separators, for arrays and objects', async () => {
    const build = await builder('serialization.yaml');
    const query = (args: Record<string, unknown>) => new URL(build('GET::search', args).url).search;
    expect(query({ spaced: { R: 100, G: 200 } })).toBe('?spaced=R%20100%20G%20200');
    expect(query({ piped: ['a b', 'c'] })).toBe('?piped=a%20b%7Cc');
    expect(query({ pipedObject: { R: 1, B: 2 } })).toBe('?pipedObject=R%7C1%7CB%7C2');
    expect(query({ piped: [] })).toBe('');
  });

  test('explodes array and object cookies into pairs, explode being form style\'s default', async () => {
    const build = await builder('serialization.yaml');
    expect(build('GET::search', { color: ['blue', 'black'] }).headers.cookie).toBe('color=blue; color=black');
    expect(build('GET::search', { rgb: { R: 100, G: 200 } }).headers.cookie).toBe('R=100; G=200');
    expect(build('GET::search', { flat: ['a', 'b'], color: ['x y'] }).headers.cookie).toBe('color=x%20y; flat=a,b');
  });

  test('sends a required body whose properties were all left out as {}, and a nullable body given as null', async () => {
    const build = await builder('serialization.yaml');
    const empty = build('POST::things', {});
    expect(empty.headers['content-type']).toBe('application/json');
    expect(empty.body).toBe('{}');
    const nothing = build('PUT::nullable', { body: null });
    expect(nothing.headers['content-type']).toBe('application/json');
    expect(nothing.body).toBe('null');
    // The builder drops every false-like body, as if none were given: each is its JSON literal.
    const flag = (await builder('real-world-shapes.yaml'));
    // A merge patch (an object) rather than the JSON Patch listed first; each Accept type once.
    const patch = flag('PATCH::pods__---name', { name: 'p1', body: { metadata: { labels: { x: 'y' } } } });
    expect([patch.headers['content-type'], patch.body, patch.headers.accept]).toEqual(['application/merge-patch+json', '{"metadata":{"labels":{"x":"y"}}}', 'application/json, application/yaml']);
    for (const [toolId, value, sent] of [['POST::flag', false, 'false'], ['PUT::count', 0, '0'], ['PUT::label', '', '""'], ['PUT::label', 'x', '"x"']] as const) {
      const request = flag(toolId, { body: value });
      expect([request.body, request.headers['content-type']]).toEqual([sent, 'application/json']);
    }
  });

  test('multipart: one part per array item, binary properties as file parts from base64, and refuses what is not base64', async () => {
    const build = await builder('serialization.yaml');
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    const form = build('POST::upload', { tags: ['a,b', 'c'], file: b64('\u0000\u00ffbytes'), images: [b64('one'), b64('two')], note: 'n' }).body as FormData;
    expect(form.getAll('tags')).toEqual(['a,b', 'c']);
    const file = form.get('file') as File;
    expect([file.name, file.type]).toEqual(['file', 'application/octet-stream']);
    expect(Buffer.from(await file.arrayBuffer())).toEqual(Buffer.from('\u0000\u00ffbytes'));
    const images = form.getAll('images') as File[];
    expect(images.map((image) => image.type)).toEqual(['image/png', 'image/png']);
    expect(await Promise.all(images.map(async (image) => Buffer.from(await image.arrayBuffer()).toString()))).toEqual(['one', 'two']);
    expect(() => build('POST::upload', { file: 'not base64!' })).toThrow("argument 'file' must be base64");
    // Swagger 2.0 `type: file` form parameters too.
    const legacy = (await builder('swagger-2.0.json'))('POST::uploads__---kind', { kind: 'k', note: 'n', file: b64('2.0 bytes') }).body as FormData;
    expect(legacy.get('note')).toBe('n');
    expect(Buffer.from(await (legacy.get('file') as File).arrayBuffer()).toString()).toBe('2.0 bytes');
    expect(() => build('POST::upload', { images: [b64('ok'), '???'] })).toThrow("argument 'images[1]' must be base64");
  });

  test('an application/octet-stream body is given as base64 and sent as its bytes; the input schema says so', async () => {
    const build = await builder('serialization.yaml');
    const blob = build('PUT::blob', { body: Buffer.from([0, 1, 254, 255]).toString('base64') });
    expect(blob.headers['content-type']).toBe('application/octet-stream');
    expect(blob.body).toEqual(Buffer.from([0, 1, 254, 255]));
    const spec = await loadSpec({ openApiSpec: path.join(FIXTURES, 'serialization.yaml') });
    const manager = new ToolsManager({}, spec);
    manager.generateTools();
    expect(manager.getToolById('PUT::blob')!.inputSchema.properties!.body).toMatchObject({ type: 'string', contentEncoding: 'base64' });
    expect(manager.getToolById('POST::upload')!.inputSchema.properties!.images).toMatchObject({ type: 'array', items: { type: 'string', contentEncoding: 'base64' } });
  });

  test('an XML body described by an object schema is one string argument, sent as written', async () => {
    const build = await builder('serialization.yaml');
    const xml = build('POST::xml', { body: '<thing><name>n</name></thing>' });
    expect(xml.headers['content-type']).toBe('application/xml');
    expect(xml.body).toBe('<thing><name>n</name></thing>');
  });

  test('keeps the query of a base URL, before the operation\'s', async () => {
    const spec = { openapi: '3.0.3', paths: { '/items/{id}': { get: { operationId: 'op', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }, { name: 'q', in: 'query', schema: { type: 'string' } }] } } } };
    const targets = new Map([['id', { kind: 'parameter', in: 'path', name: 'id' }], ['q', { kind: 'parameter', in: 'query', name: 'q' }]] as const);
    const plan = { spec: spec as unknown as JsonObject, targets: new Map<string, ArgumentTarget>(targets) };
    expect(buildUpstreamRequest(plan, { id: '7', q: 'x' }, `${BASE}?api-version=2024-01`).url).toBe(`${BASE}/items/7?api-version=2024-01&q=x`);
    expect(buildUpstreamRequest(plan, { id: '7' }, `${BASE}/?api-version=2024-01`).url).toBe(`${BASE}/items/7?api-version=2024-01`);
  });
});

describe('checkUrl', () => {
  test('refuses another origin or a path outside the base', () => {
    expect(() => checkUrl('http://other:8080/api/v1/x', BASE)).toThrow(expect.objectContaining({ code: 'BLOCKED' }));
    expect(() => checkUrl('http://127.0.0.1:8080/admin', BASE)).toThrow(expect.objectContaining({ code: 'BLOCKED' }));
    expect(checkUrl('http://127.0.0.1:8080/api/v1/x/../y', BASE)).toBe('http://127.0.0.1:8080/api/v1/y');
  });
});
