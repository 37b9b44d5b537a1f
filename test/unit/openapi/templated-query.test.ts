import { withoutTemplatedQuery } from '../../../workers/openapi/builder-plan';
import { BASE, oas3, OK, requestBuilder, type BuildCall } from '../../helpers/openapi-request';

/** Path keys with a query of their own whose values are templates (medium.com in APIs.guru). */
const SPEC = oas3({
  '/search/tags?query={query}': {
    get: { operationId: 'searchTags', parameters: [{ name: 'query', in: 'query', required: true, schema: { type: 'string' } }], responses: OK },
  },
  '/icons?format=png&size={size}&term={term}': {
    get: {
      operationId: 'findIcons',
      parameters: [
        { name: 'size', in: 'query', schema: { type: 'integer' } },
        { name: 'term', in: 'query', schema: { type: 'string' } },
      ],
      responses: OK,
    },
  },
  '/items/{id}?expand={other}': {
    get: { operationId: 'getItem', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: OK },
  },
});

describe('a path key whose own query holds name={name} for a query parameter', () => {
  let build: BuildCall;
  beforeAll(async () => {
    build = await requestBuilder(SPEC);
  });

  test('sends the parameter as any other query parameter', () => {
    expect(build('GET::search__tagsquery---query', { query: 'a b&c' }).url).toBe(`${BASE}/search/tags?query=a%20b%26c`);
  });

  test('keeps the literal pairs, and leaves out a parameter not given', () => {
    expect(build('GET::iconsformatpngsize---sizeterm---term', { term: 'cat', size: 32 }).url).toBe(`${BASE}/icons?format=png&size=32&term=cat`);
    expect(build('GET::iconsformatpngsize---sizeterm---term', { term: 'cat' }).url).toBe(`${BASE}/icons?format=png&term=cat`);
  });

  test('still refuses a template no parameter of the operation fills, naming it', () => {
    expect(() => build('GET::items__---idexpand---other', { id: '7' })).toThrow(/no path parameter of the operation fills/);
  });

  test.each([
    ['/a?x={x}', ['x'], '/a'],
    ['/a?k=v&x={x}', ['x'], '/a?k=v'],
    ['/a?x={y}', ['x', 'y'], '/a?x={y}'],
    ['/a?x={x}#frag', ['x'], '/a#frag'],
    ['/a/{x}', ['x'], '/a/{x}'],
  ])('%s with query parameters %j is %s', (route, names, want) => {
    expect(withoutTemplatedQuery(route, new Set(names))).toBe(want);
  });
});
