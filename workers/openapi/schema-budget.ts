import type { Json, JsonObject } from './refs';

/**
 * Characters (about, as JSON) one input schema may take once its `$ref`s are written out, and all
 * of a description's together. GitHub's largest tool schema is 24 KB and all of them 1.9 MB;
 * DocuSign's shared components, inlined, made 96 MB schemas (998 MB in all) and a start that
 * failed ("Invalid string length"), and tools/list must stay well under the 10 MiB an MCP message
 * may have on stdio.
 */
export const MAX_SCHEMA_CHARS = 128 * 1024;
export const MAX_ALL_SCHEMAS_CHARS = 6 * 1024 * 1024;
/** Below this a schema is not cut, whatever the total: a few levels of arguments stay readable. */
const MIN_CAP_CHARS = 8 * 1024;

/**
 * Each schema within one cap, the largest that keeps the total within `totalChars` (at most
 * `maxChars`, at least 8 KiB): small schemas stay whole, and the few huge ones share what is left.
 */
export function fitSchemas(schemas: JsonObject[], maxChars = MAX_SCHEMA_CHARS, totalChars = MAX_ALL_SCHEMAS_CHARS): JsonObject[] {
  const sizes = schemas.map((schema) => sizeUpTo(schema, maxChars));
  const sorted = [...sizes].sort((a, b) => a - b);
  let cap = maxChars;
  let left = totalChars;
  for (let i = 0; i < sorted.length; i++) {
    const share = left / (sorted.length - i);
    if (sorted[i] > share) {
      cap = Math.max(MIN_CAP_CHARS, Math.min(maxChars, Math.floor(share)));
      break;
    }
    left -= sorted[i];
  }
  return schemas.map((schema, i) => (sizes[i] > cap ? withinBudget(schema, cap) : schema));
}

/**
 * `schema` when it takes at most `maxChars`, else a copy cut at the deepest level that keeps it
 * within them: every value down to that level whole but descriptions over 2,000 characters,
 * which are shortened, each schema below it a stub with only its `type` (so the value's kind is
 * still checked), and a note in the top description. The arguments' names and types stay even
 * when they alone pass `maxChars` (the validator takes only the arguments listed). Whole levels,
 * not a walk that stops mid-way: the arguments come out evenly, none detailed and the next bare.
 * Shared `$ref` targets make the written schema a tree of exponential size although the
 * description is small, so levels are measured only until the budget is spent.
 */
export function withinBudget(schema: JsonObject, maxChars = MAX_SCHEMA_CHARS): JsonObject {
  if (sizeUpTo(schema, maxChars) <= maxChars) return schema;
  // Size of each level written whole, and of its schemas written as stubs.
  const whole: number[] = [];
  const stubs: number[] = [];
  let level: Array<{ value: Json; keyword: string | undefined }> = [{ value: schema, keyword: undefined }];
  let spent = 0;
  for (let depth = 0; level.length > 0 && spent <= maxChars; depth++) {
    let size = 0;
    let stubSize = 0;
    const next: typeof level = [];
    for (const { value, keyword } of level) {
      if (value === null || typeof value !== 'object') {
        size += TEXT_KEYWORDS.has(keyword ?? '') ? Math.min(scalarSize(value), MAX_TEXT_CHARS + 4) : scalarSize(value);
        continue;
      }
      stubSize += JSON.stringify(stub(value, keyword) ?? null).length;
      if (DATA_KEYWORDS.has(keyword ?? '')) {
        size += sizeUpTo(value, DATA_CHARS);
        continue;
      }
      size += 2;
      for (const [child, childKeyword] of parts(value, keyword)) {
        size += Array.isArray(value) ? 1 : 4;
        next.push({ value: child, keyword: childKeyword });
      }
    }
    whole.push(size);
    stubs.push(stubSize);
    spent += size;
    level = next;
  }
  // The deepest level kept whole: its total and the stubs of the next level fit. At least the
  // arguments' names and types (level 1: `properties`) stay, whatever their number: level 0 made
  // `properties` empty, and the validator, which takes only the arguments listed, refused them all.
  let keep = 1;
  for (let depth = 0, total = 0; depth < whole.length; depth++) {
    total += whole[depth];
    if (total + (stubs[depth + 1] ?? 0) <= maxChars) keep = Math.max(1, depth);
    else break;
  }
  // The levels' sizes are estimates (escapes, a map's keys): check the cut itself, a level up
  // while it is still too large.
  let copy = cut(schema, undefined, 0, keep) as JsonObject;
  while (keep > 1 && JSON.stringify(copy).length > maxChars) copy = cut(schema, undefined, 0, --keep) as JsonObject;
  const note = 'Parts of this schema below a few levels are left out (too large to list); get-api-endpoint-schema shows them.';
  copy.description = typeof copy.description === 'string' ? `${copy.description} ${note}` : note;
  return copy;
}

/** The parts of a value: [child, the keyword it sits under] (a map's and a list's children are schemas or items). */
function parts(value: JsonObject | Json[], keyword: string | undefined): Array<[Json, string | undefined]> {
  if (Array.isArray(value)) return value.map((item) => [item, keyword]);
  const map = SCHEMA_MAPS.has(keyword ?? '');
  return Object.entries(value).map(([name, child]) => [child, map ? undefined : name]);
}

/** `value` copied down to depth `keep`; objects deeper are stubs, long descriptions shortened. */
function cut(value: Json, keyword: string | undefined, depth: number, keep: number): Json | undefined {
  if (typeof value === 'string' && TEXT_KEYWORDS.has(keyword ?? '') && value.length > MAX_TEXT_CHARS) return `${value.slice(0, MAX_TEXT_CHARS)}…`;
  if (value === null || typeof value !== 'object') return value;
  if (DATA_KEYWORDS.has(keyword ?? '')) return sizeUpTo(value, DATA_CHARS) <= DATA_CHARS ? value : undefined;
  if (depth > keep) return stub(value, keyword);
  if (Array.isArray(value)) return value.map((item) => cut(item, keyword, depth + 1, keep) ?? {});
  const map = SCHEMA_MAPS.has(keyword ?? '');
  const out: JsonObject = Object.create(null);
  for (const [name, child] of Object.entries(value)) {
    const copied = cut(child, map ? undefined : name, depth + 1, keep);
    if (copied !== undefined) out[name] = copied;
  }
  return out;
}

/** Keywords whose value maps names to schemas. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependentRequired']);
/**
 * Keywords whose value is prose, and the characters of it a cut schema keeps. Why: the cut left
 * out a 5,000-value enum, a constraint, and kept a 100 KB description whole.
 */
const TEXT_KEYWORDS = new Set(['description', 'title']);
const MAX_TEXT_CHARS = 2_000;
/** Keywords whose value is data, not a schema. */
const DATA_KEYWORDS = new Set(['default', 'const', 'example', 'examples', 'enum']);
/** Characters of one piece of data kept whole. */
const DATA_CHARS = 16 * 1024;

/**
 * What stands for a value below the level kept, by the keyword it sits under: a map of schemas
 * becomes empty (no constraint), a list of scalars (`required`, a type list) stays whole, a list
 * of schemas (`anyOf`) one open schema, data goes, and a schema keeps only its `type`, so the
 * value's kind is still checked.
 */
function stub(source: JsonObject | Json[], keyword: string | undefined): Json | undefined {
  if (DATA_KEYWORDS.has(keyword ?? '')) return undefined;
  if (Array.isArray(source)) return source.every((item) => item === null || typeof item !== 'object') ? source : [{}];
  if (SCHEMA_MAPS.has(keyword ?? '')) return {};
  return typeof source.type === 'string' || Array.isArray(source.type) ? { type: source.type } : {};
}

/** About the characters of a scalar written as JSON. */
function scalarSize(value: Json): number {
  return typeof value === 'string' ? value.length + 3 : 8;
}

/** About the characters of `node` written as JSON, counted until past `limit` (shared parts count each time). */
function sizeUpTo(node: Json, limit: number): number {
  let size = 0;
  const stack: Json[] = [node];
  while (stack.length > 0 && size <= limit) {
    const value = stack.pop()!;
    if (value === null || typeof value !== 'object') {
      size += scalarSize(value);
      continue;
    }
    size += 2;
    // One push each: spread as arguments, an enum of ~150,000 values overflowed the stack.
    if (Array.isArray(value)) for (const item of value) stack.push(item);
    else for (const [key, inner] of Object.entries(value)) {
      size += key.length + 3;
      stack.push(inner);
    }
  }
  return size;
}
