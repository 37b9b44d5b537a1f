import { McpvisorError } from '../../protocol/errors';
import { isObject, type Json, type JsonObject } from './refs';

/**
 * Binary arguments. Tool arguments are JSON, so bytes come as base64: a request body property of
 * a multipart body whose schema is binary (`format: binary`, Swagger 2.0 `type: file`, or an
 * OpenAPI 3.1 `contentMediaType` without `contentEncoding`) becomes a file part, and a whole body
 * of a non-JSON type with such a schema (`application/octet-stream`), or of a non-text type
 * without a schema (3.1's `application/octet-stream: {}`, `image/png: {}`), is sent as the bytes.
 * input-schema.ts marks these arguments `contentEncoding: base64` and says so in their description.
 * Decision: base64 and not the text as it is, because any bytes must be sendable (an image, a
 * zip), and base64 is how MCP itself carries bytes (image content, blob resources).
 */

/** Whether a (normalised) schema describes raw bytes. */
export function isBinarySchema(schema: Json | undefined): boolean {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return false;
  if (schema.format === 'binary' || schema.type === 'file') return true;
  return typeof schema.contentMediaType === 'string' && schema.contentEncoding === undefined;
}

/** A binary schema as the tool shows it: a base64 string (an array of them for an array of files). */
export function asBase64Argument(schema: JsonObject): JsonObject {
  if (schema.type === 'array' && isBinarySchema(schema.items)) return { ...schema, items: asBase64Argument(schema.items as JsonObject) };
  const { format: _format, contentMediaType: _media, ...rest } = schema;
  const description = [typeof rest.description === 'string' ? rest.description : undefined, 'Binary content, base64-encoded.'].filter(Boolean).join(' ');
  return { ...rest, type: 'string', contentEncoding: 'base64', description };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The bytes of a binary argument, given as base64 (whitespace allowed); BAD_INPUT naming it otherwise. */
export function bytesOf(arg: string, value: unknown): Buffer | unknown {
  if (typeof value !== 'string') return value;
  const compact = value.replace(/\s+/g, '');
  if (!BASE64.test(compact)) throw new McpvisorError('BAD_INPUT', `argument '${arg}' must be base64 (binary content): it is not`);
  return Buffer.from(compact, 'base64');
}

/**
 * A binary body property as a file part, or an array of them: named after the property (servers
 * take a part with a file name for a file upload), typed by its Encoding Object's `contentType`.
 */
export function fileOf(arg: string, name: string, value: unknown, type: string): unknown {
  if (Array.isArray(value)) return value.map((item, i) => fileOf(`${arg}[${i}]`, name, item, type));
  const bytes = bytesOf(arg, value);
  return Buffer.isBuffer(bytes) ? new File([new Uint8Array(bytes)], name, { type }) : bytes;
}

/** The `contentType` a body's Encoding Object gives the part `name` (its first, when a list); else octet-stream. */
export function partType(spec: JsonObject, contentType: string, name: string): string {
  for (const methods of Object.values(spec.paths as JsonObject)) {
    for (const operation of Object.values(methods as JsonObject)) {
      const content = isObject(operation) && isObject(operation.requestBody) ? operation.requestBody.content : undefined;
      const media = isObject(content) ? content[contentType] : undefined;
      const encoding = isObject(media) && isObject(media.encoding) ? media.encoding[name] : undefined;
      const type = isObject(encoding) ? encoding.contentType : undefined;
      if (typeof type === 'string' && type.trim() !== '') return type.split(',')[0].trim();
    }
  }
  return 'application/octet-stream';
}
