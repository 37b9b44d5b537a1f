import type { Json, JsonObject } from './refs';
// V8's backtracking limit (see there), before any pattern is compiled here.
import '../../protocol/regexp-backtrack-limit';
import { NEEDS_UNICODE } from '../../protocol/lenient-regexp';
import { unicodePattern } from './unicode-pattern';

/**
 * OpenAPI's schema dialect as plain JSON Schema, so that the validator enforces every keyword
 * instead of refusing to compile the whole schema (which left a tool unchecked):
 * - 3.0 `nullable` → a type list;
 * - 3.0 `exclusiveMinimum: true` with `minimum` → the number form (`exclusiveMinimum: 0`);
 * - `oneOf` → `anyOf`: in a description oneOf names the shapes a value may take, and its "exactly
 *   one" refused valid values whenever the shapes overlap, which is most of the time: subtypes
 *   that inherit a `discriminator` through `allOf` (a Cat with `pet_type` matched the Dog
 *   schema too), object branches without `required` or `additionalProperties: false`. Each
 *   branch's own constraints still hold; the API has the last word;
 * - a `pattern` is written as validators compile it, with the `u` flag (unicode-pattern.ts): one
 *   valid only without it (`\-` outside a class) in the same meaning, with `u` syntax; one that
 *   cannot be written so (`(?i)…`, `\Q…\E`) is left out: a client could not use it; so is one
 *   that refuses the schema's own example, default or enum value (refusesOwnValues);
 * - keywords a JSON Schema validator misreads (`xml`, `externalDocs`, `x-…`) are dropped, and so
 *   are a `pattern` that is no string and a `type` that names no JSON type;
 * - `readOnly` properties are left out at every depth, and out of `required` (input schemas
 *   describe requests; `writeOnly` ones stay).
 */
export function normalise(schema: Json): Json {
  if (schema === null || typeof schema !== 'object') return schema;
  // Written-out `$ref`s share their targets: normalised once each, the result shares them too,
  // where a copy per use grew exponentially (Microsoft Graph ran out of memory here).
  const done = normalised.get(schema);
  if (done !== undefined) return done;
  const result = Array.isArray(schema) ? schema.map(normalise) : normaliseObject(schema);
  normalised.set(schema, result);
  return result;
}

const normalised = new WeakMap<object, Json>();

function normaliseObject(schema: JsonObject): Json {
  // Own keys only: a `__proto__` key would otherwise set the prototype, and `type` be inherited.
  const out: JsonObject = Object.create(null);
  const readOnly = new Set<string>();
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'nullable' || key === 'discriminator' || key === 'xml' || key === 'externalDocs' || key.startsWith('x-')) continue;
    // Values, not schemas: kept as written.
    if (LITERAL_KEYWORDS.has(key)) {
      out[key] = value;
      continue;
    }
    if (key === 'properties' && value && typeof value === 'object' && !Array.isArray(value)) {
      const kept: Array<[string, Json]> = [];
      for (const [name, inner] of Object.entries(value)) {
        if (isReadOnly(inner)) readOnly.add(name);
        else kept.push([name, normalise(inner)]);
      }
      out[key] = Object.fromEntries(kept);
      continue;
    }
    out[key] = typeof value === 'object' ? normalise(value) : value;
  }
  if (Array.isArray(out.allOf)) for (const part of out.allOf) for (const name of (part && typeof part === 'object' && droppedReadOnly.get(part)) || []) readOnly.add(name);
  if (readOnly.size > 0) {
    // A required readOnly property is required in responses only: the caller cannot know the
    // value (`owner.id`, "server-assigned"), so it leaves `required` here and in allOf siblings.
    const writable = (names: Json): Json => (Array.isArray(names) ? names.filter((name) => typeof name !== 'string' || !readOnly.has(name)) : names);
    if (out.required !== undefined) out.required = writable(out.required);
    if (Array.isArray(out.allOf)) {
      out.allOf = out.allOf.map((part) => (part && typeof part === 'object' && !Array.isArray(part) && Array.isArray(part.required) ? { ...part, required: writable(part.required) } : part));
    }
    droppedReadOnly.set(out, [...readOnly]);
  }
  if (schema.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  }
  for (const [exclusive, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof out[exclusive] !== 'boolean') continue;
    if (out[exclusive] === true && typeof out[bound] === 'number') {
      out[exclusive] = out[bound];
      delete out[bound];
    } else {
      delete out[exclusive];
    }
  }
  if (Array.isArray(out.oneOf) && out.anyOf === undefined) {
    out.anyOf = out.oneOf;
    delete out.oneOf;
  }
  // A value JSON Schema cannot take (api.video's `pattern: 0`, cloudmersive's `type:
  // application/json`) made ajv, and a client with it, refuse the tool's whole schema.
  if (out.pattern !== undefined && typeof out.pattern !== 'string') delete out.pattern;
  if (out.type !== undefined && !isTypeKeyword(out.type)) delete out.type;
  if (typeof out.pattern === 'string') {
    const pattern = unicodePattern(out.pattern);
    if (pattern === undefined || refusesOwnValues(pattern, schema)) delete out.pattern;
    else out.pattern = pattern;
  }
  // Kept by deref (refs.ts) only for that test.
  delete out.example;
  delete out.examples;
  return out;
}

/**
 * Whether `pattern` refuses a value the schema itself gives as valid (`example`, `default`,
 * `examples`, `enum`, `x-example`): then the description contradicts itself, and the pattern is
 * the likelier mistake. In the APIs.guru collection, 27 patterns of 14 APIs do: a format's name
 * (`date-time`, `YYYY-MM`), prose (`a-z, A-Z, 0-9, /, _, -`), an unescaped `..` that refused
 * Linode's labels longer than two characters, upper-case-only UUIDs given lower-case examples.
 * Enforced, they refused the documented values themselves; left out, the API has the last word.
 */
function refusesOwnValues(pattern: string, schema: JsonObject): boolean {
  const values: unknown[] = [schema.example, schema.default, schema['x-example']];
  for (const list of [schema.examples, schema.enum]) if (Array.isArray(list)) values.push(...list);
  // An example cut short (GitHub's `sha256:0ecbaa601d...`) is no value.
  const strings = values.filter((value): value is string => typeof value === 'string' && !/(?:\.\.\.|…)$/.test(value));
  if (strings.length === 0) return false;
  // Only patterns that mean the same without `u`: V8's backtracking limit applies only there, and
  // a hostile description's `^(a+)+$` with an example to match would otherwise hold the start.
  if (NEEDS_UNICODE.test(pattern)) return false;
  let compiled: RegExp;
  try {
    compiled = new RegExp(pattern);
  } catch {
    return false;
  }
  return strings.some((value) => !compiled.test(value));
}

const LITERAL_KEYWORDS = new Set(['enum', 'const', 'default', 'example', 'examples']);

/** Swagger 2.0's `file` is kept: binary.ts reads it as bytes. */
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null', 'file']);

function isTypeKeyword(type: Json): boolean {
  return typeof type === 'string' ? TYPES.has(type) : Array.isArray(type) && type.length > 0 && type.every((t) => typeof t === 'string' && TYPES.has(t));
}

/** The readOnly property names a normalised object schema left out, for `required` beside it in an allOf. */
const droppedReadOnly = new WeakMap<object, string[]>();

/** A property the server sets (`readOnly`, also inside an allOf): OpenAPI says requests SHOULD NOT send it. */
function isReadOnly(schema: Json): boolean {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return false;
  return schema.readOnly === true || (Array.isArray(schema.allOf) && schema.allOf.some(isReadOnly));
}
