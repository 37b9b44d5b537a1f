import { fitSchemas, MAX_SCHEMA_CHARS, withinBudget } from '../../../workers/openapi/schema-budget';
import type { JsonObject } from '../../../workers/openapi/refs';
import { ArgumentValidator } from '../../../workers/openapi/validate-args';
import type { JsonObjectSchema } from '../../../protocol/tool';

/**
 * A schema as DocuSign's shared components make it once written out: each level holds the one
 * below twice, under two names, with a long description; 20 levels are ~2^20 copies, though the
 * object graph has 20 nodes.
 */
function exponential(levels: number): JsonObject {
  let node: JsonObject = { type: 'string', description: 'a leaf', enum: ['a', 'b'] };
  for (let i = 0; i < levels; i++) node = { type: 'object', description: `level ${i}: ${'words '.repeat(20)}`, properties: { left: node, right: node }, required: ['left'] };
  return { type: 'object', properties: { id: { type: 'string' }, body: node }, required: ['id', 'body'] };
}

describe('schema budget', () => {
  test('leaves a schema within the budget as it is (the same object)', () => {
    const small = exponential(3);
    expect(withinBudget(small)).toBe(small);
  });

  test('cuts a schema of exponential written size at a whole level, keeping the arguments, their types and a note', () => {
    const huge = exponential(24);
    const cut = withinBudget(huge, 64 * 1024);
    const text = JSON.stringify(cut);
    expect(text.length).toBeLessThanOrEqual(64 * 1024);
    expect(Object.keys(cut.properties as JsonObject)).toEqual(['id', 'body']);
    expect(cut.required).toEqual(['id', 'body']);
    expect(cut.description).toMatch(/left out/);
    // Whole levels: every branch reaches the same depth, and below it a schema keeps its type.
    const depths = new Set<number>();
    const walk = (node: JsonObject, depth: number) => {
      const props = node.properties as Record<string, JsonObject> | undefined;
      if (!props) return depths.add(depth);
      for (const child of Object.values(props)) walk(child, depth + 1);
    };
    walk((cut.properties as Record<string, JsonObject>).body, 0);
    expect(depths.size).toBe(1);
    expect(text).toContain('{"type":"object"}');
  });

  test('shares the total among the large schemas only: the small ones stay whole', () => {
    const small = Array.from({ length: 50 }, () => exponential(2));
    const large = Array.from({ length: 10 }, () => exponential(24));
    const fitted = fitSchemas([...small, ...large], MAX_SCHEMA_CHARS, 400 * 1024);
    fitted.slice(0, 50).forEach((schema, i) => expect(schema).toBe(small[i]));
    const total = fitted.reduce((sum, schema) => sum + JSON.stringify(schema).length, 0);
    expect(total).toBeLessThanOrEqual(400 * 1024);
  });

  test('keeps the names and types of arguments too many for the cap, so the tool still takes them', () => {
    // 600 arguments whose names and stubs alone pass an 8 KiB cap (the least a shared total gives).
    const properties: JsonObject = {};
    for (let i = 0; i < 600; i++) properties[`arg${i}`] = { type: 'object', properties: { deep: { type: 'string', description: 'words '.repeat(20) } } };
    const schema: JsonObject = { type: 'object', properties, required: ['arg0'] };
    const cut = withinBudget(schema, 8 * 1024);
    expect(Object.keys(cut.properties as JsonObject)).toHaveLength(600);
    expect((cut.properties as JsonObject).arg599).toEqual({ type: 'object' });
    expect(cut.required).toEqual(['arg0']);
    // The cut kept no argument at all, and the tool refused every one ("unknown argument 'arg0';
    // expected none") while it required arg0: it could not be called.
    expect(() => new ArgumentValidator().check('t', cut as unknown as JsonObjectSchema, { arg0: { deep: 'x' }, arg599: {} })).not.toThrow();
  });

  test('sizes a list of 150,000 values (an enum) without overflowing the stack', () => {
    const values = Array.from({ length: 150_000 }, (_, i) => i);
    const schema: JsonObject = { type: 'object', properties: { e: { type: 'integer', enum: values } } };
    const [fitted] = fitSchemas([schema]);
    expect((fitted.properties as JsonObject).e).toMatchObject({ type: 'integer' });
  });

  test('shortens long descriptions in a schema it cuts, as it leaves out data too large to keep', () => {
    const schema: JsonObject = {
      type: 'object',
      description: 'top '.repeat(10_000),
      properties: {
        kind: { type: 'string', description: 'y'.repeat(100_000), enum: Array.from({ length: 5000 }, (_, i) => `kind-${i}`) },
        description: { type: 'string', title: 'a property named description' },
        nested: { type: 'object', properties: { deep: { type: 'object', description: 'z'.repeat(50_000), properties: { leaf: { type: 'string' } } } } },
      },
    };
    const cut = withinBudget(schema, 32 * 1024);
    expect(JSON.stringify(cut).length).toBeLessThanOrEqual(32 * 1024);
    const kind = (cut.properties as Record<string, JsonObject>).kind;
    expect(kind.description).toBe(`${'y'.repeat(2000)}…`);
    expect(kind.type).toBe('string');
    expect((cut.properties as Record<string, JsonObject>).description).toEqual({ type: 'string', title: 'a property named description' });
    expect(cut.description).toMatch(/^(top ){500}…/);
    expect(cut.description).toMatch(/left out/);
  });
});
