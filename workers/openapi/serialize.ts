/**
 * OpenAPI 3 parameter serialisations that swagger-client's builder gets wrong, done here instead
 * (request.ts decides which parameters come here; every other one goes through the builder):
 * - `deepObject` query parameters and form properties: brackets to any depth (deepObjectPairs),
 *   where the builder sent arrays as repeated names and deeper values as JSON text.
 * - query parameters with `allowReserved: true`: the builder leaves `#` raw, so the rest of the
 *   query became a fragment (`q=C#` sent `?q=C`), and it encodes the `%` of a percent-encoded
 *   triple again. Here: RFC 6570 reserved expansion, except `#`, `[` and `]`, which a query may
 *   not hold (OpenAPI 3.0.4 / 3.1.1, Parameter Object).
 * - `spaceDelimited` and `pipeDelimited` query parameters: the builder joins an object's keys and
 *   values with commas. Here: the separator of the style, `%20` or `%7C` (a raw `|` is refused by
 *   strict servers such as Tomcat).
 * - exploded object query parameters (style form, explode true: the defaults): each key is a
 *   query name of its own, and the builder keeps one value per name, so of `filter: {name: a}`
 *   and `sort_by: {name: asc}` (files.com), or SQS's `Attribute` and `Tag` maps, only the last
 *   `name` was sent, and a key named like another parameter replaced that one's value.
 * - array and object cookie parameters (style form; explode defaults to true there): the
 *   builder wrote `color=color%3Dblue%26color%3Dblack` exploded and `color=blue%2Cblack`
 *   unexploded (formCookie).
 * - parameters described by `content` (contentText): the builder sent a string as it is under a
 *   JSON type, and an object under another type as `[object Object]`.
 */

/** The parts of a Parameter Object these functions read. */
export interface StyledParameter {
  name: string;
  style?: string;
  explode?: boolean;
  allowReserved?: boolean;
  allowEmptyValue?: boolean;
}

const SEPARATORS: Record<string, string> = { form: ',', spaceDelimited: '%20', pipeDelimited: '%7C' };

/** Whether swagger-client's builder would serialise this query parameter wrongly. */
export function needsOwnQuery(parameter: StyledParameter & { content?: unknown; schema?: unknown }): boolean {
  if (parameter.content !== undefined) return false;
  if (parameter.allowReserved === true || parameter.style === 'spaceDelimited' || parameter.style === 'pipeDelimited' || parameter.style === 'deepObject') return true;
  return (parameter.style ?? 'form') === 'form' && parameter.explode !== false && mayBeObject(parameter.schema, 0);
}

/**
 * Whether a (dereferenced) schema allows an object: `type: object` or a type list with it, or
 * no type but object keywords, here or in an `allOf`, `oneOf` or `anyOf` part. Decision: a
 * parameter without any of these (`schema: {}`) stays with the builder, which writes primitives
 * and arrays right; its rare object values can still meet another's keys.
 */
function mayBeObject(schema: unknown, depth: number): boolean {
  if (schema === null || typeof schema !== 'object' || depth > 8) return false;
  const s = schema as Record<string, unknown>;
  if (s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object'))) return true;
  if (s.type === undefined && (s.properties !== undefined || s.additionalProperties !== undefined || s.patternProperties !== undefined)) return true;
  return ['allOf', 'oneOf', 'anyOf'].some((key) => Array.isArray(s[key]) && (s[key] as unknown[]).some((part) => mayBeObject(part, depth + 1)));
}

/**
 * One query parameter as `name=value` pairs joined with `&`, or undefined when nothing is sent
 * (no value, an empty array or object, or an empty string without `allowEmptyValue`).
 */
export function serializeQuery(parameter: StyledParameter, value: unknown): string | undefined {
  const style = parameter.style ?? 'form';
  const explode = parameter.explode ?? style === 'form';
  const encode = parameter.allowReserved ? encodeReserved : encodeStrict;
  const name = encodeStrict(parameter.name);
  if (value === undefined || value === null) return undefined;
  if (style === 'deepObject' && typeof value === 'object') {
    const pairs = deepObjectPairs(parameter.name, value);
    return pairs.length === 0 ? undefined : pairs.map(([key, v]) => `${encodeStrict(key)}=${encode(v)}`).join('&');
  }
  if (typeof value !== 'object') {
    const text = String(value);
    if (text === '' && !parameter.allowEmptyValue) return undefined;
    return `${name}=${encode(text)}`;
  }
  const separator = SEPARATORS[style] ?? ',';
  if (Array.isArray(value)) {
    if (value.length === 0) return undefined;
    if (explode) return value.map((item) => `${name}=${encode(text(item))}`).join('&');
    return `${name}=${value.map((item) => encode(text(item))).join(separator)}`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return undefined;
  if (explode) return entries.map(([key, v]) => `${encodeStrict(key)}=${encode(text(v))}`).join('&');
  return `${name}=${entries.flatMap(([key, v]) => [encode(key), encode(text(v))]).join(separator)}`;
}

/**
 * A deepObject value as bracketed names to any depth, unencoded: `metadata[key]`,
 * `line_items[0][price]`, `invoice_settings[custom_fields][0][name]`. OpenAPI defines only an
 * object of primitives (`name[key]`); deeper values went as JSON text inside one field, which
 * Stripe, Rails, PHP and qs do not read. Decision, jQuery.param's convention, which those read:
 * an array of primitives is `expand[]=a&expand[]=b` (Stripe documents `expand[]`), an array
 * holding objects or arrays is indexed (`line_items[0][price]`, which keeps one item's keys
 * together). `null`, and empty arrays and objects, give no pair.
 */
export function deepObjectPairs(name: string, value: unknown): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  const walk = (key: string, v: unknown): void => {
    if (v === null || v === undefined) return;
    if (Array.isArray(v)) {
      const flat = v.every((item) => item === null || typeof item !== 'object');
      v.forEach((item, i) => walk(flat ? `${key}[]` : `${key}[${i}]`, item));
    } else if (typeof v === 'object') {
      for (const [k, inner] of Object.entries(v)) walk(`${key}[${k}]`, inner);
    } else {
      pairs.push([key, String(v)]);
    }
  };
  walk(name, value);
  return pairs;
}

/**
 * A style form cookie parameter's `Cookie` pairs for an array or object value, or a `content`
 * one's for its text, or undefined when the builder's own serialisation is right (a primitive,
 * another style); '' when
 * nothing is sent (an empty array or object: undefined in RFC 6570, as in a query).
 * Exploded (the default): one pair per item, `color=blue; color=black`, or per key, where the
 * builder wrote `color=color%3Dblue%26color%3Dblack`. Unexploded: the style table's
 * `color=blue,black,brown` and `color=R,100,G,200`, each item encoded and the commas between
 * them as they are, where the builder encoded those too (`color=blue%2Cblack`): a server that
 * does not decode cookie values (Java's, Go's, Python's) could not split the list, and one that
 * does could not tell a comma inside an item from one between items.
 */
export function formCookie(parameter: StyledParameter & { content?: unknown }, value: unknown): string | undefined {
  // A `content` cookie's text (request.ts wrote it): the builder left a JSON string's quotes
  // raw, `c="abc"`, which cookie parsers take for RFC 6265 quoting and drop.
  if (parameter.content !== undefined) return typeof value === 'string' ? `${encodeStrict(parameter.name)}=${encodeStrict(value)}` : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  if ((parameter.style ?? 'form') !== 'form') return undefined;
  const pairs = Array.isArray(value) ? value.map((item) => [parameter.name, item] as const) : Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (pairs.length === 0) return '';
  if (parameter.explode === false) {
    const items = Array.isArray(value) ? pairs.map(([, v]) => encodeStrict(text(v))) : pairs.flatMap(([key, v]) => [encodeStrict(key), encodeStrict(text(v))]);
    return `${encodeStrict(parameter.name)}=${items.join(',')}`;
  }
  return pairs.map(([key, v]) => `${encodeStrict(key)}=${encodeStrict(text(v))}`).join('; ');
}

/** Whether a media type is JSON: `application/json`, `text/json`, `application/vnd.x+json` (parameters aside). */
export function isJsonType(type: string): boolean {
  return /^[^/;\s]+\/(?:[^;\s]*\+)?json\s*(?:;|$)/i.test(type.trim());
}

/**
 * A value as the text of the media type `type` (a Parameter Object's `content`, an Encoding
 * Object's `contentType`): under a JSON type its JSON text, a string too (`"abc"`: the builder
 * sent the string as it is, which is no JSON document, so `q: "abc"` went out as `?q=abc`);
 * under any other type a string as written and anything else as JSON (the builder wrote an
 * object as `[object Object]`). A string argument is a value, never read as JSON text.
 */
export function contentText(type: string, value: unknown): string {
  if (isJsonType(type) || typeof value !== 'string') return JSON.stringify(value) ?? '';
  return value;
}

/** A value as the builder writes one: objects and arrays inside a value as JSON. */
function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** Everything but RFC 3986's unreserved characters percent-encoded, as UTF-8. */
export function encodeStrict(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * RFC 6570 reserved expansion (`{+var}`): unreserved and reserved characters and percent-encoded
 * triples as they are, everything else encoded; `#`, `[` and `]` encoded too, as a query cannot
 * hold them.
 */
export function encodeReserved(value: string): string {
  return value.replace(/%[0-9A-Fa-f]{2}|[A-Za-z0-9\-._~:/?@!$&'()*+,;=]+|[^]/gu, (part) => (KEPT.test(part) ? part : encodeURIComponent(part)));
}

const KEPT = /^(?:%[0-9A-Fa-f]{2}|[A-Za-z0-9\-._~:/?@!$&'()*+,;=]+)$/;
