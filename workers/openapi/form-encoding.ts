import { followObject, MAX_REF_HOPS, type Json, type JsonObject, type RefContext } from './refs';

/**
 * A form body's `encoding` with OpenAPI's default for array properties made explicit: style
 * `form`, explode true (`tags=a&tags=b`). The builder joins an array without an encoding with
 * commas (`tags=a,b`), which is explode false. Explicit encodings are kept as written, with
 * explode defaulting to true for style form, as the specification says. For multipart bodies the
 * same setting makes the builder send one part per item (RFC 7578 4.3), not one joined part.
 * The properties are those formProperties finds, composed schemas included.
 * `uri` is the document of the media type object, which `schema` is written in; `given` has no refs.
 */
export function formEncoding(schema: Json | undefined, given: JsonObject | undefined, ctx: RefContext, uri: string | undefined): JsonObject | undefined {
  const properties = formProperties(schema, ctx, uri);
  if (properties.size === 0) return given;
  // Keyed by property names, which may be `__proto__` or `constructor`.
  const out: JsonObject = Object.assign(Object.create(null) as JsonObject, given);
  for (const [name, definitions] of properties) {
    const own = followObject(out[name], ctx, uri)?.value;
    const style = typeof own?.style === 'string' ? own.style : 'form';
    // An explicit contentType (a JSON-encoded part) only applies while style and explode are unset.
    if (own?.explode !== undefined || style !== 'form' || (own?.contentType !== undefined && own.style === undefined)) continue;
    if (own !== undefined || definitions.some(({ schema: at, uri: where }) => mayBeArray(at, ctx, where))) out[name] = { ...own, style, explode: true };
  }
  return Object.keys(out).length > 0 ? out : given;
}

/** A property's schema and the document it is written in. */
interface LocatedSchema {
  schema: Json;
  uri: string | undefined;
}

/**
 * The properties a form body's schema declares, each with every schema given for it and the
 * document that one is written in: its own `properties`, those of its `allOf` parts (as
 * input-schema.ts merges them into arguments) and, decision, those of every `oneOf` and `anyOf`
 * branch. Such a body is one `body` argument (input-schema.ts), and only the encoding of the
 * properties the given value has matters, so every branch's are taken. `$ref`s are followed at
 * each step, each against the document it is written in; a part met again is not read twice.
 */
function formProperties(schema: Json | undefined, ctx: RefContext, uri: string | undefined): Map<string, LocatedSchema[]> {
  const out = new Map<string, LocatedSchema[]>();
  const seen = new Set<JsonObject>();
  const visit = (node: Json | undefined, at: string | undefined, depth: number): void => {
    const found = depth > MAX_REF_HOPS ? undefined : followObject(node, ctx, at);
    if (found === undefined || seen.has(found.value)) return;
    seen.add(found.value);
    const properties = followObject(found.value.properties, ctx, found.uri);
    for (const [name, property] of Object.entries(properties?.value ?? {})) {
      const list = out.get(name) ?? [];
      list.push({ schema: property, uri: properties!.uri });
      out.set(name, list);
    }
    for (const key of ['allOf', 'oneOf', 'anyOf']) {
      const parts = found.value[key];
      if (Array.isArray(parts)) for (const part of parts) visit(part, found.uri, depth + 1);
    }
  };
  visit(schema, uri, 0);
  return out;
}

/**
 * Whether a property's value may be an array: `type: array` (or a type list with it), through
 * `$ref`s and any part of an `allOf`, `oneOf` or `anyOf`. Decision: one such definition is enough;
 * explode changes nothing for a primitive value, only how an array (or, rarely, an object another
 * branch allows) is written.
 */
function mayBeArray(schema: Json, ctx: RefContext, uri: string | undefined, seen = new Set<JsonObject>()): boolean {
  const found = seen.size > MAX_REF_HOPS * 4 ? undefined : followObject(schema, ctx, uri);
  // A part met again (shared, or a cycle) has answered already.
  if (found === undefined || seen.has(found.value)) return false;
  seen.add(found.value);
  const { type } = found.value;
  if (type === 'array' || (Array.isArray(type) && type.includes('array'))) return true;
  return ['allOf', 'oneOf', 'anyOf'].some((key) => {
    const parts = found.value[key];
    return Array.isArray(parts) && parts.some((part) => mayBeArray(part, ctx, found.uri, seen));
  });
}
