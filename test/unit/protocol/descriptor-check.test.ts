import { ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import { descriptorProblem } from '../../../protocol/descriptor-check';

const base = { name: 't', description: 'a tool', inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } };

describe('descriptorProblem', () => {
  // Each verdict must be the SDK client's: its Tool schema is what refuses a whole tools/list.
  const cases: Array<[string, unknown, string | undefined]> = [
    ['a plain descriptor', base, undefined],
    ['no description, title, annotations, outputSchema, execution, icons and _meta of the right kinds', { name: 't', title: 'T', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: {} }, annotations: { title: 'T', readOnlyHint: true, customHint: 'x' }, execution: { taskSupport: 'optional' }, icons: [{ src: 'data:,' }], _meta: { a: 1 } }, undefined],
    ['an input schema without type', { ...base, inputSchema: { properties: {} } }, `'inputSchema.type' must be "object" (it is missing)`],
    ['an input schema of another type', { ...base, inputSchema: { type: 'string' } }, `'inputSchema.type' must be "object" (it is "string")`],
    ['no input schema', { name: 't' }, "'inputSchema' must be a JSON Schema object"],
    ['a boolean property schema', { ...base, inputSchema: { type: 'object', properties: { a: true } } }, "'inputSchema.properties.a' must be a schema object (write {} for any value)"],
    ['required not strings', { ...base, inputSchema: { type: 'object', required: [1] } }, "'inputSchema.required' must be an array of strings"],
    ['an output schema without type', { ...base, outputSchema: { properties: {} } }, `'outputSchema.type' must be "object" (it is missing)`],
    ['a numeric description', { ...base, description: 3 }, "'description' must be a string"],
    ['a string hint', { ...base, annotations: { readOnlyHint: 'yes' } }, "'annotations.readOnlyHint' must be a boolean"],
    ['an unknown task support', { ...base, execution: { taskSupport: 'always' } }, "'execution.taskSupport' must be 'forbidden', 'optional' or 'required'"],
    ['icons without src', { ...base, icons: [{}] }, "'icons' must be an array of objects with a string 'src'"],
    ['_meta not an object', { ...base, _meta: [] }, "'_meta' must be an object"],
  ];

  it.each(cases)('judges %s as the SDK client does', (_label, tool, problem) => {
    expect(descriptorProblem(tool)).toBe(problem);
    expect(ToolSchema.safeParse(tool).success).toBe(problem === undefined);
  });

  it('refuses an empty name too, which the SDK takes but MCP 2025-11-25 does not (names are 1 to 128 characters)', () => {
    expect(descriptorProblem({ ...base, name: '' })).toBe("'name' must be a non-empty string");
  });
});
