import { McpvisorError } from '../../protocol/errors';
import { isObject, type JsonObject } from './refs';
import { contentText, encodeStrict, serializeQuery } from './serialize';

/**
 * OpenAPI 3 form bodies. swagger-client's builder runs `JSON.parse` on every property of a form
 * or multipart body (it serves a UI where people type JSON), so `"12345678901234567890"` went
 * out rounded, `"1E10"` as `10000000000` and `"\"Ann\""` as `Ann`. Tool arguments are JSON
 * values already: each is sent as it is. `application/x-www-form-urlencoded` is written here;
 * multipart still goes through the builder, its values wrapped so that its parse gives them back.
 */

/** A media type without its parameters, lower-cased: `application/x-www-form-urlencoded; charset=utf-8` → `application/x-www-form-urlencoded`. */
export function mediaType(contentType: string): string {
  return contentType.split(';', 1)[0].trim().toLowerCase();
}

/** Which form a request body media type is, its parameters (`; charset=utf-8`) aside. */
export function formKind(contentType: string): 'urlencoded' | 'multipart' | undefined {
  const type = mediaType(contentType);
  return type === 'application/x-www-form-urlencoded' ? 'urlencoded' : type === 'multipart/form-data' ? 'multipart' : undefined;
}

/**
 * An `application/x-www-form-urlencoded` body, each property by its Encoding Object:
 * - `style`, `explode` or `allowReserved` given: as a query parameter of that style
 *   (serialize.ts; an empty string is sent, `name=`);
 * - `contentType` alone: the value as that type's text (serialize.ts contentText: JSON for a
 *   JSON type, a string too, `id=%22abc%22` as OpenAPI's own example has it; for another type a
 *   string as written, anything else as JSON);
 * - neither: a primitive as its text, an array one pair per item (style form's default), an
 *   object as JSON.
 * Decision: `null` is left out, as it is in a query (the builder sent the text `null`).
 * A lone UTF-16 surrogate is BAD_INPUT naming the property.
 */
export function formUrlEncoded(values: Record<string, unknown>, encodings: JsonObject | undefined): string {
  const pairs: string[] = [];
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || value === null) continue;
    const encoding = isObject(encodings?.[name]) ? (encodings![name] as JsonObject) : {};
    let written: string | undefined;
    try {
      written = formPair(name, value, encoding);
    } catch (error) {
      if (error instanceof URIError) throw new McpvisorError('BAD_INPUT', `body property '${name}' has a lone UTF-16 surrogate, which a form body cannot carry`);
      throw error;
    }
    if (written !== undefined) pairs.push(written);
  }
  return pairs.join('&');
}

/** One property's `name=value` pairs, or undefined when nothing is sent. */
function formPair(name: string, value: unknown, encoding: JsonObject): string | undefined {
  if (encoding.style !== undefined || encoding.explode !== undefined || encoding.allowReserved !== undefined) {
    const style = typeof encoding.style === 'string' ? encoding.style : 'form';
    const explode = typeof encoding.explode === 'boolean' ? encoding.explode : style === 'form';
    return serializeQuery({ name, style, explode, allowReserved: encoding.allowReserved === true, allowEmptyValue: true }, value);
  }
  if (typeof encoding.contentType === 'string') return `${encodeStrict(name)}=${encodeStrict(contentText(encoding.contentType, value))}`;
  if (Array.isArray(value)) return serializeQuery({ name, style: 'form', explode: true, allowEmptyValue: true }, value);
  return `${encodeStrict(name)}=${encodeStrict(typeof value === 'object' ? JSON.stringify(value) : String(value))}`;
}

/**
 * Multipart values for the builder: each as its JSON text, which the builder's `JSON.parse`
 * turns back into the value given (a string stays that string); files as they are. `null` is
 * left out, as in a form-urlencoded body. An object, and each object of an array, whose
 * Encoding Object (in `encodings`) names no type or style is a part typed `application/json`,
 * OpenAPI's default for objects (Spring's `@RequestPart` refuses a JSON part without it); the
 * builder sent untyped text. Decision: by the value, so an object given where the schema also
 * allows a string (`oneOf`) is typed too. These parts have no file name (request.ts).
 * Decision: an Encoding Object's `headers` are not sent. RFC 7578 4.8 allows no part header in
 * multipart/form-data but Content-Type, Content-Disposition and Content-Transfer-Encoding
 * (receivers must ignore others), and the description gives no value to send.
 */
export function multipartValues(values: Record<string, unknown>, encodings: JsonObject | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || value === null) continue;
    const own = isObject(encodings?.[name]) ? (encodings![name] as JsonObject) : undefined;
    if (isFileLike(value)) out[name] = value;
    // A type and no style: typed parts written here, one per item of an array (RFC 7578 4.3, as
    // OpenAPI says, each item under the type); the builder wrote one part of the whole array,
    // `a,b` or `[{…},{…}]`, a string under a JSON type as it is, an object as `[object Object]`.
    else if (typeof own?.contentType === 'string' && own.style === undefined && own.explode === undefined && own.allowReserved === undefined) {
      const type = own.contentType;
      const parts = (Array.isArray(value) ? value : [value]).filter((item) => item != null).map((item) => typedPart(item, type));
      if (parts.length > 0) out[name] = parts;
    }
    else if (isPlainObject(value) && own?.contentType === undefined && own?.style === undefined && own?.explode === undefined) out[name] = jsonPart(value);
    // An array's encoding is style form, explode true unless the description says otherwise (form-encoding.ts).
    else if (Array.isArray(value) && value.length > 0 && value.every(isPlainObject) && own?.contentType === undefined && (own?.style ?? 'form') === 'form' && own?.explode !== false) out[name] = value.map(jsonPart);
    else out[name] = JSON.stringify(value);
  }
  return out;
}

function jsonPart(value: unknown): File {
  return new File([JSON.stringify(value)], '', { type: 'application/json' });
}

/** A part of `value` as the text of `contentType` (its first type, when a list), without a file name (request.ts). */
function typedPart(value: unknown, contentType: string): File {
  const type = contentType.split(',')[0].trim();
  return new File([contentText(type, value)], '', { type });
}

function isPlainObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Blob);
}

function isFileLike(value: unknown): boolean {
  return value instanceof Blob || (Array.isArray(value) && value.some((item) => item instanceof Blob));
}

/** The Encoding Object map of the plan's request body media type `contentType`, if any. */
export function bodyEncodings(spec: JsonObject, contentType: string): JsonObject | undefined {
  for (const methods of Object.values(spec.paths as JsonObject)) {
    for (const operation of Object.values(methods as JsonObject)) {
      const content = isObject(operation) && isObject(operation.requestBody) ? operation.requestBody.content : undefined;
      const media = isObject(content) ? content[contentType] : undefined;
      if (isObject(media) && isObject(media.encoding)) return media.encoding;
    }
  }
  return undefined;
}
