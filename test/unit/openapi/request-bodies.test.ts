import path from 'node:path';
import { loadSpec } from '../../../workers/openapi/load-spec';
import { buildUpstreamRequest, requestPlan } from '../../../workers/openapi/request';
import { ToolsManager, type EndpointTool } from '../../../workers/openapi/tools-manager';
import { ArgumentValidator } from '../../../workers/openapi/validate-args';

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'openapi');
const BASE = 'http://127.0.0.1:8080/api';

/** The tools of a fixture, with a way to validate arguments and build the request, as a call does. */
async function api(file: string) {
  const spec = await loadSpec({ openApiSpec: path.join(FIXTURES, file) });
  const manager = new ToolsManager({}, spec);
  manager.generateTools();
  const validator = new ArgumentValidator();
  const tool = (toolId: string): EndpointTool => manager.getToolById(toolId)!;
  return {
    tool,
    props: (toolId: string) => tool(toolId).inputSchema.properties as Record<string, Record<string, unknown>>,
    /** The validator's message, or undefined when the arguments pass. */
    check(toolId: string, args: Record<string, unknown>): string | undefined {
      try {
        validator.check(toolId, tool(toolId).inputSchema, args);
        return undefined;
      } catch (error) {
        return (error as Error).message;
      }
    },
    build(toolId: string, args: Record<string, unknown>) {
      const t = tool(toolId);
      validator.check(toolId, t.inputSchema, args);
      return buildUpstreamRequest(requestPlan(t.entry!, spec, t.targets, t.body), args, BASE);
    },
  };
}

describe('request bodies', () => {
  test('a body declared under */* or application/* with an object or array schema is JSON: its properties are arguments, sent as application/json', async () => {
    const { tool, props, build } = await api('media-ranges.yaml');
    const pod = tool('POST::pods');
    expect(pod.body).toMatchObject({ contentType: 'application/json', shape: 'object' });
    expect(Object.keys(props('POST::pods'))).toEqual(['kind', 'metadata']);
    expect(pod.inputSchema.required).toEqual(['metadata']);
    const sent = build('POST::pods', { kind: 'Pod', metadata: { name: 'p' } });
    expect(sent.headers['content-type']).toBe('application/json');
    expect(JSON.parse(sent.body as string)).toEqual({ kind: 'Pod', metadata: { name: 'p' } });

    expect(props('PUT::lists').body).toMatchObject({ type: 'array', items: { type: 'string' } });
    const list = build('PUT::lists', { body: ['a', 'b'] });
    expect(list.headers['content-type']).toBe('application/json');
    expect(list.body).toBe('["a","b"]');

    // Bytes under */* stay bytes: only object and array schemas are taken for JSON.
    expect(tool('PUT::blobs').body).toMatchObject({ contentType: '*/*', binaryBody: true });
  });

  test('leave readOnly properties out at every depth, and out of required; keep writeOnly ones', async () => {
    const { props, tool, check, build } = await api('read-only.yaml');
    expect(Object.keys(props('POST::pets'))).toEqual(['name', 'owner']);
    expect(tool('POST::pets').inputSchema.required).toEqual(['name', 'owner']);
    const owner = props('POST::pets').owner as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(owner.properties)).toEqual(['email', 'password']);
    expect(owner.required).toEqual(['email']);
    // The server assigns owner.id: the caller no longer has to invent one.
    expect(check('POST::pets', { name: 'Rex', owner: { email: 'a@b.co' } })).toBeUndefined();
    expect(JSON.parse(build('POST::pets', { name: 'Rex', owner: { email: 'a@b.co', password: 'p' } }).body as string)).toEqual({ name: 'Rex', owner: { email: 'a@b.co', password: 'p' } });
    // Inside array items, and required by an allOf sibling of the part that declares it.
    expect(check('PUT::teams', { body: [{ title: 't' }] })).toBeUndefined();
    expect(check('PUT::teams', { body: [{}] })).toBe("invalid arguments: 'body.0.title' is required");
  });

  test('a body of a non-text type without a schema (OAS 3.1 application/octet-stream: {}) is given as base64 and sent as the bytes', async () => {
    const { tool, props, check, build } = await api('untyped-bodies-3.1.yaml');
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);
    for (const [toolId, type] of [['PUT::blobs', 'application/octet-stream'], ['PUT::images', 'image/png']]) {
      expect(tool(toolId).body).toMatchObject({ contentType: type, shape: 'whole', binaryBody: true });
      expect(props(toolId).body).toMatchObject({ type: 'string', contentEncoding: 'base64' });
      const sent = build(toolId, { body: bytes.toString('base64') });
      expect(sent.headers['content-type']).toBe(type);
      expect(Buffer.isBuffer(sent.body) && sent.body.equals(bytes)).toBe(true);
      expect(() => build(toolId, { body: 'not base64!' })).toThrow("argument 'body' must be base64");
    }
    // Text types stay text, sent as written.
    expect(tool('PUT::notes').body?.binaryBody).toBeUndefined();
    expect(build('PUT::notes', { body: 'hello' }).body).toBe('hello');
    expect(tool('PUT::docs').body?.binaryBody).toBeUndefined();
    expect(check('PUT::docs', { body: '<a/>' })).toBeUndefined();
  });

  test('a body that takes undeclared names is one body argument: a free-form form or multipart body, and properties with additionalProperties', async () => {
    const { tool, props, check, build } = await api('undeclared-properties.yaml');
    expect(tool('POST::form').body).toMatchObject({ contentType: 'application/x-www-form-urlencoded', shape: 'whole' });
    expect(tool('POST::form').inputSchema.required).toEqual(['body']);
    const form = build('POST::form', { body: { k1: 'v1', k2: 'v 2' } });
    expect(form).toMatchObject({ body: 'k1=v1&k2=v%202', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(check('POST::form', { body: { k1: 3 } })).toBe("invalid arguments: 'body.k1' must be string, got the number 3: send the string \"3\"");
    const multipart = build('POST::multipart', { body: { note: 'n' } });
    expect(multipart.body).toBeInstanceOf(FormData);
    expect((multipart.body as FormData).get('note')).toBe('n');
    // additionalProperties: false takes nothing: no argument.
    expect(props('POST::closed-form')).toEqual({});

    expect(Object.keys(props('PUT::labels__---id'))).toEqual(['id', 'body']);
    expect(props('PUT::labels__---id').body).toMatchObject({ properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: { type: 'string' } });
    const labels = build('PUT::labels__---id', { id: 'x', body: { name: 'n', color: 'red' } });
    expect(JSON.parse(labels.body as string)).toEqual({ name: 'n', color: 'red' });
    expect(check('PUT::labels__---id', { id: 'x', body: { color: 'red' } })).toBe("invalid arguments: 'body.name' is required");
  });

  test('Swagger 2.0 formData is form-urlencoded unless a file parameter needs multipart or consumes offers only multipart', async () => {
    const { tool, build } = await api('swagger-2.0-forms.json');
    expect(tool('POST::login').body?.contentType).toBe('application/x-www-form-urlencoded');
    expect(build('POST::login', { user: 'a b' })).toMatchObject({ body: 'user=a%20b', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(tool('POST::avatar').body?.contentType).toBe('multipart/form-data');
    expect(tool('POST::notes').body?.contentType).toBe('multipart/form-data');
  });

  test('a form body with a lone UTF-16 surrogate is refused, naming the argument; a JSON body carries it escaped', async () => {
    const { build } = await api('swagger-2.0-forms.json');
    expect(() => build('POST::login', { user: 'a\ud800' })).toThrow("argument 'user' has a lone UTF-16 surrogate, which a form body cannot carry");
    const split = await api('split/openapi.yaml');
    const pet = split.build('PUT::pets__---petId', { petId: 7, name: 'R\ud800' });
    expect(pet.body).toContain('"name":"R\\ud800"');
  });

  test('a body of a description split over several files is planned and sent in the terms of the files it is written in', async () => {
    const { tool, check, build } = await api('split/openapi.yaml');
    const pet = build('PUT::pets__---petId', { petId: 7, name: 'Rex', tags: ['old'], owner: { email: 'a@b.co', address: { city: 'Oslo' } } });
    expect(pet).toMatchObject({ method: 'PUT', url: `${BASE}/pets/7`, headers: { 'content-type': 'application/json' } });
    expect(JSON.parse(pet.body as string)).toEqual({ name: 'Rex', tags: ['old'], owner: { email: 'a@b.co', address: { city: 'Oslo' } } });
    expect(check('PUT::pets__---petId', { petId: 0, name: 'Rex' })).toBe("invalid arguments: 'petId' must be >= 1");
    expect(check('PUT::pets__---petId', { petId: 7 })).toBe("invalid arguments: 'name' is required");
    // The multipart form's schema is paths/tags.yaml's #/TagForm, its array in schemas/: one part per item.
    const plan = tool('POST::pets__---petId__tags').planSpec!.paths as Record<string, any>;
    expect(plan['/pets/{petId}/tags'].post.requestBody).toEqual({ content: { 'multipart/form-data': { encoding: { tags: { style: 'form', explode: true } } } } });
    const form = build('POST::pets__---petId__tags', { petId: 3, tags: ['a', 'b'], note: 'n' });
    expect(form.url).toBe(`${BASE}/pets/3/tags`);
    expect((form.body as FormData).getAll('tags')).toEqual(['a', 'b']);
    // Under */* in a path item file: JSON, as for a body in the root (media-types.ts).
    const replaced = build('PUT::pets__---petId__tags', { petId: 3, tags: ['a'] });
    expect(replaced.headers['content-type']).toBe('application/json');
    expect(JSON.parse(replaced.body as string)).toEqual({ tags: ['a'] });
  });

  test('a Swagger 2.0 body parameter in a file of its own, its schema in another folder, is sent as its object', async () => {
    const { check, build } = await api('split-2.0/swagger.yaml');
    const sent = build('PUT::pets__---petId', { petId: 7, name: 'Rex', owner: { email: 'a@b.co' } });
    expect(sent).toMatchObject({ method: 'PUT', url: `${BASE}/pets/7`, headers: { 'content-type': 'application/json' } });
    expect(JSON.parse(sent.body as string)).toEqual({ name: 'Rex', owner: { email: 'a@b.co' } });
    expect(check('PUT::pets__---petId', { petId: 'x', name: 'Rex' })).toBe('invalid arguments: \'petId\' must be integer, got the string "x"');
  });
});
