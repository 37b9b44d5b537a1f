import path from 'node:path';
import { ApiToolService } from '../../../workers/openapi/service';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';

const FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'openapi', 'label-paths.yaml');

describe('a path parameter of style label', () => {
  let upstream: Upstream;
  let s: ApiToolService;
  beforeAll(async () => {
    upstream = await startUpstream();
    s = await ApiToolService.create({ apiBaseUrl: `${upstream.url}/v1`, openApiSpec: FIXTURE, specInputMethod: 'file', specCache: false });
  });
  afterAll(async () => {
    await s.close();
    await upstream.close();
  });
  const sent = async (tool: string, args: Record<string, unknown>): Promise<string> => {
    const result = await s.handle(tool, args);
    expect(result.isError).toBeUndefined();
    return upstream.requests[upstream.requests.length - 1].url;
  };

  test('not exploded (the default), joins an array\'s items and an object\'s keys and values with commas after the dot', async () => {
    // Were `.blue.black` and `.R.100.G.200`, the exploded forms, which read as other values.
    expect(await sent('get-colors', { list: ['blue', 'black'], map: { R: 100, G: 200 } })).toBe('/v1/colors/.blue,black/.R,100,G,200');
    expect(await sent('get-colors', { list: ['a b', 'c,d'], map: { 'x.y': 1 } })).toBe('/v1/colors/.a%20b,c%2Cd/.x.y,1');
  });

  test('exploded, separates items with dots and writes an object\'s pairs as key=value', async () => {
    expect(await sent('get-exploded', { list: ['blue', 'black'], map: { R: 100, G: 200 } })).toBe('/v1/exploded/.blue.black/.R=100.G=200');
  });
});
