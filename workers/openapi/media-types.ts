import { follow, isObject, type Json, type JsonObject, type RefContext } from './refs';

/** JSON first (`application/json`, then any `+json`), then form, multipart, then the first listed. */
export function pickContentType(types: string[]): string {
  return (
    types.find((t) => t === 'application/json') ??
    // Not json-patch+json before the others: a JSON Patch is an array of operations, while the
    // descriptions that offer it beside merge patches (Kubernetes) give one object schema.
    types.find((t) => /^application\/([\w.-]+\+)?json/.test(t) && !/^application\/json-patch\+json/.test(t)) ??
    types.find((t) => /^application\/([\w.-]+\+)?json/.test(t)) ??
    types.find((t) => t === 'application/x-www-form-urlencoded') ??
    types.find((t) => t === 'multipart/form-data') ??
    types[0]
  );
}

/** A media range (`*\/*`, `application/*`): what a client may send, never a Content-Type itself. */
export function isMediaRange(type: string): boolean {
  return /^[\w.+-]+\/\*$|^\*\/\*$/.test(type.split(';')[0].trim());
}

/**
 * The operation with a request body declared only under a media range (Kubernetes' 292 create
 * and replace operations give `*\/*` with the object's schema) moved to `application/json`, so
 * that its properties are arguments and the request says what it carries: `Content-Type: *\/*`
 * is no media type, and a JSON object under it was a schemaless string the model had to write.
 * Only when the range is the body's chosen type (no JSON, form or multipart type beside it) and
 * its schema is an object or array. `operationUri` is the document the operation is written in.
 * A body in another document (a `$ref` into another file) is left as it is: copied into the
 * operation, its schema's own `$ref`s would resolve against the operation's file, not its own.
 */
export function withJsonForMediaRange(operation: JsonObject, ctx: RefContext, operationUri = ctx.rootUri): JsonObject {
  if (operation.requestBody === undefined) return operation;
  let requestBody: Json | undefined;
  let uri: string | undefined;
  try {
    ({ value: requestBody, uri } = follow(operation.requestBody, ctx, operationUri));
  } catch {
    return operation; // reported where the body is read (input-schema.ts)
  }
  if (uri !== operationUri || !isObject(requestBody) || !isObject(requestBody.content)) return operation;
  const types = Object.keys(requestBody.content);
  const chosen = types.length > 0 ? pickContentType(types) : undefined;
  if (chosen === undefined || !isMediaRange(chosen)) return operation;
  const media = requestBody.content[chosen];
  let schema: Json | undefined;
  try {
    schema = follow(isObject(media) ? media.schema : undefined, ctx, uri).value;
  } catch {
    return operation;
  }
  if (!isStructured(schema)) return operation;
  const content: JsonObject = {};
  for (const type of types) content[type === chosen ? 'application/json' : type] = requestBody.content[type];
  return { ...operation, requestBody: { ...requestBody, content } };
}

/** Whether a schema (its top level) describes an object or an array: something JSON carries. */
function isStructured(schema: Json | undefined): boolean {
  if (!isObject(schema)) return false;
  const type = schema.type;
  if (typeof type === 'string') return type === 'object' || type === 'array';
  if (Array.isArray(type)) return type.some((t) => t === 'object' || t === 'array') && !type.includes('string');
  return ['properties', 'additionalProperties', 'items', 'allOf', 'anyOf', 'oneOf'].some((key) => schema[key] !== undefined);
}

/**
 * Whether a body of this media type is bytes when no schema says otherwise (`application/octet-stream`,
 * `image/png`, `application/pdf`): any type but text, JSON, XML, YAML, form and multipart types
 * and media ranges, which are text or serialised from arguments.
 */
export function carriesBytes(type: string): boolean {
  const bare = type.split(';')[0].trim().toLowerCase();
  return !isMediaRange(bare) && !TEXTUAL.test(bare);
}

const TEXTUAL = /^text\/|^multipart\/|^application\/(x-www-form-urlencoded|javascript|ecmascript|graphql|sql|x-ndjson|x-yaml|yaml|csv|jwt)$|[/+](json|xml|yaml)$/;
