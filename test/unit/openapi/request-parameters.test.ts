import { requestBuilder, oas3, OK, BASE } from '../../helpers/openapi-request';

describe('a query parameter the base URL also sets', () => {
  test('is sent once, the argument\'s value replacing the base URL\'s (Azure api-version)', async () => {
    const build = await requestBuilder(oas3({
      '/things': { get: { operationId: 'things', parameters: [{ name: 'api-version', in: 'query', required: true, schema: { type: 'string' } }, { name: 'f', in: 'query', allowReserved: true, schema: { type: 'string' } }], responses: OK } },
    }));
    const base = `${BASE}?api-version=1&keep=a+b&api-version=0`;
    expect(build('things', { 'api-version': '2024' }, base).url).toBe(`${BASE}/things?keep=a+b&api-version=2024`);
    // Names compared decoded, also for the parameters serialised outside the builder.
    expect(build('things', { 'api-version': '2024', f: 'x' }, `${BASE}?api%2Dversion=1&f=old`).url).toBe(`${BASE}/things?api-version=2024&f=x`);
  });
});

describe('a parameter whose schema allows a string and an object or array', () => {
  test('sends a string argument as that string, never read as JSON', async () => {
    const build = await requestBuilder(oas3({
      '/u/{id}': {
        get: {
          operationId: 'union',
          parameters: [
            { name: 'id', in: 'path', required: true, schema: { type: ['string', 'array'], items: { type: 'string' } } },
            { name: 'filter', in: 'query', schema: { oneOf: [{ type: 'string' }, { type: 'object' }] } },
            { name: 'list', in: 'query', schema: { type: ['string', 'array'], items: { type: 'string' } } },
            { name: 'X-F', in: 'header', schema: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] } },
          ],
          responses: OK,
        },
      },
    }, '3.1.0'));
    const req = build('union', { id: '["a","b"]', filter: '{"status":"open"}', list: '[1,2]', 'X-F': '["a","b"]' });
    // `filter` may be an object, so serialize.ts writes it, after the builder's `list`.
    expect(req.url).toBe(`${BASE}/u/%5B%22a%22%2C%22b%22%5D?list=%5B1%2C2%5D&filter=%7B%22status%22%3A%22open%22%7D`);
    expect(req.headers['x-f']).toBe('["a","b"]');
    // Objects and arrays given as such are serialised by their style, as before.
    const structured = build('union', { id: ['a', 'b'], filter: { status: 'open' }, list: ['1', '2'], 'X-F': ['a', 'b'] });
    expect(structured.url).toBe(`${BASE}/u/a,b?list=1&list=2&status=open`);
    expect(structured.headers['x-f']).toBe('a,b');
  });
});

describe('Swagger 2.0 Accept and Content-Type header arguments', () => {
  const header = (name: string, values: string[]) => ({ name, in: 'header', type: 'string', enum: values });
  const SPEC = {
    swagger: '2.0',
    info: { title: 't', version: '1' },
    paths: {
      '/report': { get: { operationId: 'report', produces: ['application/json', 'text/csv'], parameters: [header('Accept', ['application/json', 'text/csv'])], responses: { 200: { description: 'ok' } } } },
      '/things': {
        post: {
          operationId: 'things',
          consumes: ['application/json', 'application/vnd.x+json'],
          parameters: [header('Content-Type', ['application/json', 'application/vnd.x+json', 'application/xml']), { name: 'thing', in: 'body', schema: { type: 'object', properties: { a: { type: 'string' } } } }],
          responses: { 200: { description: 'ok' } },
        },
      },
    },
  };

  test('Accept is sent as given, where produces replaced it', async () => {
    const build = await requestBuilder(SPEC);
    expect(build('report', { Accept: 'text/csv' }).headers.accept).toBe('text/csv');
    expect(build('report', {}).headers.accept).toBe('application/json, text/csv');
  });

  test('Content-Type is sent as given when it names the kind of body written, refused when it does not, dropped without a body', async () => {
    const build = await requestBuilder(SPEC);
    const vendor = build('things', { 'Content-Type': 'application/vnd.x+json', a: 'x' });
    expect([vendor.headers['content-type'], vendor.body]).toEqual(['application/vnd.x+json', '{"a":"x"}']);
    expect(() => build('things', { 'Content-Type': 'application/xml', a: 'x' })).toThrow("header argument 'Content-Type' (application/xml) does not fit the body, which is written as application/json");
    const none = build('things', { 'Content-Type': 'application/vnd.x+json' });
    expect([none.headers['content-type'], none.body]).toEqual([undefined, undefined]);
  });
});

describe('a parameter whose name is another\'s <in>.<name>', () => {
  test('gets its own value only (query.x took query x\'s)', async () => {
    const string = { type: 'string' };
    const build = await requestBuilder(oas3({
      '/f13': { get: { operationId: 'dotted', parameters: [{ name: 'x', in: 'query', schema: string }, { name: 'query.x', in: 'query', schema: string }, { name: 'header.h', in: 'query', schema: string }, { name: 'h', in: 'header', schema: string }], responses: OK } },
    }));
    const query = (args: Record<string, unknown>) => new URL(build('dotted', args).url).search;
    expect(query({ x: 'X' })).toBe('?x=X');
    expect(query({ 'query.x': 'Y' })).toBe('?query.x=Y');
    expect(query({ x: 'X', 'query.x': 'Y' })).toBe('?x=X&query.x=Y');
    expect([query({ h: 'H' }), build('dotted', { h: 'H' }).headers.h]).toEqual(['', 'H']);
  });
});

describe('an empty list or map for a query parameter', () => {
  test('leaves the parameter out, exploded or not, in every style (RFC 6570: undefined)', async () => {
    const param = (name: string, style: string, explode: boolean, type: 'array' | 'object') => ({ name, in: 'query', style, explode, schema: type === 'array' ? { type, items: { type: 'string' } } : { type } });
    const build = await requestBuilder(oas3({
      '/e': {
        get: {
          operationId: 'empty',
          parameters: [
            param('a', 'form', false, 'array'),
            param('b', 'form', true, 'array'),
            param('c', 'form', false, 'object'),
            param('d', 'pipeDelimited', false, 'array'),
            param('e', 'spaceDelimited', false, 'array'),
            param('f', 'deepObject', true, 'object'),
            param('g', 'form', false, 'array'),
          ],
          responses: OK,
        },
      },
    }));
    expect(build('empty', { a: [], b: [], c: {}, d: [], e: [], f: {}, g: ['x'] }).url).toBe(`${BASE}/e?g=x`);
  });
});

describe('Swagger 2.0 collectionFormat of header and multipart arrays', () => {
  test('joins header arrays with their format\'s separator, and ssv and tsv multipart parts with a space and a tab', async () => {
    const array = (name: string, where: string, collectionFormat?: string) => ({ name, in: where, type: 'array', items: { type: 'string' }, ...(collectionFormat ? { collectionFormat } : {}) });
    const build = await requestBuilder({
      swagger: '2.0',
      info: { title: 't', version: '1' },
      paths: {
        '/h': { get: { operationId: 'headers', parameters: [array('X-P', 'header', 'pipes'), array('X-S', 'header', 'ssv'), array('X-C', 'header')], responses: OK } },
        '/m': {
          post: {
            operationId: 'parts',
            consumes: ['multipart/form-data'],
            parameters: [array('s', 'formData', 'ssv'), array('t', 'formData', 'tsv'), array('p', 'formData', 'pipes'), { name: 'f', in: 'formData', type: 'file' }],
            responses: OK,
          },
        },
      },
    });
    const headers = build('headers', { 'X-P': ['a', 'b'], 'X-S': ['a', 'b'], 'X-C': ['a', 'b'] }).headers;
    expect([headers['x-p'], headers['x-s'], headers['x-c']]).toEqual(['a|b', 'a b', 'a,b']);
    const body = build('parts', { s: ['x y', 'z'], t: ['x', 'y'], p: ['x', 'y'], f: Buffer.from('hi').toString('base64') }).body as FormData;
    expect([body.get('s'), body.get('t'), body.get('p')]).toEqual(['x y z', 'x\ty', 'x|y']);
  });
});

describe('a parameter with a default, not given', () => {
  // The builder sent Swagger 2.0's `default` (and one written on an OpenAPI 3 Parameter Object)
  // in place of no value: the default is what the server assumes when none is sent.
  const SWAGGER = {
    swagger: '2.0',
    info: { title: 't', version: '1' },
    paths: {
      '/list': {
        post: {
          operationId: 'things',
          consumes: ['application/x-www-form-urlencoded'],
          parameters: [
            { name: 'page', in: 'query', type: 'integer', default: 1 },
            { name: 'sort', in: 'query', type: 'string', enum: ['created', 'name'], default: 'created' },
            { name: 'X-Lang', in: 'header', type: 'string', default: 'en' },
            { name: 'note', in: 'formData', type: 'string', default: 'none' },
            { name: 'q', in: 'formData', type: 'string' },
          ],
          responses: OK,
        },
      },
    },
  };

  test.each([
    ['Swagger 2.0: no query, header or form value is sent', {}, '/list', undefined, 'q=x'],
    ['Swagger 2.0: the values given are sent', { page: 2, sort: 'name', 'X-Lang': 'de', note: 'n' }, '/list?page=2&sort=name', 'de', 'note=n&q=x'],
  ])('%s', async (_label, args, url, lang, body) => {
    const build = await requestBuilder(SWAGGER);
    const req = build('things', { ...args, q: 'x' });
    expect([req.url, req.headers['x-lang'], req.body]).toEqual([`${BASE}${url}`, lang, body]);
  });

  test('OpenAPI 3: a default written on the Parameter Object is not sent either', async () => {
    const build = await requestBuilder(oas3({ '/l': { get: { operationId: 'l', parameters: [{ name: 'page', in: 'query', default: 1, schema: { type: 'integer', default: 1 } }], responses: OK } } }));
    expect([build('l', {}).url, build('l', { page: 3 }).url]).toEqual([`${BASE}/l`, `${BASE}/l?page=3`]);
  });
});

describe('an array or object cookie parameter with explode false', () => {
  test('is the style table\'s name=a,b: commas between items as they are, one inside an item encoded', async () => {
    const build = await requestBuilder(oas3({
      '/c': {
        get: {
          operationId: 'cookies',
          parameters: [
            { name: 'flat', in: 'cookie', explode: false, schema: { type: 'array', items: { type: 'string' } } },
            { name: 'rgb', in: 'cookie', explode: false, schema: { type: 'object', additionalProperties: { type: 'integer' } } },
            { name: 'each', in: 'cookie', schema: { type: 'object', additionalProperties: { type: 'integer' } } },
          ],
          responses: OK,
        },
      },
    }));
    // The builder encoded the separators too, `flat=a%2Cb%2Cc%20d`: a server that does not decode
    // cookie values could not split the list, and one that does could not tell the commas apart.
    expect(build('cookies', { flat: ['a,b', 'c d'], rgb: { R: 100, G: 200 } }).headers.cookie).toBe('flat=a%2Cb,c%20d; rgb=R,100,G,200');
    // Empty: undefined in RFC 6570, so no cookie (the builder sent `rgb=` and `each=`).
    expect(build('cookies', { flat: [], rgb: {}, each: {} }).headers.cookie).toBeUndefined();
  });
});

describe('a parameter described by content instead of schema', () => {
  const json = (schema: unknown) => ({ 'application/json': { schema } });
  const SPEC = oas3({
    '/p/{doc}': {
      get: {
        operationId: 'content',
        parameters: [
          { name: 'doc', in: 'path', required: true, content: json({ type: 'string' }) },
          { name: 'q', in: 'query', content: json({ type: 'string' }) },
          { name: 'where', in: 'query', content: json({ type: 'object' }) },
          { name: 'ids', in: 'query', content: json({ type: 'array', items: { type: 'string' } }) },
          { name: 'X-Q', in: 'header', content: json({ type: 'string' }) },
          { name: 'X-Text', in: 'header', content: { 'text/plain': { schema: { type: 'object' } } } },
          { name: 'c', in: 'cookie', content: json({ type: 'string' }) },
        ],
        responses: OK,
      },
    },
  });

  test('is the value as its media type\'s text: a string under JSON is a JSON string, items stay strings', async () => {
    const build = await requestBuilder(SPEC);
    const req = build('content', { doc: 'a/b', q: 'abc', where: { a: 1 }, ids: ['1', 'x'], 'X-Q': 'abc', 'X-Text': { a: 1 }, c: 'abc' });
    // The builder sent a string as it is (`?q=abc`, no JSON document), read array items as JSON
    // (`["1"]` went as `[1]`) and wrote an object under text/plain as `[object Object]`.
    expect(req.url).toBe(`${BASE}/p/%22a%2Fb%22?q=%22abc%22&where=%7B%22a%22%3A1%7D&ids=%5B%221%22%2C%22x%22%5D`);
    expect([req.headers['x-q'], req.headers['x-text'], req.headers.cookie]).toEqual(['"abc"', '{"a":1}', 'c=%22abc%22']);
  });

  test('sends an empty array or string, which are JSON documents, where a styled parameter sends none', async () => {
    const build = await requestBuilder(SPEC);
    expect(build('content', { doc: 'd', ids: [], q: '' }).url).toBe(`${BASE}/p/%22d%22?q=%22%22&ids=%5B%5D`);
  });
});

describe('Swagger 2.0 pipes query arrays', () => {
  test('join with %7C: a raw | is no URL character, and Tomcat refuses it', async () => {
    const build = await requestBuilder({
      swagger: '2.0',
      info: { title: 't', version: '1' },
      paths: { '/q': { get: { operationId: 'piped', parameters: [{ name: 'p', in: 'query', type: 'array', items: { type: 'string' }, collectionFormat: 'pipes' }, { name: 'n', in: 'query', type: 'integer' }], responses: OK } } },
    });
    expect(new URL(build('piped', { p: ['a|b', 'c d'], n: 1 }).url).search).toBe('?n=1&p=a%7Cb%7Cc%20d');
    expect(new URL(build('piped', { p: [] }).url).search).toBe('');
  });
});
