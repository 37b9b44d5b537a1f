import path from 'node:path';
import { loadSpec } from '../../../workers/openapi/load-spec';
import { declaredResponseHeaders } from '../../../workers/openapi/response-headers';
import { ToolsManager } from '../../../workers/openapi/tools-manager';

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'openapi');

describe('declaredResponseHeaders', () => {
  test('names the headers of responses a path item file references, reading each $ref in the file it is written in', async () => {
    const spec = await loadSpec({ openApiSpec: path.join(FIXTURES, 'split', 'openapi.yaml') });
    const manager = new ToolsManager({}, spec);
    manager.generateTools();
    const declared = (toolId: string) => declaredResponseHeaders(manager.getToolById(toolId)!.entry!, spec);
    // paths/pet.yaml's '../responses/pet.yaml#/PetFound', whose ETag is in responses/headers.yaml.
    expect(declared('GET::pets__---petId')).toEqual(['etag']);
    expect(declared('PUT::pets__---petId')).toEqual(['etag']);
    // The root's './responses/owner.yaml#/OwnerSaved'.
    expect(declared('PUT::owners__---ownerId')).toEqual(['location']);
    expect(declared('POST::pets__---petId__tags')).toBeUndefined();
  });
});
