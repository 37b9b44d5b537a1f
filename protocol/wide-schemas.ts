import { McpvisorError } from './errors';
import type { JsonObjectSchema } from './tool';

/**
 * Arguments of an input schema past which a validator is compiled per call, for the arguments
 * the call gives. Why: ajv takes ~0.25 ms per argument to compile, and compiles synchronously.
 * A hostile description with 100,000 body properties kept the api worker from answering past
 * its liveness limit (killed, at every call of that tool), and the supervisor, which validates
 * too, from serving any session (20,000 arguments: 6 s).
 */
export const MAX_COMPILED_ARGUMENTS = 2_000;

/** Whether `schema` has more top-level arguments than are compiled whole. */
export function isWideSchema(schema: JsonObjectSchema): boolean {
  const properties = schema.properties;
  if (properties === undefined || properties === null || typeof properties !== 'object') return false;
  let count = 0;
  for (const _name in properties) if (++count > MAX_COMPILED_ARGUMENTS) return true;
  return false;
}

/**
 * A wide schema cut to what one call needs checked: the arguments `args` gives, and of the
 * required ones those it lacks (so they are reported missing). BAD_INPUT when `args` gives more
 * than MAX_COMPILED_ARGUMENTS. Arguments the schema does not name are left to the caller's own
 * rule (`additionalProperties` stays as the schema says).
 */
export function givenArgumentsSchema(schema: JsonObjectSchema, args: Record<string, unknown>): JsonObjectSchema {
  const given = Object.keys(args);
  if (given.length > MAX_COMPILED_ARGUMENTS) throw new McpvisorError('BAD_INPUT', `more than ${MAX_COMPILED_ARGUMENTS} arguments given (${given.length})`);
  const known = schema.properties ?? {};
  const properties = Object.fromEntries(given.filter((name) => Object.hasOwn(known, name)).map((name) => [name, known[name]]));
  const required = Array.isArray(schema.required) ? schema.required.filter((name) => !Object.hasOwn(args, name)) : undefined;
  return { ...schema, properties, ...(required ? { required } : {}) };
}
