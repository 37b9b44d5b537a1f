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
});
