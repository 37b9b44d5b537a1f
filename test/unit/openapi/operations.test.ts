import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadSpec } from '../../../workers/openapi/load-spec';
import { collectOperations, type OperationEntry } from '../../../workers/openapi/operations';
import { serveFixtures, type FixtureServer } from '../../helpers/fixture-server';

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'openapi');

let served: FixtureServer;
beforeAll(async () => {
  served = await serveFixtures();
});
afterAll(() => served.close());

/** The operations of a description, by tool ID, and the skips reported. */
async function operationsOf(source: string) {
  const spec = await loadSpec({ openApiSpec: source });
  const skipped: string[] = [];
  const entries = collectOperations(spec, (where, reason) => skipped.push(`${where}: ${reason}`));
  return { byId: new Map(entries.map((entry): [string, OperationEntry] => [entry.toolId, entry])), skipped };
}

/** Where each parameter of an entry is written: `name → document`. */
const whereWritten = (entry: OperationEntry | undefined) => entry?.parameters.map(({ param, uri }) => `${param.name} → ${uri}`);

describe('collectOperations on a description split over several files', () => {
  // The same description from files and from URLs: relative refs resolve the same way (RFC 3986).
  const sources = () => [
    { source: path.join(FIXTURES, 'split', 'openapi.yaml'), base: pathToFileURL(path.join(FIXTURES, 'split')).href },
    { source: `${served.url}/split/openapi.yaml`, base: `${served.url}/split` },
  ];

  test('reads a path item from another file in that file\'s terms, and keeps the document each parameter is written in', async () => {
    for (const { source, base } of sources()) {
      const { byId, skipped } = await operationsOf(source);
      expect(skipped).toEqual([]);
      expect([...byId.keys()]).toEqual(['GET::pets__---petId', 'PUT::pets__---petId', 'PUT::pets__---petId__tags', 'POST::pets__---petId__tags', 'PUT::owners__---ownerId']);
      const get = byId.get('GET::pets__---petId');
      expect(get?.uri).toBe(`${base}/paths/pet.yaml`);
      // The path item's '../parameters/pet-id.yaml' is beside paths/, not beside the root.
      expect(whereWritten(get)).toEqual([`petId → ${base}/parameters/pet-id.yaml`, `fields → ${base}/paths/pet.yaml`]);
      expect(get?.parameters[0].param).toMatchObject({ name: 'petId', in: 'path', schema: { $ref: './ids.yaml#/PetId' } });
      expect(byId.get('POST::pets__---petId__tags')?.uri).toBe(`${base}/paths/tags.yaml`);
      const owner = byId.get('PUT::owners__---ownerId');
      expect(owner?.uri).toBe(`${base}/openapi.yaml`);
      expect(whereWritten(owner)).toEqual([`ownerId → ${base}/parameters/owner-id.yaml`]);
    }
  });

  test('moves a body under a media range to JSON when it is written in the operation\'s own file, however far that is from the root', async () => {
    const { byId } = await operationsOf(path.join(FIXTURES, 'split', 'openapi.yaml'));
    const body = byId.get('PUT::pets__---petId__tags')?.operation.requestBody as { content: Record<string, unknown> };
    expect(Object.keys(body.content)).toEqual(['application/json']);
    expect(body.content['application/json']).toEqual({ schema: { $ref: '#/TagForm' } });
  });

  test('keeps every operation of a split Swagger 2.0 description: a parameter file a path item file names is found beside that file', async () => {
    const { byId, skipped } = await operationsOf(path.join(FIXTURES, 'split-2.0', 'swagger.yaml'));
    const base = pathToFileURL(path.join(FIXTURES, 'split-2.0')).href;
    expect(skipped).toEqual([]);
    expect([...byId.keys()]).toEqual(['POST::pets', 'GET::pets__---petId', 'PUT::pets__---petId']);
    expect(whereWritten(byId.get('PUT::pets__---petId'))).toEqual([`petId → ${base}/parameters/pet-id.yaml`, `pet → ${base}/parameters/pet-body.yaml`]);
    expect(whereWritten(byId.get('POST::pets'))).toEqual([`pet → ${base}/parameters/pet-body.yaml`]);
  });
});
