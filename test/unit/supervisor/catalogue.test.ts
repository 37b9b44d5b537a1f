import { errorCodeOf } from '../../../protocol/results';
import type { Pool, PoolStats } from '../../../protocol/pool';
import { AnnouncedTool } from '../../../protocol/tool-text';
import type { JsonObjectSchema, ToolCall, ToolResult } from '../../../protocol/tool';
import Ajv from 'ajv/dist/2020';
import { Catalogue, describeErrors } from '../../../supervisor/catalogue';

/** A pool that answers every call with the arguments it got: what reached the pool. */
function echoPool(schemas: Record<string, JsonObjectSchema>): Pool {
  return {
    name: 'echo',
    tools: Object.entries(schemas).map(([name, inputSchema]) => AnnouncedTool.of({ name, description: name, inputSchema })),
    start: async () => undefined,
    stop: async () => undefined,
    stats: () => ({}) as PoolStats,
    call: async (call: ToolCall): Promise<ToolResult> => ({ content: [{ type: 'text', text: JSON.stringify(call.arguments) }] }),
  };
}

describe('Catalogue argument validation', () => {
  const catalogue = new Catalogue();
  catalogue.register(
    echoPool({
      // JSON Schema 2020-12, as the api worker writes it.
      tuple2020: { type: 'object', properties: { p: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false } }, required: ['p'] },
      // A draft-07 tuple, as zod-to-json-schema writes one for a custom toolset.
      tuple07: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { p: { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false } }, required: ['p'] },
      // Valid in JavaScript without the u flag only.
      month: { type: 'object', properties: { m: { type: 'string', pattern: '^\\d{4}\\-\\d{2}$' } } },
      // Not compilable (a $ref to nowhere): its required arguments are still checked.
      broken: { type: 'object', properties: { a: { $ref: '#/nowhere' } }, required: ['a'] },
      // GitHub's ruleset rules: one alternative per rule type.
      rules: {
        type: 'object',
        properties: {
          rules: {
            type: 'array',
            items: {
              oneOf: [
                ...['creation', 'update', 'deletion'].map((type): Record<string, unknown> => ({ type: 'object', properties: { type: { enum: [type] } }, required: ['type'] })),
                { type: 'object', properties: { type: { enum: ['pull_request'] }, parameters: { type: 'object', properties: { count: { type: 'integer' } } } }, required: ['type'] },
              ],
            },
          },
        },
      },
    }),
    { callTimeoutMs: 1000 },
  );
  const signal = new AbortController().signal;
  const code = async (name: string, args: Record<string, unknown>) => errorCodeOf(await catalogue.call(name, args, { signal }));

  test('names the fault of the oneOf alternative the value meant, not the others\' type mismatches', async () => {
    const result = await catalogue.call('rules', { rules: [{ type: 'creation' }, { type: 'pull_request', parameters: { count: 'one' } }] }, { signal });
    expect((result.content[0] as { text: string }).text).toBe("BAD_INPUT (tool rules): invalid arguments: argument 'rules.1.parameters.count' must be integer");
  });

  test('keeps every error outside a oneOf beside the narrowed ones', () => {
    const schema = {
      type: 'object',
      required: ['owner', 'repo'],
      properties: { owner: { type: 'string' }, repo: { type: 'string' }, body: { type: 'object', properties: { labels: { type: 'array', items: { type: 'string' } } } }, pick: { oneOf: [{ type: 'string' }, { type: 'object', properties: { n: { type: 'integer' } } }] } },
    };
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    validate({ body: { labels: [1] }, pick: { n: 'x' } });
    const message = describeErrors(validate.errors ?? []);
    expect(message).toContain("missing required argument 'owner'");
    expect(message).toContain("missing required argument 'repo'");
    expect(message).toContain("argument 'body.labels.0' must be string");
    expect(message).toContain("argument 'pick.n' must be integer");
    expect(message).not.toContain("argument 'pick' must be string");
  });

  test('enforces 2020-12 and, for schemas it refuses, draft-07', async () => {
    expect(await code('tuple2020', { p: ['a', 1] })).toBeUndefined();
    expect(await code('tuple2020', { p: ['a', 1, 2] })).toBe('BAD_INPUT');
    expect(await code('tuple07', { p: ['a', 1] })).toBeUndefined();
    expect(await code('tuple07', { p: ['a', 'b'] })).toBe('BAD_INPUT');
  });

  test('keeps patterns JavaScript compiles without the u flag', async () => {
    expect(await code('month', { m: '2024-05' })).toBeUndefined();
    expect(await code('month', { m: '2024_05' })).toBe('BAD_INPUT');
  });

  test('checks the required arguments of a schema ajv cannot compile', async () => {
    expect(await code('broken', {})).toBe('BAD_INPUT');
    expect(await code('broken', { a: 1 })).toBeUndefined();
  });
});
