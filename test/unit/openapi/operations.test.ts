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

/** The operations of a description, by tool ID, and the skips and problems reported. */
async function operationsOf(source: string) {
  const spec = await loadSpec({ openApiSpec: source });
  const skipped: string[] = [];
  const problems: string[] = [];
  const entries = collectOperations(spec, (where, reason) => skipped.push(`${where}: ${reason}`), (where, problem) => problems.push(`${where}: ${problem}`));
  return { byId: new Map(entries.map((entry): [string, OperationEntry] => [entry.toolId, entry])), skipped, problems };
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

describe('collectOperations on a path item $ref with fields beside it', () => {
  const sources = () => [
    { source: path.join(FIXTURES, 'split', 'siblings.yaml'), base: pathToFileURL(path.join(FIXTURES, 'split')).href },
    { source: `${served.url}/split/siblings.yaml`, base: `${served.url}/split` },
  ];

  test('keeps the operations beside the $ref and those of the item it names, each in the document it is written in', async () => {
    for (const { source, base } of sources()) {
      const { byId, skipped } = await operationsOf(source);
      expect(skipped).toEqual([]);
      expect([...byId.keys()]).toEqual(['GET::pets', 'POST::pets', 'DELETE::pets', 'GET::owners__---ownerId__pets', 'PUT::owners__---ownerId__pets', 'POST::owners__---ownerId__pets']);
      expect([byId.get('GET::pets')?.operation.operationId, byId.get('GET::pets')?.uri]).toEqual(['getPets', `${base}/paths/pets.yaml`]);
      // The post written beside the $ref: its './requests/pet.yaml' is beside the root.
      expect([byId.get('POST::pets')?.operation.operationId, byId.get('POST::pets')?.uri]).toEqual(['addPet', `${base}/siblings.yaml`]);
    }
  });

  test('merges the path-level parameters of both, the ones beside the $ref winning by in and name, then the operation\'s', async () => {
    for (const { source, base } of sources()) {
      const { byId } = await operationsOf(source);
      expect(whereWritten(byId.get('GET::pets'))).toEqual([`limit → ${base}/siblings.yaml`, `sort → ${base}/paths/pets.yaml`, `X-Shop → ${base}/siblings.yaml`, `fields → ${base}/paths/pets.yaml`]);
      expect(byId.get('GET::pets')?.parameters[0].param).toMatchObject({ description: 'at most this many', schema: { $ref: './schemas/common.yaml#/PositiveInteger' } });
      expect(whereWritten(byId.get('POST::pets'))).toEqual([`limit → ${base}/siblings.yaml`, `sort → ${base}/paths/pets.yaml`, `X-Shop → ${base}/siblings.yaml`]);
    }
  });

  test('reads a chain of such items layer by layer, the nearest layer winning', async () => {
    for (const { source, base } of sources()) {
      const { byId } = await operationsOf(source);
      const get = byId.get('GET::owners__---ownerId__pets');
      expect([get?.operation.operationId, get?.uri]).toEqual(['getOwnerPets', `${base}/paths/owner-pets.yaml`]);
      expect(whereWritten(get)).toEqual([`limit → ${base}/paths/owner-pets.yaml`, `ownerId → ${base}/parameters/owner-id.yaml`, `fields → ${base}/paths/owner-pets.yaml`]);
      expect(byId.get('PUT::owners__---ownerId__pets')?.uri).toBe(`${base}/paths/owner-pets.yaml`);
      const post = byId.get('POST::owners__---ownerId__pets');
      expect([post?.operation.operationId, post?.uri]).toEqual(['addOwnerPet', `${base}/siblings.yaml`]);
      expect(whereWritten(post)).toEqual([`limit → ${base}/paths/owner-pets.yaml`, `ownerId → ${base}/parameters/owner-id.yaml`]);
    }
  });

  test('reports each field given in both layers, naming the path, the method and the $ref, not silently', async () => {
    const { problems } = await operationsOf(path.join(FIXTURES, 'split', 'siblings.yaml'));
    expect(problems).toEqual([
      "/pets: 'summary' is given both beside a $ref and in the path item './paths/pets.yaml' names (OpenAPI leaves which undefined); the one beside the $ref is kept",
      "DELETE /pets: defined both beside a $ref and in the path item './paths/pets.yaml' names (OpenAPI leaves which undefined); the one beside the $ref is used",
      "GET /owners/{ownerId}/pets: defined both beside a $ref and in the path item '#/Shared' names (OpenAPI leaves which undefined); the one beside the $ref is used",
    ]);
  });

  test('bounds a chain that loops, and reports the path and each operation on it as skipped', async () => {
    const spec = await loadSpec({
      specInputMethod: 'inline',
      openApiSpec: JSON.stringify({
        openapi: '3.0.3',
        info: { title: 't', version: '1' },
        paths: {
          '/a': { $ref: '#/components/x-items/A', post: { responses: { 200: { description: 'ok' } } } },
        },
        components: { 'x-items': { A: { $ref: '#/components/x-items/B', get: { responses: { 200: { description: 'ok' } } } }, B: { $ref: '#/components/x-items/A' } } },
      }),
    });
    const skipped: string[] = [];
    const problems: string[] = [];
    const entries = collectOperations(spec, (where, reason) => skipped.push(`${where}: ${reason}`), (where, problem) => problems.push(`${where}: ${problem}`));
    expect(entries).toEqual([]);
    const loops = 'a $ref chain loops (or is longer than 32 hops)';
    expect(skipped).toEqual([`/a: ${loops}`, `GET /a: ${loops}`, `POST /a: ${loops}`]);
    expect(problems).toEqual([]);
  });
});
