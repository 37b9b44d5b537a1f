import { requestBuilder, oas3, OK, BASE } from '../../helpers/openapi-request';
import { swaggerBuildRequest } from '../../../workers/openapi/lazy';

const X = [{ name: 'x', in: 'path', required: true, schema: { type: 'string' } }];
const get = (operationId: string, parameters: unknown[] = X) => ({ get: { operationId, parameters, responses: OK } });

describe('path templates', () => {
  test('are filled whatever characters their literal parts hold, which are percent-encoded where a path may not hold them', async () => {
    const build = await requestBuilder(oas3({
      '/a b/{x}': get('space'),
      '/ünï/{x}': get('unicode'),
      '/p|q/{x}': get('pipe'),
      '/r[0]/{x}': get('brackets'),
      '/double//{x}': get('double'),
      '/pct%2F%zz/{x}': get('percent'),
      '/search?type=user&q={x}': get('search', [...X, { name: 'page', in: 'query', schema: { type: 'integer' } }]),
      '/v1/{x}:cancel': get('colon'),
    }));
    const url = (tool: string, args: Record<string, unknown> = { x: 'V l' }) => build(tool, args).url.slice(BASE.length);
    expect(url('space')).toBe('/a%20b/V%20l');
    expect(url('unicode')).toBe('/%C3%BCn%C3%AF/V%20l');
    expect(url('pipe')).toBe('/p%7Cq/V%20l');
    expect(url('brackets')).toBe('/r%5B0%5D/V%20l');
    expect(url('double')).toBe('/double//V%20l');
    expect(url('percent')).toBe('/pct%2F%25zz/V%20l');
    expect(url('search')).toBe('/search?type=user&q=V%20l');
    expect(url('search', { x: 'v', page: 2 })).toBe('/search?type=user&q=v&page=2');
    expect(url('colon')).toBe('/v1/V%20l:cancel');
  });

  test('keep the slashes of an x-multi-segment value (GitHub file paths, refs), each piece encoded and checked as a segment', async () => {
    const multi = [{ name: 'path', in: 'path', required: true, 'x-multi-segment': true, schema: { type: 'string' } }];
    const build = await requestBuilder(oas3({
      '/repos/o/r/contents/{path}': get('contents', multi),
      '/plain/{x}': get('plain'),
    }));
    const url = (tool: string, args: Record<string, unknown>) => build(tool, args).url.slice(BASE.length);
    expect(url('contents', { path: 'docs/intro.md' })).toBe('/repos/o/r/contents/docs/intro.md');
    expect(url('contents', { path: 'a b/c?d#e/ü' })).toBe('/repos/o/r/contents/a%20b/c%3Fd%23e/%C3%BC');
    expect(url('contents', { path: 'README.md' })).toBe('/repos/o/r/contents/README.md');
    for (const path of ['a/../b', '../x', 'a/./b', '/README.md', 'a//b', 'a/']) {
      expect(() => build('contents', { path })).toThrow(/path argument 'path' may not be empty, '\.' or '\.\.'/);
    }
    // A value's own % is encoded: `%2e%2e` is a file of that name, not a dot segment.
    expect(url('contents', { path: 'a/%2e%2e/b' })).toBe('/repos/o/r/contents/a/%252e%252e/b');
    // Without the mark a slash stays inside the one segment.
    expect(url('plain', { x: 'a/b' })).toBe('/plain/a%2Fb');
  });

  test('that cannot be filled are refused naming the template, never sent with a literal {x}', async () => {
    const build = await requestBuilder(oas3({
      '/a/{x}/{y}': get('undeclared'),
      '/a#frag/{x}': get('fragment'),
    }));
    expect(() => build('undeclared', { x: 'v' })).toThrow("cannot build the request: the path template '/a/{x}/{y}' has {y}, which no path parameter of the operation fills");
    expect(() => build('fragment', { x: 'v' })).toThrow("the path template '/a#frag/{x}' has a '#'");
  });

  test('fill OpenAPI 3 styles as swagger-client does, encoding an object\'s keys too and joining an unexploded label with commas', async () => {
    const styles = [['simple', false], ['simple', true], ['label', false], ['label', true], ['matrix', false], ['matrix', true]] as const;
    const values = ['a b', 7, ['x', 'y/z'], { R: 100, G: 'é' }];
    for (const [style, explode] of styles) {
      for (const value of values) {
        const parameters = [{ name: 'id', in: 'path', required: true, style, explode, schema: {} }];
        const spec = oas3({ '/items/{id}': { get: { operationId: 'op', parameters, responses: OK } } });
        const ours = (await requestBuilder(spec))('op', { id: value }).url;
        const theirs = (swaggerBuildRequest()({ spec, operationId: 'op', parameters: { id: value }, baseURL: BASE }) as { url: string }).url;
        // An unexploded label array or object: the builder joined with dots, the exploded form
        // (label-paths.test.ts); OpenAPI joins with commas.
        const want = style === 'label' && !explode && typeof value === 'object' ? `${BASE}/items/${Array.isArray(value) ? '.x,y%2Fz' : '.R,100,G,%C3%A9'}` : theirs;
        expect([style, explode, value, ours]).toEqual([style, explode, value, want]);
      }
    }
    const keys = oas3({ '/items/{id}': get('keys', [{ name: 'id', in: 'path', required: true, schema: { type: 'object' } }]) });
    expect((await requestBuilder(keys))('keys', { id: { 'a/b?': 'c' } }).url).toBe(`${BASE}/items/a%2Fb%3F,c`);
  });

  test('fill Swagger 2.0 arrays by their collectionFormat, and encode a value that looks encoded', async () => {
    const parameter = (collectionFormat?: string) => ({ name: 'p', in: 'path', required: true, type: 'array', items: { type: 'string' }, ...(collectionFormat ? { collectionFormat } : {}) });
    const paths: Record<string, unknown> = Object.fromEntries(['csv', 'ssv', 'tsv', 'pipes', undefined].map((format) => [`/${format ?? 'default'}/{p}`, { get: { operationId: format ?? 'default', parameters: [parameter(format)], responses: OK } }]));
    paths['/one/{id}'] = { get: { operationId: 'one', parameters: [{ name: 'id', in: 'path', required: true, type: 'string' }], responses: OK } };
    const build = await requestBuilder({ swagger: '2.0', info: { title: 't', version: '1' }, paths });
    const url = (tool: string, p: unknown) => build(tool, tool === 'one' ? { id: p } : { p }).url.slice(BASE.length);
    expect(url('csv', ['x', 'y z'])).toBe('/csv/x,y%20z');
    expect(url('ssv', ['x', 'y'])).toBe('/ssv/x%20y');
    expect(url('tsv', ['x', 'y'])).toBe('/tsv/x%09y');
    expect(url('pipes', ['x', 'y'])).toBe('/pipes/x%7Cy');
    expect(url('default', ['x', 'y'])).toBe('/default/x,y');
    // The builder sent a value that decodes as it was (`a%20b?x=1`), so `?` started a query.
    expect(url('one', 'a%20b?x=1')).toBe('/one/a%2520b%3Fx%3D1');
  });
});

describe('a path segment that holds a value', () => {
  test('may not come out empty, . or .. whatever the value\'s type, style or encoding (another endpoint)', async () => {
    const list = (style?: string) => [{ name: 'id', in: 'path', required: true, ...(style ? { style } : {}), schema: { type: 'array', items: { type: 'string' } } }];
    const build = await requestBuilder(oas3({
      '/f3/items/{id}': get('plain', list()),
      '/f3/labels/{id}': get('label', list('label')),
      '/f3/matrix/{id}': get('matrix', list('matrix')),
      '/f3/objects/{id}': get('object', [{ name: 'id', in: 'path', required: true, schema: { type: 'object' } }]),
      '/f3/dots/%2e{id}': get('dotted', list()),
    }));
    const refused = "path argument 'id' may not be empty, '.' or '..'";
    for (const id of [['..'], ['.'], [], ['']]) expect(() => build('plain', { id })).toThrow(`${refused}: the path segment would be '${id.join('')}'`);
    expect(() => build('object', { id: {} })).toThrow(refused);
    // An empty list is `.` for a label (the style table's form), a dot segment too.
    for (const id of [['.'], [''], []]) expect(() => build('label', { id })).toThrow(refused);
    // Unexploded, two empty items are `.,`, a segment of its own (the builder's `..` was the parent).
    expect(build('label', { id: ['', ''] }).url).toBe(`${BASE}/f3/labels/.,`);
    // Matrix's empty form, `;id`, is a segment of its own.
    expect(build('matrix', { id: [] }).url).toBe(`${BASE}/f3/matrix/;id`);
    // `%2e` is a dot to URL parsers: `/f3/dots/%2e` is `/f3/dots/.`, which is `/f3/dots/`.
    expect(() => build('dotted', { id: [] })).toThrow(`${refused}: the path segment would be '%2e'`);
    expect(() => build('dotted', { id: ['.'] })).toThrow(refused);
    expect(build('plain', { id: ['.', '..'] }).url).toBe(`${BASE}/f3/items/.,..`);
    expect(build('label', { id: ['a'] }).url).toBe(`${BASE}/f3/labels/.a`);
    expect(build('dotted', { id: ['a'] }).url).toBe(`${BASE}/f3/dots/%2ea`);
  });
});

describe('an empty array or object for a matrix or label path parameter', () => {
  test('is the style table\'s form, ;name or ., exploded or not (it was refused as an empty segment)', async () => {
    const param = (style: string, explode: boolean, type: string) => ({ name: 'id', in: 'path', required: true, style, explode, schema: type === 'array' ? { type, items: { type: 'string' } } : { type } });
    const build = await requestBuilder(oas3({
      '/m/{id}': get('matrix', [param('matrix', false, 'array')]),
      '/me/{id}': get('matrix-exploded', [param('matrix', true, 'object')]),
      '/l/v{id}': get('label', [param('label', false, 'array')]),
      '/le/v{id}': get('label-exploded', [param('label', true, 'object')]),
    }));
    expect(['matrix', 'matrix-exploded'].map((tool) => build(tool, { id: tool === 'matrix' ? [] : {} }).url)).toEqual([`${BASE}/m/;id`, `${BASE}/me/;id`]);
    expect(['label', 'label-exploded'].map((tool) => build(tool, { id: tool === 'label' ? [] : {} }).url)).toEqual([`${BASE}/l/v.`, `${BASE}/le/v.`]);
  });
});
