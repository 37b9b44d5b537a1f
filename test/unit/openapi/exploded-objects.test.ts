import { fixtureService } from '../../helpers/openapi-request';

describe('exploded object query parameters (style form, the default)', () => {
  const { sent } = fixtureService('exploded-objects.yaml', '?region=eu');

  test('send every pair of every parameter, also where their keys meet each other or another parameter', async () => {
    // Was `name=b&x=1`: the builder kept one value per query name, so filter's `name=a` and
    // sort_by's `name=asc` were lost without a word.
    const url = await sent('key-lst', { user_id: 3, sort_by: { name: 'asc' }, filter: { name: 'a', user_id: '5' }, filter_gt: { name: 'b', x: '1' }, required_map: { k: 'v w' } });
    expect(url).toBe('/v1/api_keys?region=eu&user_id=3&name=asc&name=a&user_id=5&name=b&x=1&k=v%20w');
  });

  test('keep each map\'s pairs through $ref, anyOf and type lists; arrays and unexploded objects are as before', async () => {
    const url = await sent('crt-queue', { Attribute: { DelaySeconds: '1', Policy: 'p' }, Tag: { DelaySeconds: '2' }, tags: ['a', 'b'], compact: { R: 1, G: 2 } });
    expect(url).toBe('/v1/queues?region=eu&tags=a&tags=b&compact=R,1,G,2&DelaySeconds=1&Policy=p&DelaySeconds=2');
  });

  test('leave out an empty map; a key the base URL also sets replaces the base\'s pair, as any query name does', async () => {
    expect(await sent('crt-queue', { Attribute: {}, Tag: { a: '1' } })).toBe('/v1/queues?region=eu&a=1');
    expect(await sent('key-lst', { required_map: { region: 'us' } })).toBe('/v1/api_keys?region=us');
  });
});
