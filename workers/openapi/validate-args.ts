import type { ErrorObject, ValidateFunction } from 'ajv';
import type { default as AjvClass } from 'ajv/dist/2020';
import { ajv } from './lazy';
import { McpvisorError } from '../../protocol/errors';
import { closestErrors, joinProblems } from '../../protocol/schema-errors';
import { lenientRegExp } from '../../protocol/lenient-regexp';
import type { JsonObjectSchema } from '../../protocol/tool';
import { givenArgumentsSchema, isWideSchema } from '../../protocol/wide-schemas';
import { addSafeIntegerKeyword, SAFE_INTEGER_KEYWORD, typeText, unsafeIntegerText, withSafeIntegers } from '../../protocol/argument-values';

/**
 * The formats whose values are checked; every other `format` is an annotation. Binary arguments
 * (`format: binary`, given as base64) are checked where they are decoded (binary.ts).
 */
export const ASSERTED_FORMATS = ['byte'] as const;

/** Argument names an error message lists at most. */
const MAX_NAMED = 50;

/**
 * Validates tool arguments against input schemas with ajv (unknown keywords of OpenAPI are
 * ignored, not errors; formats are annotations but ASSERTED_FORMATS). Validators are compiled on
 * first use and kept. Decision: arguments the schema does not name are refused, so a misspelt
 * argument is reported instead of being dropped silently.
 */
export class ArgumentValidator {
  #ajvInstance?: AjvClass;
  #compiled = new Map<string, ValidateFunction>();

  #ajv(): AjvClass {
    if (!this.#ajvInstance) {
      const { Ajv, addFormats } = ajv();
      this.#ajvInstance = new Ajv({ strict: false, allErrors: true, validateSchema: false, logger: false, coerceTypes: false, code: { regExp: lenientRegExp } });
      // Formats are annotations (JSON Schema 2020-12's default), except `byte`: base64 the API
      // decodes. GitHub documents `created: ">=2024-01-01"` on a date-time, which was refused.
      addFormats(this.#ajvInstance, [...ASSERTED_FORMATS]);
      addSafeIntegerKeyword(this.#ajvInstance);
    }
    return this.#ajvInstance;
  }

  /**
   * Creates ajv and compiles one small schema: ajv's first compile costs ~30 ms of its own
   * (formats, code generation warming up) that the first call would otherwise wait for.
   */
  warmUp(): void {
    this.#ajv().compile({ type: 'object', properties: { id: { type: 'string', format: 'date-time' } }, required: ['id'] });
  }

  /**
   * Throws BAD_INPUT naming each offending argument (at most 5 problems listed). `key` identifies
   * the schema in the cache (the tool ID). Of a schema ajv cannot compile, only `required` is
   * enforced. JSON Schema 2020-12 (lazy.ts): OpenAPI 3.1's dialect and MCP's default.
   */
  check(key: string, schema: JsonObjectSchema, args: Record<string, unknown>): void {
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      throw new McpvisorError('BAD_INPUT', 'arguments must be an object');
    }
    const known = schema.properties ?? {};
    // Own keys: `constructor` is no argument unless the schema names it.
    const unknown = Object.keys(args).filter((name) => !Object.hasOwn(known, name));
    if (unknown.length > 0) {
      const names = Object.keys(known);
      // A tool with thousands of arguments: the first ones and their count, not a message of megabytes.
      const expected = names.length === 0 ? 'none' : `${names.slice(0, MAX_NAMED).map((n) => `'${n}'`).join(', ')}${names.length > MAX_NAMED ? `, … (${names.length} in all)` : ''}`;
      throw new McpvisorError('BAD_INPUT', `unknown argument${unknown.length > 1 ? 's' : ''} ${unknown.slice(0, MAX_NAMED).map((n) => `'${n}'`).join(', ')}${unknown.length > MAX_NAMED ? `, … (${unknown.length} in all)` : ''}; expected ${expected}`, { data: { unknown: unknown.slice(0, MAX_NAMED) } });
    }
    let validate = this.#compiled.get(key);
    if (validate === undefined) {
      const wide = isWideSchema(schema);
      // Of a schema with very many arguments: per call, those given (protocol/wide-schemas.ts).
      const compiled = wide ? givenArgumentsSchema(schema, args) : schema;
      let source: object = withSafeIntegers(compiled);
      try {
        validate = this.#ajv().compile(source);
      } catch {
        // Not compilable (normalise in input-schema.ts removes the known causes): at least the
        // required arguments are checked.
        source = { type: 'object', ...(Array.isArray(compiled.required) ? { required: compiled.required } : {}) };
        validate = this.#ajv().compile(source);
      }
      // ajv keeps what it compiled, by the schema object: one per call would add up.
      if (wide) this.#ajv().removeSchema(source);
      else this.#compiled.set(key, validate);
    }
    if (!validate(args)) {
      const problems = closestErrors(validate.errors ?? []).map((error) => describeError(error, args, schema.required ?? []));
      throw new McpvisorError('BAD_INPUT', `invalid arguments: ${joinProblems(problems)}`, { data: { errors: problems.slice(0, 5) } });
    }
  }
}

function describeError(error: ErrorObject, args: Record<string, unknown>, required: readonly unknown[]): string {
  const at = error.instancePath.slice(1).replace(/\//g, '.');
  // A missing property is named with its path (`body.pet_type`), not as its parent missing.
  if (error.keyword === 'required') return `'${[at, (error.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.')}' is required`;
  const where = at ? `'${at}'` : 'arguments';
  if (error.keyword === 'type') return `${where} ${typeText(error, args, required)}`;
  if (error.keyword === SAFE_INTEGER_KEYWORD) return `${where} ${unsafeIntegerText(error, args)}`;
  if (error.keyword === 'enum') return `${where} must be one of ${JSON.stringify((error.params as { allowedValues: unknown[] }).allowedValues)}`;
  return `${where} ${error.message ?? 'is invalid'}`;
}
