import { requestBuilder, oas3, OK, type BuildCall } from '../../helpers/openapi-request';

const PROPERTIES = {
  file: { type: 'string', format: 'binary' },
  meta: { type: 'object', properties: { a: { type: 'string' } } },
  typed: { type: 'object', properties: { a: { type: 'string' } } },
  csv: { type: 'string' },
  either: { oneOf: [{ type: 'string' }, { type: 'object' }] },
  s: { type: 'string' },
  rows2: { type: 'array', items: { type: 'object' } },
  ids: { type: 'array', items: { type: 'integer' } },
  labels: { type: 'array', items: { type: 'string' } },
  rows: { type: 'array', items: { type: 'object' } },
  quoted: { type: 'string' },
  plain: { type: 'object' },
};
const SPEC = oas3({
  '/upload': {
    post: {
      operationId: 'upload',
      requestBody: { content: { 'multipart/form-data': { schema: { type: 'object', properties: PROPERTIES }, encoding: { typed: { contentType: 'application/json' }, csv: { contentType: 'text/csv' }, labels: { contentType: 'text/plain' }, rows: { contentType: 'application/json; charset=utf-8, text/plain' }, quoted: { contentType: 'application/json' }, plain: { contentType: 'text/plain' } } } } },
      responses: OK,
    },
  },
});

let build: BuildCall;
beforeAll(async () => {
  build = await requestBuilder(SPEC);
});

/** A part as undici writes it: its file name (empty: none is written), type and text. */
async function part(form: FormData, name: string): Promise<{ name?: string; type?: string; text: string }> {
  const value = form.get(name);
  if (typeof value === 'string') return { text: value };
  return { name: value!.name, type: value!.type, text: await value!.text() };
}

describe('multipart parts', () => {
  // Each row: the property, the value given, the part sent. The builder named every typed part
  // `blob` (multer refuses such a request, Starlette takes it for an upload) and sent an object
  // without an encoding as an untyped text part (OpenAPI's default contentType for an object is
  // application/json).
  test.each([
    ['an object property under its encoding\'s JSON type: no file name', 'typed', { a: 'x' }, { name: '', type: 'application/json', text: '{"a":"x"}' }],
    ['an object property without an encoding: typed application/json, no file name', 'meta', { a: 'é' }, { name: '', type: 'application/json', text: '{"a":"é"}' }],
    ['a string under its encoding\'s type: that type, no file name', 'csv', 'a,b\n1,2', { name: '', type: 'text/csv', text: 'a,b\n1,2' }],
    ['a property that may be a string or an object: untyped text, a string as given', 'either', '{"a"', { text: '{"a"' }],
    ['a property that may be a string or an object: an object typed application/json', 'either', { a: 1 }, { name: '', type: 'application/json', text: '{"a":1}' }],
    ['a string property: untyped text', 's', 'x', { text: 'x' }],
    // The builder sent the string as it is, no JSON document, and the object as `[object Object]`.
    ['a string under a JSON type: a JSON string', 'quoted', 'a"b', { name: '', type: 'application/json', text: '"a\\"b"' }],
    ['an object under text/plain: its JSON text', 'plain', { a: 1 }, { name: '', type: 'text/plain', text: '{"a":1}' }],
    ['a binary property: a file named after the property', 'file', Buffer.from('bytes').toString('base64'), { name: 'file', type: 'application/octet-stream', text: 'bytes' }],
  ])('%s', async (_label, property, value, want) => {
    const req = build('upload', { [property]: value });
    expect(await part(req.body as FormData, property)).toEqual(want);
  });

  test('an array of objects is a part per item, each typed application/json; an array of numbers untyped parts', async () => {
    const form = build('upload', { rows2: [{ a: 1 }, { b: [2] }], ids: [1, 2] }).body as FormData;
    const rows = await Promise.all(form.getAll('rows2').map(async (item) => ({ name: (item as File).name, type: (item as File).type, text: await (item as File).text() })));
    expect(rows).toEqual([{ name: '', type: 'application/json', text: '{"a":1}' }, { name: '', type: 'application/json', text: '{"b":[2]}' }]);
    expect(form.getAll('ids')).toEqual(['1', '2']);
  });

  test('an array under its encoding\'s type is a part per item, each of that type (the first of a list)', async () => {
    // The builder sent one part of the whole array: `a,b` as text/plain, the objects as one list.
    const form = build('upload', { labels: ['a', 'b,c'], rows: [{ a: 1 }, 'x'] }).body as FormData;
    const all = (name: string) => Promise.all(form.getAll(name).map(async (item) => ({ name: (item as File).name, type: (item as File).type, text: await (item as File).text() })));
    expect(await all('labels')).toEqual([{ name: '', type: 'text/plain', text: 'a' }, { name: '', type: 'text/plain', text: 'b,c' }]);
    const json = 'application/json; charset=utf-8';
    expect(await all('rows')).toEqual([{ name: '', type: json, text: '{"a":1}' }, { name: '', type: json, text: '"x"' }]);
    // An empty array is no part, as for an array without a type.
    expect((build('upload', { labels: [], s: 'z' }).body as FormData).has('labels')).toBe(false);
  });

  test('typed parts and files go together, each as its own kind', async () => {
    const form = build('upload', { file: Buffer.from('f').toString('base64'), typed: { a: 'y' }, s: 'z' }).body as FormData;
    expect(await Promise.all(['file', 'typed', 's'].map((name) => part(form, name)))).toEqual([
      { name: 'file', type: 'application/octet-stream', text: 'f' },
      { name: '', type: 'application/json', text: '{"a":"y"}' },
      { text: 'z' },
    ]);
  });
});
