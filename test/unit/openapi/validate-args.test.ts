import Ajv from 'ajv/dist/2020';
import type { JsonObjectSchema } from '../../../protocol/tool';
import { ArgumentValidator } from '../../../workers/openapi/validate-args';
import { MAX_COMPILED_ARGUMENTS } from '../../../protocol/wide-schemas';


describe('ArgumentValidator', () => {
  afterEach(() => jest.restoreAllMocks());

  test('of a schema with very many arguments compiles only those a call gives, and still checks them and the required ones', () => {
    const properties: Record<string, object> = {};
    for (let i = 0; i < 10_000; i++) properties[`p${i}`] = { type: 'string' };
    const schema: JsonObjectSchema = { type: 'object', properties, required: ['p7'] };
    const compiled: number[] = [];
    const compile = Ajv.prototype.compile;
    jest.spyOn(Ajv.prototype, 'compile').mockImplementation(function (this: Ajv, given) {
      compiled.push(Object.keys((given as JsonObjectSchema).properties ?? {}).length);
      return compile.call(this, given);
    });
    const removed = jest.spyOn(Ajv.prototype, 'removeSchema');
    const validator = new ArgumentValidator();
    expect(() => validator.check('t', schema, { p7: 'a', p9999: 'b' })).not.toThrow();
    expect(() => validator.check('t', schema, { p7: 'a', p1: 5 })).toThrow("'p1' must be string");
    expect(() => validator.check('t', schema, { p1: 'a' })).toThrow("'p7' is required");
    // All 10,000 were compiled, ~2.5 s in which the worker answered nothing (100,000: killed as unresponsive).
    expect(Math.max(...compiled)).toBeLessThanOrEqual(MAX_COMPILED_ARGUMENTS);
    // Compiled per call, so not kept by ajv either.
    expect(removed).toHaveBeenCalledTimes(3);
    const many = Object.fromEntries(Array.from({ length: MAX_COMPILED_ARGUMENTS + 1 }, (_, i) => [`p${i}`, 'x']));
    expect(() => validator.check('t', schema, { ...many, p7: 'a' })).toThrow(`more than ${MAX_COMPILED_ARGUMENTS} arguments given`);
  });

  test('names at most 50 arguments in an unknown-argument error, with the count', () => {
    const properties: Record<string, object> = {};
    for (let i = 0; i < 3_000; i++) properties[`p${i}`] = { type: 'string' };
    const validator = new ArgumentValidator();
    const unknown = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`x${i}`, 1]));
    let message = '';
    try {
      validator.check('t', { type: 'object', properties }, unknown);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^unknown arguments 'x0', .*'x49', … \(60 in all\); expected 'p0', .*'p49', … \(3000 in all\)$/);
    expect(message.length).toBeLessThan(1_000);
  });
});
