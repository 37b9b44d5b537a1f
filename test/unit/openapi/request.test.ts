import path from 'node:path';
import { loadSpec } from '../../../workers/openapi/load-spec';
import { buildUpstreamRequest, checkUrl, planSpec, requestPlan } from '../../../workers/openapi/request';
import { ToolsManager } from '../../../workers/openapi/tools-manager';
import { swaggerBuildRequest } from '../../../workers/openapi/lazy';

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
    const multipart = build('POST::files', { name: 'n', file: 'content' });
    expect(multipart.body).toBeInstanceOf(FormData);
    expect(multipart.headers['content-type']).toBeUndefined();
    expect((multipart.body as FormData).get('name')).toBe('n');
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
      const spec = { openapi: '3.0.3', paths: { '/r': { get: { operationId: 'op', parameters: [], responses: kept } } } };
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

describe('checkUrl', () => {
  test('refuses another origin or a path outside the base', () => {
    expect(() => checkUrl('http://other:8080/api/v1/x', BASE)).toThrow(expect.objectContaining({ code: 'BLOCKED' }));
    expect(() => checkUrl('http://127.0.0.1:8080/admin', BASE)).toThrow(expect.objectContaining({ code: 'BLOCKED' }));
    expect(checkUrl('http://127.0.0.1:8080/api/v1/x/../y', BASE)).toBe('http://127.0.0.1:8080/api/v1/y');
  });
});
