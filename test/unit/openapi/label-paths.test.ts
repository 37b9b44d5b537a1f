import { fixtureService } from '../../helpers/openapi-request';

describe('a path parameter of style label', () => {
  const { sent } = fixtureService('label-paths.yaml');

  test('not exploded (the default), joins an array\'s items and an object\'s keys and values with commas after the dot', async () => {
    // Were `.blue.black` and `.R.100.G.200`, the exploded forms, which read as other values.
    expect(await sent('get-colors', { list: ['blue', 'black'], map: { R: 100, G: 200 } })).toBe('/v1/colors/.blue,black/.R,100,G,200');
    expect(await sent('get-colors', { list: ['a b', 'c,d'], map: { 'x.y': 1 } })).toBe('/v1/colors/.a%20b,c%2Cd/.x.y,1');
  });

  test('exploded, separates items with dots and writes an object\'s pairs as key=value', async () => {
    expect(await sent('get-exploded', { list: ['blue', 'black'], map: { R: 100, G: 200 } })).toBe('/v1/exploded/.blue.black/.R=100.G=200');
  });
});
