import { z } from 'zod';
import { McpvisorError } from '../protocol/errors';
import { configSchema, type Config, type ConfigInput } from './schema';
import { didYouMean } from './suggest';
import { maskCredentials } from './openapi';
import { Origins } from './origins';

/** Raised for any invalid configuration; the message lists every problem, one per line. */
export class ConfigError extends McpvisorError {
  constructor(message: string) {
    super('BAD_INPUT', message);
    this.name = 'ConfigError';
  }
}

/**
 * Values under these keys are never echoed back in an error message. `headers` whole: as a part
 * of a name it hid the value of `http.headersTimeoutMs`.
 */
const SECRET_KEY = /token|secret|password|^headers$|authorization/i;

/**
 * Validates a configuration and returns it with defaults applied. Throws `ConfigError` naming each
 * offending field where it came from (`origins`: the flag, variable or config file and key; else
 * the key, `apis[0].apiBaseUrl`), the rule, and what came (secrets excepted); an unknown key names
 * the closest known one, a missing one the flags and variables that give it.
 */
export function validateConfig(input: unknown, origins = new Origins()): Config {
  const parsed = configSchema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.flatMap((issue) => describeIssue(issue, input, origins));
  throw new ConfigError(`Invalid configuration:\n${lines.map((line) => `  - ${line}`).join('\n')}`);
}

/** Defaults of every field, frozen; what `validateConfig({})` returns. */
export const DEFAULT_CONFIG: Readonly<Config> = deepFreeze(validateConfig({}));

function describeIssue(issue: z.core.$ZodIssue, input: unknown, origins: Origins): string[] {
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const known = keysAt(configSchema, issue.path);
    return issue.keys.map((key) => `${origins.name([...issue.path, key])}: unknown key${didYouMean(key, known)}`);
  }
  const got = path.some((part) => SECRET_KEY.test(part)) ? '' : received(input, issue.path);
  return [`${origins.name(issue.path)}: ${issue.message}${got}${got === ' (missing)' ? origins.hint(issue.path) : ''}`];
}

function received(input: unknown, path: PropertyKey[]): string {
  let value: unknown = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return '';
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  if (value === undefined) return ' (missing)';
  const text = JSON.stringify(typeof value === 'string' ? maskCredentials(value, true) : value) ?? String(value);
  return ` (got ${text.length > 60 ? `${text.slice(0, 57)}...` : text})`;
}

/** The keys an object schema accepts at `path`, looking through defaults, optionals and arrays. */
function keysAt(schema: z.ZodType, path: PropertyKey[]): string[] {
  let current: z.ZodType | undefined = unwrap(schema);
  for (const key of path) {
    if (current instanceof z.ZodObject) current = unwrap(current.shape[key as string]);
    else if (current instanceof z.ZodArray) current = unwrap(current.element as z.ZodType);
    else return [];
  }
  return current instanceof z.ZodObject ? Object.keys(current.shape) : [];
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  while (current && 'innerType' in current.def) current = (current.def as { innerType: z.ZodType }).innerType;
  return current;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

export type { Config, ConfigInput };
