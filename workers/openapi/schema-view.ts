import { isObject, isRef, refDocument, resolvePointer, unloadedTarget, type Json, type JsonObject, type RefContext } from './refs';

/**
 * Schemas as get-api-endpoint-schema shows them to a model: `$ref`s written out as the walk
 * reaches them (never the whole graph first), `properties` listed `depth` levels deep, and below
 * that a stub with the schema's type and `x-left-out` saying what is not shown. Arrays
 * (`items`) and `allOf`/`anyOf`/`oneOf` branches do not count as levels: "a list of issues" shows
 * the fields. The same walk finds the part of a schema that a dotted path of property
 * names (`at`) names, so a model can ask for what a stub left out.
 */

export interface ViewOptions {
  /** Levels of `properties` listed (0: the schema itself is a stub). */
  depth: number;
  /** Characters of each description (and title) kept; 0 leaves them out. */
  descriptionChars: number;
  /** About the characters of the view as compact JSON; past them viewSchema returns undefined. */
  maxChars: number;
  /** Values shown of an enum before the rest is counted; default ENUM_VALUES. */
  enumValues?: number;
}

export interface SchemaView {
  value: Json;
  /** Dotted paths of the first schemas whose properties were left out for depth. */
  leftOut: string[];
  /** Whether some description was cut. */
  cutText: boolean;
  /** Dotted paths of the first enums cut to `enumValues` ('' for the top). */
  enumsCut: string[];
}

/** Keywords whose value is a schema, or a list or map of schemas, walked at the same level. */
const SAME_LEVEL = new Set(['items', 'additionalItems', 'additionalProperties', 'unevaluatedItems', 'unevaluatedProperties', 'contains', 'not', 'if', 'then', 'else', 'propertyNames', 'prefixItems', 'allOf', 'anyOf', 'oneOf']);
/** Keywords that list properties: one level deeper. */
const PROPERTY_MAPS = new Set(['properties', 'patternProperties']);
/** Keywords whose value is a map of schemas applying to the same value: walked at the same level. */
const SCHEMA_MAPS = new Set(['dependentSchemas']);
/**
 * Keywords whose value is data that constrains: shown whole however long (the answer's size
 * bound picks a smaller shape instead), as a value left out would pass arguments the call then
 * refuses. Why: an `enum` (AWS's resource types, Azure's VM sizes) or a `dependentRequired`
 * (Adyen's optional bodies need their required fields once any is given) over 500 characters
 * vanished from the answer, and the model's call was refused.
 */
const CONSTRAINT_VALUES = new Set(['dependentRequired', 'const']);
/** Keywords left out: examples and vendor extensions are often most of a schema's size and never its shape. */
const DROPPED = new Set(['example', 'examples', 'xml', 'externalDocs', '$defs', 'definitions', '$schema', '$id', '$anchor', '$comment']);
/** Values shown in an enum before the rest is counted, unless asked for more. */
export const ENUM_VALUES = 50;
/** Characters of a non-schema value that only informs (`default`, `discriminator`…) shown whole; longer ones are left out. */
const VALUE_CHARS = 500;
/** Paths named in `leftOut`. */
const LEFT_OUT_PATHS = 5;

const TOO_LARGE = Symbol('view too large');

/**
 * `schema` (refs resolved against `ctx`, relative ones against `uri`) as described above, or
 * undefined when it would take more than `maxChars`. A ref met again inside itself is
 * `{ "x-recursive": … }`, one that cannot be resolved `{ "x-unresolved": … }`, with `x-not-loaded`
 * when its document could not be loaded. Decision: only that, never why (the reason can name
 * local paths and private addresses; the server's log has it).
 */
export function viewSchema(schema: Json | undefined, ctx: RefContext, options: ViewOptions, uri = ctx.rootUri): SchemaView | undefined {
  const leftOut: string[] = [];
  const enumsCut: string[] = [];
  const enumValues = options.enumValues ?? ENUM_VALUES;
  let cutText = false;
  let size = 0;
  const grow = (chars: number) => {
    size += chars;
    if (size > options.maxChars) throw TOO_LARGE;
  };
  // Refs being written out, with the path where each was first shown.
  const stack = new Map<string, string>();

  const show = (node: Json | undefined, at: string | undefined, level: number, path: string): Json | undefined => {
    if (node === null || typeof node !== 'object') {
      grow(scalarChars(node));
      return node;
    }
    if (Array.isArray(node)) return node.map((item) => show(item, at, level, path) ?? null);
    if (isRef(node)) {
      const key = refKey(node.$ref, at);
      const seen = stack.get(key);
      if (seen !== undefined) return sized({ 'x-recursive': seen === '' ? 'the same schema as the top one' : `the same schema as at '${seen}'` });
      const target = resolve(node.$ref, at, ctx);
      if (target.value === undefined) {
        return sized(unloadedTarget(node.$ref, at, ctx) ? { 'x-unresolved': node.$ref, 'x-not-loaded': 'the document this $ref names could not be loaded' } : { 'x-unresolved': node.$ref });
      }
      stack.set(key, path);
      const siblings = Object.fromEntries(Object.entries(node).filter(([name]) => name !== '$ref'));
      let out: Json | undefined;
      if (Object.keys(siblings).length > 0 && isObject(target.value)) {
        // Sibling keywords (3.1) win over the target's, and are written where the $ref is: each
        // part is shown against its own document, as a $ref inside either is relative to it.
        const own = Object.fromEntries(Object.entries(target.value).filter(([name]) => !Object.hasOwn(siblings, name)));
        out = { ...(show(own, target.uri, level, path) as JsonObject), ...(show(siblings, at, level, path) as JsonObject) };
      } else {
        out = show(target.value, target.uri, level, path);
      }
      stack.delete(key);
      return out;
    }
    const out: JsonObject = {};
    grow(2);
    const stub = level >= options.depth;
    for (const [name, value] of Object.entries(node)) {
      if (DROPPED.has(name) || name.startsWith('x-')) continue;
      let shown: Json | undefined;
      if (name === 'required' && Array.isArray(value)) {
        // Names of properties not listed say nothing; listed ones need all their names.
        if (stub) continue;
        shown = value;
        grow(JSON.stringify(value).length);
      } else if (name === 'description' || name === 'title') {
        if (typeof value !== 'string' || value === '') continue;
        if (options.descriptionChars === 0) {
          cutText = true;
          continue;
        }
        shown = value.length > options.descriptionChars ? `${value.slice(0, options.descriptionChars)}…` : value;
        if (shown !== value) cutText = true;
      } else if (name === 'enum' && Array.isArray(value)) {
        shown = value.length > enumValues ? value.slice(0, enumValues) : value;
        if (shown !== value) {
          put(out, 'x-enum-left-out', `${value.length - enumValues} more values`);
          if (enumsCut.length < LEFT_OUT_PATHS && !enumsCut.includes(path)) enumsCut.push(path);
        }
        // However long: without it, any value would seem allowed (see CONSTRAINT_VALUES).
        grow(JSON.stringify(shown).length);
      } else if (PROPERTY_MAPS.has(name) && isObject(value)) {
        const names = Object.keys(value);
        if (stub) {
          if (names.length === 0) continue;
          if (leftOut.length < LEFT_OUT_PATHS) leftOut.push(path === '' ? '(top)' : path);
          put(out, 'x-left-out', `${names.length} ${name === 'properties' ? 'properties' : 'pattern properties'}`);
          grow(24);
          continue;
        }
        const map: JsonObject = {};
        for (const [prop, inner] of Object.entries(value)) {
          grow(prop.length + 4);
          put(map, prop, show(inner, at, level + 1, path === '' ? prop : `${path}.${prop}`) ?? {});
        }
        shown = map;
      } else if (SAME_LEVEL.has(name) && value !== null && typeof value === 'object') {
        shown = show(value, at, level, path);
      } else if (SCHEMA_MAPS.has(name) && isObject(value)) {
        const map: JsonObject = {};
        for (const [key, inner] of Object.entries(value)) {
          grow(key.length + 4);
          put(map, key, show(inner, at, level, path) ?? {});
        }
        shown = map;
      } else if (CONSTRAINT_VALUES.has(name)) {
        // Like `required`: names properties a stub does not list.
        if (stub && name === 'dependentRequired') continue;
        shown = value;
        if (value !== null && typeof value === 'object') grow(JSON.stringify(value).length);
      } else if (value !== null && typeof value === 'object') {
        shown = clipped(value);
      } else {
        shown = value;
      }
      if (shown === undefined) continue;
      grow(name.length + 4);
      if (shown === null || typeof shown !== 'object') grow(scalarChars(shown));
      put(out, name, shown);
    }
    return out;
  };

  const sized = (value: JsonObject): JsonObject => {
    grow(JSON.stringify(value).length);
    return value;
  };
  /** A value that is data, not a schema: whole when short, else left out. */
  const clipped = (value: Json): Json | undefined => {
    const text = JSON.stringify(value);
    if (text.length > VALUE_CHARS) return undefined;
    grow(text.length);
    return value;
  };

  try {
    return { value: show(schema, uri, 0, '') ?? {}, leftOut, cutText, enumsCut };
  } catch (error) {
    if (error === TOO_LARGE) return undefined;
    throw error;
  }
}

/**
 * The part of `schema` that `path` (property names joined by dots) names, passing through
 * arrays' `items`, `allOf`/`anyOf`/`oneOf` branches and `additionalProperties`; a name holding
 * dots is matched whole first, and a name several branches define is looked into in each (the
 * first has the last name). `{ missing, at, names }` when some name is not there: the name, the
 * path up to it, and the names that are.
 */
export function schemaAt(schema: Json | undefined, path: string, ctx: RefContext, uri = ctx.rootUri): { value: Json; uri: string | undefined } | { missing: string; at: string; names: string[] } {
  let best: { missing: string; at: string; names: string[] } | undefined;
  // Walks that found nothing, by node and what was left of the path (`done` follows from it):
  // with a name holding dots (`a` and `a.a`), the ways to split a path grow exponentially, and
  // 28 segments took 9 s.
  const failed = new Map<object, Set<string>>();
  const walk = (node: Json | undefined, nodeUri: string | undefined, rest: string, done: string): { value: Json; uri: string | undefined } | undefined => {
    const key = `${rest.length}\n${nodeUri ?? ''}`;
    if (node !== null && typeof node === 'object' && failed.get(node)?.has(key)) return undefined;
    const props = propertiesOf(node, nodeUri, ctx);
    // Only the starts no longer than the longest name: each start of a long path at each level
    // made a path of 16,000 names take a minute.
    let longest = 0;
    for (const name of props.keys()) longest = Math.max(longest, name.length);
    const heads = rest.length <= longest ? [rest] : [];
    for (let dot = rest.indexOf('.'); dot >= 0 && dot <= longest; dot = rest.indexOf('.', dot + 1)) heads.push(rest.slice(0, dot));
    for (const head of heads) {
      const found = props.get(head);
      if (found === undefined) continue;
      if (head === rest) return found[0];
      // Why each: NPR's documents take `items` from a generic allOf branch (an array of anything)
      // and from their own (an array of audio items), and only the second has `attributes`.
      for (const candidate of found) {
        const deeper = walk(candidate.value, candidate.uri, rest.slice(head.length + 1), done === '' ? head : `${done}.${head}`);
        if (deeper) return deeper;
      }
    }
    const dot = rest.indexOf('.');
    if (!best || done.length > best.at.length) best = { missing: dot < 0 ? rest : rest.slice(0, dot), at: done, names: [...props.keys()] };
    if (node !== null && typeof node === 'object') failed.set(node, (failed.get(node) ?? new Set()).add(key));
    return undefined;
  };
  return walk(schema, uri, path, '') ?? best!;
}

/** The names of the properties a value of `schema` may have (through refs, arrays and branches). */
export function propertyNames(schema: Json | undefined, ctx: RefContext, uri = ctx.rootUri): string[] {
  return [...propertiesOf(schema, uri, ctx).keys()];
}

/** The properties a value of `node` may have, by name: each schema found for it, in the order found. */
function propertiesOf(node: Json | undefined, uri: string | undefined, ctx: RefContext): Map<string, Array<{ value: Json; uri: string | undefined }>> {
  const found = new Map<string, Array<{ value: Json; uri: string | undefined }>>();
  const seen = new Set<object>();
  const visit = (value: Json | undefined, at: string | undefined) => {
    let current = value;
    let where = at;
    for (let hops = 0; isRef(current) && hops < 32; hops++) {
      const target: { value: Json | undefined; uri: string | undefined } = resolve(current.$ref, where, ctx);
      current = target.value;
      where = target.uri;
    }
    if (!isObject(current) || seen.has(current)) return;
    seen.add(current);
    if (isObject(current.properties)) {
      for (const [name, inner] of Object.entries(current.properties)) {
        const list = found.get(name);
        if (list) list.push({ value: inner, uri: where });
        else found.set(name, [{ value: inner, uri: where }]);
      }
    }
    for (const keyword of ['items', 'additionalProperties']) visit(current[keyword], where);
    for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
      const branches = current[keyword];
      if (Array.isArray(branches)) for (const branch of branches) visit(branch, where);
    }
  };
  visit(node, uri);
  return found;
}

function refKey(ref: string, uri: string | undefined): string {
  return `${refDocument(ref, uri) ?? ''}#${ref.slice(ref.indexOf('#') + 1)}`;
}

/** A ref's target and the URI of its document; value undefined when it cannot be resolved. */
function resolve(ref: string, uri: string | undefined, ctx: RefContext): { value: Json | undefined; uri: string | undefined } {
  const documentUri = refDocument(ref, uri);
  const doc = documentUri === undefined || documentUri === ctx.rootUri ? ctx.root : ctx.external.get(documentUri);
  const hash = ref.indexOf('#');
  return { value: doc === undefined ? undefined : resolvePointer(doc, hash === -1 ? '' : ref.slice(hash + 1)), uri: documentUri ?? ctx.rootUri };
}

/** Sets `key` as an own data property (a `__proto__` key from a description stays a key). */
function put(target: JsonObject, key: string, value: Json): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

function scalarChars(value: Json | undefined): number {
  return typeof value === 'string' ? value.length + 2 : 6;
}
