import { ArgumentValidator } from '../../../workers/openapi/validate-args';
import type { JsonObjectSchema } from '../../../protocol/tool';

const validator = new ArgumentValidator();
let schemas = 0;
/** The validator's message for `args` against `schema`, or undefined when they pass. */
function check(schema: JsonObjectSchema, args: Record<string, unknown>): string | undefined {
  try {
    validator.check(`t${schemas++}`, schema, args);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('ArgumentValidator messages', () => {
  test('an integer past 2^53 is refused at any depth; where the schema takes a string too, it says so', () => {
    const schema: JsonObjectSchema = {
      type: 'object',
      properties: {
        id: { type: ['integer', 'string'] },
        items: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' }, x: { type: 'number' } } } },
      },
    };
    expect(check(schema, { id: 2 ** 53 })).toBe("invalid arguments: 'id' is past 2^53 (it arrived as 9007199254740992): JSON numbers this large lose digits before they get here, so it cannot be sent exactly; give it as a string, which the schema takes");
    expect(check(schema, { id: '9007199254740993' })).toBeUndefined();
    expect(check(schema, { items: [{ n: 1 }, { n: 1e20 }] })).toMatch(/^invalid arguments: 'items.1.n' is past 2\^53 .*give it as a string if the API takes one$/);
    // A number that is not an integer by schema may be large: 1e20 is exact as a double.
    expect(check(schema, { items: [{ x: 1e20 }] })).toBeUndefined();
  });

  test('a type error names what came, briefly, and what to send when it converts exactly', () => {
    const schema: JsonObjectSchema = {
      type: 'object',
      properties: {
        n: { type: 'number' },
        name: { type: 'string' },
        tags: { type: ['array', 'null'] },
        body: { type: 'object', properties: { x: { type: 'integer' } } },
      },
      required: ['name'],
    };
    expect(check(schema, { name: 'a', n: '2.50' })).toBe("invalid arguments: 'n' must be number, got the string \"2.50\": send the number 2.50");
    expect(check(schema, { name: 'a', n: '2,5' })).toBe("invalid arguments: 'n' must be number, got the string \"2,5\"");
    expect(check(schema, { name: 42 })).toBe("invalid arguments: 'name' must be string, got the number 42: send the string \"42\"");
    expect(check(schema, { name: 'a', tags: 'x'.repeat(100) })).toBe(`invalid arguments: 'tags' must be array or null, got the string "${'x'.repeat(40)}…"`);
    expect(check(schema, { name: 'a', body: { x: null } })).toBe("invalid arguments: 'body.x' must be integer, got null: leave it out rather than send null, if it is optional");
    expect(check(schema, { name: 'a', body: [] })).toBe("invalid arguments: 'body' must be object, got an array");
  });
});
