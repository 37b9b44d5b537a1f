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

  test('write a property under its encoding\'s contentType as that type\'s text: a string under JSON is a JSON string', () => {
    // OpenAPI's own example (Encoding the x-www-form-urlencoded Media Type): `id=%22f81d…%22`. The string went as it was.
    expect(build('mixed', { meta: 'f81d' }).body).toBe('meta=%22f81d%22');
    expect(build('mixed', { meta: ['a', 1] }).body).toBe('meta=%5B%22a%22%2C1%5D');
  });

  test('leave out a null property, and send an empty string as name=', () => {
    expect(build('mixed', { note: null, q: '' }).body).toBe('q=');
    expect(build('mixed', { note: '' }).body).toBe('note=');
  });
});

describe('deepObject form properties and query parameters (Stripe)', () => {
  const deep = { explode: true, style: 'deepObject' };
  const STRIPE = oas3({
    '/v1/checkout/sessions': {
      post: {
        operationId: 'checkout',
        requestBody: body('application/x-www-form-urlencoded', {
          type: 'object',
          properties: {
            mode: { type: 'string' }, expand: { type: 'array', items: { type: 'string' } }, metadata: { type: 'object', additionalProperties: { type: 'string' } },
            line_items: { type: 'array', items: { type: 'object', properties: { price: { type: 'string' }, quantity: { type: 'integer' } } } },
            invoice_settings: { type: 'object', properties: { custom_fields: { type: 'array', items: { type: 'object' } } } },
            address: { anyOf: [{ type: 'object' }, { type: 'string', enum: [''] }] },
          },
        }, { expand: deep, metadata: deep, line_items: deep, invoice_settings: deep, address: deep }),
        responses: OK,
      },
    },
    '/v1/customers': {
      get: {
        operationId: 'customers',
        parameters: [
          { name: 'expand', in: 'query', style: 'deepObject', explode: true, schema: { type: 'array', items: { type: 'string' } } },
          { name: 'created', in: 'query', style: 'deepObject', explode: true, schema: { type: 'object' } },
        ],
        responses: OK,
      },
    },
  });
  let stripe: BuildCall;
  beforeAll(async () => {
    stripe = await requestBuilder(STRIPE);
  });
  const decoded = (text: string) => text.split('&').map(decodeURIComponent);

  test('nest objects and arrays in brackets to any depth, arrays of objects indexed', () => {
    const req = stripe('checkout', {
      mode: 'payment',
      line_items: [{ price: 'price_1', quantity: 2 }, { price: 'price_2', quantity: 1 }],
      invoice_settings: { custom_fields: [{ name: 'a', value: 'b' }] },
      metadata: { order: '12345678901234567890', note: 'a&b=c' },
    });
    expect(decoded(req.body as string)).toEqual([
      'mode=payment',
      'line_items[0][price]=price_1', 'line_items[0][quantity]=2', 'line_items[1][price]=price_2', 'line_items[1][quantity]=1',
      'invoice_settings[custom_fields][0][name]=a', 'invoice_settings[custom_fields][0][value]=b',
      'metadata[order]=12345678901234567890', 'metadata[note]=a&b=c',
    ]);
    // First-level keys as before: brackets and values percent-encoded.
    expect(req.body).toContain('metadata%5Bnote%5D=a%26b%3Dc');
  });

  test('send an array of primitives as name[]=…, and an empty string or object as before', () => {
    expect(decoded(stripe('checkout', { expand: ['line_items', 'customer'] }).body as string)).toEqual(['expand[]=line_items', 'expand[]=customer']);
    expect(stripe('checkout', { address: '' }).body).toBe('address=');
    expect(stripe('checkout', { address: {}, expand: [] }).body).toBe('');
    expect(decoded(stripe('checkout', { address: { line1: '', city: 'X' } }).body as string)).toEqual(['address[line1]=', 'address[city]=X']);
  });

  test('in a query too: arrays as name[]=…, first-level objects as before', () => {
    const url = stripe('customers', { expand: ['data.default_source', 'data.tax'], created: { gt: 1, lte: 2 } }).url;
    expect(decoded(new URL(url).search.slice(1))).toEqual(['expand[]=data.default_source', 'expand[]=data.tax', 'created[gt]=1', 'created[lte]=2']);
    expect(new URL(url).search).toContain('created%5Bgt%5D=1');
  });
});

describe('form media types with parameters, and other multipart types', () => {
  test('a form type with parameters is a form body, sent under the type as written', async () => {
    const build = await requestBuilder(oas3({
      '/f5': { post: { operationId: 'charset', requestBody: body('application/x-www-form-urlencoded; charset=utf-8', TEXT), responses: OK } },
      '/f5b': { post: { operationId: 'upper', requestBody: body('Application/X-WWW-Form-Urlencoded;charset=UTF-8', TEXT), responses: OK } },
      '/f5m': { post: { operationId: 'multi', requestBody: body('multipart/form-data; charset=utf-8', TEXT), responses: OK } },
    }));
    expect(build('charset', { s: 'a b' })).toMatchObject({ body: 's=a%20b', headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' } });
    expect(build('upper', { s: 'é' })).toMatchObject({ body: 's=%C3%A9', headers: { 'content-type': 'Application/X-WWW-Form-Urlencoded;charset=UTF-8' } });
    const multipart = build('multi', { s: 'a b' });
    expect((multipart.body as FormData).get('s')).toBe('a b');
    // undici writes multipart/form-data with its boundary.
    expect(multipart.headers['content-type']).toBeUndefined();
  });

  test('a body of another multipart type is refused, saying which, instead of JSON under that label', async () => {
    const build = await requestBuilder(oas3({
      '/f5r': { post: { operationId: 'related', requestBody: body('multipart/related', TEXT), responses: OK } },
      '/f5x': { post: { operationId: 'mixed', requestBody: { content: { 'multipart/mixed; boundary=x': { schema: TEXT } } }, responses: OK } },
    }));
    expect(() => build('related', { s: 'a b' })).toThrow('cannot build the request: a multipart/related body cannot be written here (only multipart/form-data is)');
    expect(() => build('mixed', { s: 'a b' })).toThrow(expect.objectContaining({ code: 'BAD_INPUT', message: expect.stringContaining('multipart/mixed body') }));
    // An optional body left out: the call goes, without one.
    expect(build('mixed', {})).toMatchObject({ method: 'POST', body: undefined });
  });
});

describe('composed form bodies: the default encoding of an array property reaches properties in allOf, oneOf and anyOf', () => {
  const list = { type: 'array', items: { type: 'string' } };
  const schemas = {
    Base: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, ids: { type: 'array', items: { type: 'integer' } } } },
    // A $ref chain, an allOf inside allOf, and an array given as allOf of a $ref.
    Alias: { $ref: '#/components/schemas/Upload' },
    Upload: { allOf: [{ properties: { labels: list } }, { $ref: '#/components/schemas/Extra' }] },
    Extra: { properties: { colours: { allOf: [{ $ref: '#/components/schemas/List' }], description: 'colours' } } },
    List: list,
    Cat: { type: 'object', properties: { kind: { type: 'string', enum: ['cat'] }, tags: list } },
    Dog: { type: 'object', properties: { kind: { type: 'string', enum: ['dog'] }, ids: { type: 'array', items: { type: 'integer' } } } },
  };
  const composed = { allOf: [{ $ref: '#/components/schemas/Base' }, { properties: { tags: list, note: { type: 'string' } } }] };
  const spec = {
    ...oas3({
      '/c/form': { post: { operationId: 'form', requestBody: body('application/x-www-form-urlencoded', composed), responses: OK } },
      '/c/kept': { post: { operationId: 'kept', requestBody: body('application/x-www-form-urlencoded', composed, { ids: { style: 'form', explode: false } }), responses: OK } },
      '/c/parts': { post: { operationId: 'parts', requestBody: body('multipart/form-data', { allOf: [{ $ref: '#/components/schemas/Alias' }, ...composed.allOf] }), responses: OK } },
      '/c/one': { post: { operationId: 'one', requestBody: body('multipart/form-data', { oneOf: [{ $ref: '#/components/schemas/Cat' }, { $ref: '#/components/schemas/Dog' }] }), responses: OK } },
      '/c/any': { post: { operationId: 'any', requestBody: body('application/x-www-form-urlencoded', { anyOf: [{ $ref: '#/components/schemas/Cat' }, { $ref: '#/components/schemas/Dog' }] }), responses: OK } },
    }),
    components: { schemas },
  };
  let build: BuildCall;
  beforeAll(async () => {
    build = await requestBuilder(spec);
  });

  test('form-urlencoded: one pair per item for arrays of every allOf part, an explicit explode: false kept', () => {
    expect(build('form', { name: 'n', ids: [1, 2], tags: ['a', 'b'] }).body).toBe('name=n&ids=1&ids=2&tags=a&tags=b');
    expect(build('kept', { name: 'n', ids: [1, 2], tags: ['a', 'b'] }).body).toBe('name=n&ids=1,2&tags=a&tags=b');
  });

  test('multipart: one part per item for arrays behind $ref chains and nested allOf', () => {
    const form = build('parts', { name: 'n', labels: ['x', 'y'], colours: ['red', 'blue'], ids: [1, 2], tags: ['a', 'b'], note: 'n' }).body as FormData;
    expect([form.getAll('labels'), form.getAll('colours'), form.getAll('ids'), form.getAll('tags'), form.getAll('note')]).toEqual([['x', 'y'], ['red', 'blue'], ['1', '2'], ['a', 'b'], ['n']]);
  });

  test('oneOf and anyOf: the body is one argument, each array property of any branch sent item by item', () => {
    const cat = build('one', { body: { kind: 'cat', tags: ['a', 'b'] } }).body as FormData;
    expect([cat.getAll('kind'), cat.getAll('tags')]).toEqual([['cat'], ['a', 'b']]);
    const dog = build('one', { body: { kind: 'dog', ids: [1, 2] } }).body as FormData;
    expect(dog.getAll('ids')).toEqual(['1', '2']);
    expect(build('any', { body: { kind: 'dog', ids: [1, 2] } }).body).toBe('kind=dog&ids=1&ids=2');
  });

  test('an OpenAPI 3.1 array that may be null (a type list) is sent one part per item too', async () => {
    const nullable = { allOf: [{ properties: { tags: { type: ['array', 'null'], items: { type: 'string' } } } }] };
    const build31 = await requestBuilder(oas3({ '/c/31': { post: { operationId: 'nullable', requestBody: body('multipart/form-data', nullable), responses: OK } } }, '3.1.0'));
    expect((build31('nullable', { tags: ['a', 'b'] }).body as FormData).getAll('tags')).toEqual(['a', 'b']);
  });
});
