import path from 'node:path';
import { loadSpec } from '../../../workers/openapi/load-spec';
import { ApiToolService } from '../../../workers/openapi/service';
import { ToolsManager } from '../../../workers/openapi/tools-manager';

const FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'openapi', 'deprecated.yaml');

describe('deprecated operations and parameters', () => {
  test('a deprecated operation\'s description says so first, once; a deprecated parameter keeps deprecated: true', async () => {
    const spec = await loadSpec({ openApiSpec: FIXTURE });
    const tools = new Map(new ToolsManager({}, spec).generateTools().map((tool) => [tool.toolId, tool]));
    expect(tools.get('GET::cards')!.description).toBe("Deprecated. Lists the customer's cards.");
    expect(tools.get('POST::cards')!.description).toBe('**Deprecated**: use sources instead.');
    expect(tools.get('DELETE::cards')!.description).toBe('Deprecated. Make a DELETE request to /cards');
    expect(tools.get('GET::sources')!.description).toBe('Lists sources.');
    const props = tools.get('GET::cards')!.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(props.legacy_filter).toEqual({ type: 'string', deprecated: true, description: "Use filter. (query parameter 'legacy_filter')" });
    expect(props.limit).not.toHaveProperty('deprecated');
  });

  test('the listed tools (as compiled for tools/list) carry the mark', async () => {
    const service = await ApiToolService.create({ apiBaseUrl: 'http://127.0.0.1:9', openApiSpec: FIXTURE, specCache: false });
    const listed = service.tools.find((tool) => tool.description.startsWith('Deprecated. Lists'));
    expect(listed).toMatchObject({ title: 'List cards', inputSchema: { properties: { legacy_filter: { deprecated: true } } } });
    await service.close();
  });
});
