import type { ErrorObject } from 'ajv';

/**
 * Checks and words about argument values that JSON Schema leaves out, shared by the supervisor's
 * validator and the api worker's (library, invoke-api-endpoint).
 */

/** The keyword withSafeIntegers adds: `{ string: true }` when the schema also takes a string. */
export const SAFE_INTEGER_KEYWORD = 'mcpvisorSafeInteger';

const LITERAL_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example']);
const withChecks = new WeakMap<object, unknown>();

/**
 * `schema` with SAFE_INTEGER_KEYWORD beside each `type` that includes `integer`. Why: arguments
 * were parsed as JSON before they came here, so `9007199254740993` is already
 * `9007199254740992`; sending it would send another number. A copy (the listed schema stays as it
 * is), made once per schema, sharing what the original shares.
 */
export function withSafeIntegers<T>(schema: T): T {
  if (schema === null || typeof schema !== 'object') return schema;
  const done = withChecks.get(schema);
  if (done !== undefined) return done as T;
  if (Array.isArray(schema)) {
    const out: unknown[] = [];
    withChecks.set(schema, out);
    for (const item of schema) out.push(withSafeIntegers(item));
    return out as T;
  }
  const source = schema as Record<string, unknown>;
  const out: Record<string, unknown> = Object.create(Object.getPrototypeOf(source) === null ? null : Object.prototype);
  withChecks.set(schema, out);
  for (const [key, value] of Object.entries(source)) out[key] = LITERAL_KEYWORDS.has(key) ? value : withSafeIntegers(value);
  const types = typeof source.type === 'string' ? [source.type] : Array.isArray(source.type) ? source.type : [];
  if (types.includes('integer')) out[SAFE_INTEGER_KEYWORD] = { string: types.includes('string') };
  return out as T;
}

interface KeywordCheck {
  (schema: { string?: boolean }, data: number): boolean;
  errors?: Array<Partial<ErrorObject>>;
}

/** Registers SAFE_INTEGER_KEYWORD: an integer past 2^53 (so not what was written) is refused. */
export function addSafeIntegerKeyword(ajv: { addKeyword(definition: { keyword: string; type: 'number'; schemaType: 'object'; validate: KeywordCheck }): unknown }): void {
  const validate: KeywordCheck = (schema, data) => {
    if (!Number.isInteger(data) || Number.isSafeInteger(data)) return true;
    // ajv adds the paths; the params say whether a string would do.
    validate.errors = [{ keyword: SAFE_INTEGER_KEYWORD, params: { string: schema.string === true }, message: 'is past 2^53' }];
    return false;
  };
  ajv.addKeyword({ keyword: SAFE_INTEGER_KEYWORD, type: 'number', schemaType: 'object', validate });
}

/** The value at an ajv `instancePath` (`/body/0/id`) of `args`, or undefined. */
export function valueAt(args: unknown, instancePath: string): unknown {
  let node = args;
  if (instancePath === '') return node;
  for (const raw of instancePath.slice(1).split('/')) {
    if (node === null || typeof node !== 'object') return undefined;
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** What a SAFE_INTEGER_KEYWORD error says after the argument's name. */
export function unsafeIntegerText(error: ErrorObject, args: unknown): string {
  const value = valueAt(args, error.instancePath);
  const takesString = (error.params as { string?: boolean }).string === true;
  return `is past 2^53${typeof value === 'number' ? ` (it arrived as ${value})` : ''}: JSON numbers this large lose digits before they get here, so it cannot be sent exactly; ${takesString ? 'give it as a string, which the schema takes' : 'give it as a string if the API takes one'}`;
}

/**
 * What a `type` error says after the argument's name: the type wanted and what came
 * (`must be integer, got the string "42": send the number 42`). A string that is exactly a number
 * or boolean the schema wants, or a number where a string is wanted, is named with the value to
 * send instead. Decision: not converted silently (`coerceTypes` stays off): a model that learns
 * the type once sends it right after; the message costs it one round trip at most. `null` for an
 * optional argument is refused too, saying to leave it out: dropping it silently would turn
 * "clear this field" (a JSON merge patch) into "leave it as it is".
 * `required` is the top level's required names.
 */
export function typeText(error: ErrorObject, args: unknown, required: readonly unknown[] = []): string {
  const wanted = ([] as unknown[]).concat((error.params as { type?: unknown }).type).filter((type): type is string => typeof type === 'string');
  const value = valueAt(args, error.instancePath);
  const at = error.instancePath.slice(1).split('/');
  let hint = '';
  if (value === null) {
    if (at.length > 1) hint = ': leave it out rather than send null, if it is optional';
    else if (!required.includes(at[0])) hint = ': leave an optional argument out rather than send null';
  } else if (typeof value === 'string') {
    if (wanted.includes('integer') && /^-?(0|[1-9]\d*)$/.test(value) && Number.isSafeInteger(Number(value))) hint = `: send the number ${value}`;
    else if (wanted.includes('number') && /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(value) && Number.isFinite(Number(value))) hint = `: send the number ${value}`;
    else if (wanted.includes('boolean') && (value === 'true' || value === 'false')) hint = `: send ${value}`;
  } else if (wanted.includes('string') && (typeof value === 'boolean' || (typeof value === 'number' && (!Number.isInteger(value) || Number.isSafeInteger(value))))) {
    hint = `: send the string ${JSON.stringify(String(value))}`;
  }
  return `must be ${wanted.length > 0 ? wanted.join(' or ') : 'of another type'}, got ${received(value)}${hint}`;
}

/** A value, briefly: `the string "42"`, `the number 3`, `true`, `null`, `an array`, `an object`. */
function received(value: unknown): string {
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'number') return `the number ${value}`;
  if (value === null || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : 'nothing';
}
