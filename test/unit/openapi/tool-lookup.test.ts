import { distance, unknownEndpointMessage } from '../../../workers/openapi/tool-lookup';
import type { EndpointTool } from '../../../workers/openapi/tools-manager';

/** A tool as the lookup reads it; the rest is never looked at. */
function tool(toolId: string, name: string): EndpointTool {
  return { toolId, name, method: toolId.slice(0, toolId.indexOf('::')), path: '/', description: '', inputSchema: { type: 'object' }, targets: new Map() } as EndpointTool;
}

describe('distance', () => {
  test.each([
    { a: 'kitten', b: 'sitting', most: 5, want: 3 },
    { a: 'kitten', b: 'sitting', most: 3, want: 3 },
    { a: 'kitten', b: 'sitting', most: 2, want: 3 },
    { a: '', b: 'abc', most: 3, want: 3 },
    { a: 'abc', b: '', most: 2, want: 3 },
    { a: 'get::pets', b: 'get::pets', most: 0, want: 0 },
    { a: 'get::petz', b: 'get::pets', most: 0, want: 1 },
    { a: 'abcdef', b: 'badcfe', most: 10, want: 4 }, { a: 'abcdef', b: 'badcfe', most: 3, want: 4 },
    { a: 'x'.repeat(50), b: 'y'.repeat(50), most: 20, want: 21 },
  ])('of $a and $b within $most is $want (most + 1 for any distance past most)', ({ a, b, most, want }) => {
    expect(distance(a, b, most)).toBe(want);
    expect(distance(b, a, most)).toBe(want);
  });
});

describe('unknownEndpointMessage', () => {
  test('suggests the closest IDs and names, closest first and the earlier first among equals', () => {
    const tools = [tool('GET::pets', 'list-pets'), tool('POST::pets', 'create-pet'), tool('GET::pots', 'list-pots'), tool('GET::users', 'list-users'), tool('GET::pet', 'get-pet')];
    expect(unknownEndpointMessage(tools, 'GET::petz', '')).toBe("no endpoint with tool ID or name 'GET::petz'; did you mean GET::pets, GET::pet, GET::pots? (list-api-endpoints lists them)");
    expect(unknownEndpointMessage(tools, 'ns-list-petz', 'ns-')).toContain('did you mean ns-list-pets, ns-list-pots');
  });

  test('suggests nothing for an ID nothing is near, however their lengths differ', () => {
    // Lengths 41 to 43 apart counted as 41 to 43 edits: within a third of this ID's 125 characters.
    const tools = [tool(`GET::${'q'.repeat(79)}`, 'get-q')];
    expect(unknownEndpointMessage(tools, `GET::${'z'.repeat(120)}`, '')).not.toContain('did you mean');
  });
});
