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
