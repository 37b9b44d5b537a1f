import path from 'node:path';
import { listEndpoints, MAX_PAGE_CHARS } from '../../../workers/openapi/meta-tools';
import { ApiToolService } from '../../../workers/openapi/service';
import type { EndpointTool } from '../../../workers/openapi/tools-manager';

const FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'openapi', 'dynamic-mode.yaml');
// No request goes upstream in these tests.
const start = () => ApiToolService.create({ apiBaseUrl: 'http://127.0.0.1:9', openApiSpec: FIXTURE, specCache: false, toolsMode: 'dynamic' });

/** A tool as list-api-endpoints reads it; the rest is never looked at. */
function tool(i: number, segment: string, prefix = '/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Web'): EndpointTool {
  const path = `${prefix}/${segment}/{name}/item${i}`;
  return { method: 'GET', path, summary: `Gets item ${i}.`, name: `get-item-${i}`, description: '', toolId: `GET::${path.slice(1)}`, tags: ['Items'], inputSchema: { type: 'object' }, targets: new Map() } as EndpointTool;
}

type Page = { total: number; offset: number; nextOffset?: number; endpoints: Array<{ toolId: string }> };

describe('list-api-endpoints pages', () => {
  test('a page stops where its text would pass MAX_PAGE_CHARS, and nextOffset continues right after it: every endpoint once', () => {
    // Azure's long paths, written twice in each entry: 200 of them were 107 KB.
    const tools = Array.from({ length: 450 }, (_, i) => tool(i, 'hostingEnvironments'.repeat(12)));
    const first = listEndpoints(tools, { limit: 200 }) as Page;
    expect(JSON.stringify(first).length).toBeLessThanOrEqual(MAX_PAGE_CHARS + 200);
    expect(first.endpoints.length).toBeLessThan(200);
    expect(first.endpoints.length).toBeGreaterThan(50);
    expect(first.nextOffset).toBe(first.endpoints.length);
    const seen: string[] = [];
    let offset: number | undefined = 0;
    for (let pages = 0; offset !== undefined && pages < 20; pages++) {
      const page = listEndpoints(tools, { limit: 200, offset }) as Page;
      expect(page.offset).toBe(offset);
      seen.push(...page.endpoints.map((e) => e.toolId));
      offset = page.nextOffset;
    }
    expect(seen).toEqual(tools.map((t) => t.toolId));
  });

  test('short entries fill the page to limit; one entry larger than a page is still listed alone', () => {
    const short = Array.from({ length: 300 }, (_, i) => tool(i, 'repos', ''));
    expect((listEndpoints(short, { limit: 200 }) as Page).endpoints).toHaveLength(200);
    const huge = [tool(0, 'x'.repeat(MAX_PAGE_CHARS)), tool(1, 'sites')];
    const page = listEndpoints(huge, {}) as Page;
    expect(page.endpoints.map((e) => e.toolId)).toEqual([huge[0].toolId]);
    expect(page.nextOffset).toBe(1);
  });
});

describe('get-api-endpoint-schema in dynamic mode', () => {
  test('shows every constraint of the input schema invoke-api-endpoint checks, however long its value: enum, const, dependentRequired', async () => {
    const s = await start();
    for (const toolId of ['POST::payouts', 'GET::resources']) {
      const answer = (await s.handle('get-api-endpoint-schema', { toolId })).structuredContent as { inputSchema: unknown };
      expect(answer.inputSchema).toEqual(s.manager.getToolById(toolId)!.inputSchema);
    }
    // What the answer shows is what the call refuses: one body property given needs the required ones.
    await expect(s.handle('invoke-api-endpoint', { toolId: 'POST::payouts', parameters: { fraudOffsetValue: '1' } })).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining('merchantAccountCode') });
    await s.close();
  });

  test('shows an enum past 50 values cut in the summary, saying how to see it, and whole when asked for with at', async () => {
    const s = await start();
    const summary = (await s.handle('get-api-endpoint-schema', { toolId: 'GET::regions__---region__status' })).structuredContent as { inputSchema: { properties: Record<string, { enum: string[] }> }; note: string };
    expect(summary.inputSchema.properties.region.enum).toHaveLength(50);
    expect(summary.inputSchema.properties.region).toMatchObject({ 'x-enum-left-out': '30 more values' });
    expect(summary.note).toContain("ask again with at: 'region' for all of them");
    const part = (await s.handle('get-api-endpoint-schema', { toolId: 'GET::regions__---region__status', at: 'region' })).structuredContent as { schema: { enum: string[] }; note?: string };
    expect(part.schema.enum).toEqual(Array.from({ length: 80 }, (_, i) => `region-${String(i).padStart(2, '0')}`));
    expect(part.schema).not.toHaveProperty('x-enum-left-out');
    expect(part).not.toHaveProperty('note');
    await s.close();
  });

  test('list-api-endpoints answers compact JSON, the same as its structuredContent', async () => {
    const s = await start();
    const result = await s.handle('list-api-endpoints', {});
    const text = (result.content[0] as { text: string }).text;
    expect(text).not.toMatch(/\n/);
    expect(JSON.parse(text)).toEqual(result.structuredContent);
    await s.close();
  });
});

describe("get-api-endpoint-schema's way into a schema", () => {
  test("a response shown as a stub at its top names a property to ask for with at, and asking for it answers", async () => {
    const s = await start();
    const stub = (await s.handle('get-api-endpoint-schema', { toolId: 'GET::reports__---id', response: '200' })).structuredContent as { schema: Record<string, unknown>; note: string };
    expect(stub.schema).toEqual({ allOf: [{ 'x-left-out': '1 properties' }, { 'x-left-out': '31 properties' }] });
    expect(stub.note).toContain("ask again with response: '200' and at: 'items' to see a part (its properties: items, f01, f02,");
    const part = await s.handle('get-api-endpoint-schema', { toolId: 'GET::reports__---id', response: '200', at: 'items' });
    expect(part.isError).toBeUndefined();
    expect(part.structuredContent).toMatchObject({ at: 'items', schema: { type: 'array' } });
    await s.close();
  });

  test('at looks into each allOf branch that defines a name, not only the first', async () => {
    const s = await start();
    const part = (await s.handle('get-api-endpoint-schema', { toolId: 'GET::reports__---id', response: '200', at: 'items.attributes.geofence' })).structuredContent as { schema: unknown };
    expect(part.schema).toEqual({ type: 'string' });
    await s.close();
  });
});
