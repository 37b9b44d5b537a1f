import { requestBuilder, oas3, OK, type BuildCall } from '../../helpers/openapi-request';
import { swaggerBuildRequest } from '../../../workers/openapi/lazy';

const TEXT = { type: 'object', properties: { s: { type: 'string' } } };
const body = (type: string, schema: unknown, encoding?: unknown) => ({ required: true, content: { [type]: encoding === undefined ? { schema } : { schema, encoding } } });
const SPEC = oas3({
  '/form': { post: { operationId: 'form', requestBody: body('application/x-www-form-urlencoded', TEXT), responses: OK } },
  '/parts': { post: { operationId: 'parts', requestBody: body('multipart/form-data', { type: 'object', properties: { s: { type: 'string' }, list: { type: 'array', items: { type: 'string' } } } }), responses: OK } },
  '/mixed': {
    post: {
      operationId: 'mixed',
      requestBody: body('application/x-www-form-urlencoded', {
        type: 'object',
        properties: {
          n: { type: 'integer' }, flag: { type: 'boolean' }, tags: { type: 'array', items: { type: 'string' } }, ids: { type: 'array', items: { type: 'integer' } },
          meta: { type: 'object' }, address: { type: 'object' }, q: { type: 'string' }, note: { type: 'string', nullable: true }, any: {},
        },
      }, { ids: { style: 'form', explode: false }, meta: { contentType: 'application/json' }, address: { style: 'deepObject', explode: true }, q: { allowReserved: true } }),
      responses: OK,
    },
  },
});

let build: BuildCall;
beforeAll(async () => {
  build = await requestBuilder(SPEC);
});

describe('form-urlencoded and multipart bodies', () => {
  test('send a string property exactly as given, never read as JSON', () => {
    for (const s of ['12345678901234567890', '1E10', '2.50', '1.0', ' 7 ', '-0', '"Ann"', '[1,2]', '[]', 'null', 'true', '{"a":1}']) {
      const req = build('form', { s });
      expect(req.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(new URLSearchParams(req.body as string).get('s')).toBe(s);
    }
    expect(build('form', { s: '"Ann"' }).body).toBe('s=%22Ann%22');
  });

  test('send a multipart string part exactly as given, and string array items too', () => {
    for (const s of ['12345678901234567890', '1E10', '"Ann"', '[1,2]']) {
      const form = build('parts', { s, list: [s, 'x'] }).body as FormData;
      expect(form.get('s')).toBe(s);
      expect(form.getAll('list')).toEqual([s, 'x']);
    }
    expect((build('parts', { list: ['12345678901234567890'] }).body as FormData).getAll('list')).toEqual(['12345678901234567890']);
  });

  test('write every other value as swagger-client does, where it reads no JSON', () => {
    const args = { n: 0, flag: false, tags: ['a b', 'c&d'], ids: [1, 2], meta: { k: 'v' }, address: { city: 'Köln', zip: '1' }, q: 'a/b?c', any: 'x y' };
    const ours = build('mixed', args);
    const operation = (SPEC.paths as Record<string, any>)['/mixed'].post;
    const spec = { openapi: '3.0.3', paths: { '/mixed': { post: { ...operation, operationId: 'op' } } } };
    // The reference: swagger-client given each value as its JSON text, which its JSON.parse gives back.
    const reference = swaggerBuildRequest()({ spec, operationId: 'op', requestBody: Object.fromEntries(Object.entries(args).map(([k, v]) => [k, JSON.stringify(v)])), requestContentType: 'application/x-www-form-urlencoded' }) as { body: string };
    // The builder joins an array without style with commas; OpenAPI's default (form, explode) is one pair per item.
    expect(ours.body).toBe(reference.body.replace('tags=a%20b,c%26d', 'tags=a%20b&tags=c%26d'));
    expect(ours.body).toBe('n=0&flag=false&tags=a%20b&tags=c%26d&ids=1,2&meta=%7B%22k%22%3A%22v%22%7D&address%5Bcity%5D=K%C3%B6ln&address%5Bzip%5D=1&q=a/b?c&any=x%20y');
  });

  test('leave out a null property, and send an empty string as name=', () => {
    expect(build('mixed', { note: null, q: '' }).body).toBe('q=');
    expect(build('mixed', { note: '' }).body).toBe('note=');
  });
});
