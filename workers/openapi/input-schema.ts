import type { JsonObjectSchema } from '../../protocol/tool';
import type { LocatedParameter, OperationEntry, RawParameter } from './operations';
import { deref, follow, isObject, type Json, type JsonObject, type RefContext } from './refs';
import { asBase64Argument, isBinarySchema } from './binary';
import { normalise } from './normalise';
import { carriesBytes, pickContentType } from './media-types';

/** Where one argument of a tool goes in the upstream request. */
export type ArgumentTarget =
  | { kind: 'parameter'; in: 'path' | 'query' | 'header' | 'cookie'; name: string }
  /** A property of an object body (JSON, form-urlencoded, multipart; Swagger 2.0 formData too). */
  | { kind: 'bodyProperty'; name: string }
  /** The whole body, sent as it is (arrays, primitives, oneOf/anyOf, free-form objects). */
  | { kind: 'body' };

export interface BodyInfo {
  /** The media type sent: the first of `application/json`, a `+json` type, form, multipart, other. */
  contentType: string;
  required: boolean;
  /** How the body's arguments are given: spread properties or one `body` argument. */
  shape: 'object' | 'whole';
  /** Swagger 2.0: the name of the `in: body` parameter. */
  swaggerBodyName?: string;
  /** Swagger 2.0 formData parameters. */
  swaggerForm?: boolean;
  /** Multipart properties given as base64 and sent as file parts (binary.ts). */
  binaryProperties?: string[];
  /** The whole body is given as base64 and sent as bytes (binary.ts). */
  binaryBody?: boolean;
}

export interface InputSchemaResult {
  inputSchema: JsonObjectSchema;
  /** Argument name → target; the worker's private map, never in tools/list. */
  targets: Map<string, ArgumentTarget>;
  body?: BodyInfo;
}

const LOCATION_ORDER = ['path', 'query', 'header', 'cookie', 'formData', 'body'] as const;
const ARG_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * The input schema of an operation: always `type: "object"`, one property per parameter and per
 * property of an object request body, `$ref`s resolved, OpenAPI 3.0 `nullable` turned into a type
 * list, `readOnly` properties left out at every depth (normalise), a deprecated parameter marked
 * `deprecated: true`.
 *
 * Decisions (spec 000: "not shown"):
 * - Argument names are the parameter or property names. Characters outside `[A-Za-z0-9_.-]`
 *   (e.g. `filter[name]`) become `_`, because several clients reject other property keys.
 * - Same name in several locations: the first in the order path, query, header, cookie keeps the
 *   plain name; the others are `<location>_<name>` (`query_id`, `header_id`).
 * - A body property whose name a parameter already holds is `body_<name>`.
 * - A body that is not an object with properties (array, primitive, oneOf/anyOf, free-form
 *   object, also a form's), or whose properties come with `additionalProperties` (takesUndeclared),
 *   is one argument `body` (or `request_body` if a parameter is called `body`), sent as is.
 * - A further clash gets `_2`, `_3`, …. Each argument's description says where it goes.
 */
export function buildInputSchema(entry: OperationEntry, ctx: RefContext, onProblem?: (message: string) => void): InputSchemaResult {
  // Keyed by names from the description: without a prototype, and own keys only, so that
  // `constructor` or `__proto__` is an argument like any other, not taken or dropped.
  const properties: Record<string, Json> = Object.create(null);
  const required: string[] = [];
  const targets = new Map<string, ArgumentTarget>();
  const claim = (wanted: string, fallbacks: string[]): string => {
    for (const candidate of [wanted, ...fallbacks]) {
      const name = safeName(candidate);
      if (!Object.hasOwn(properties, name)) return name;
    }
    const base = safeName(fallbacks[fallbacks.length - 1] ?? wanted);
    for (let n = 2; ; n++) if (!Object.hasOwn(properties, `${base}_${n}`)) return `${base}_${n}`;
  };

  const params = [...entry.parameters].sort((a, b) => LOCATION_ORDER.indexOf(a.param.in) - LOCATION_ORDER.indexOf(b.param.in));
  let body: BodyInfo | undefined;
  let swaggerBody: LocatedParameter | undefined;
  const formParams: LocatedParameter[] = [];

  for (const located of params) {
    const { param } = located;
    if (param.in === 'body') {
      swaggerBody = located;
      continue;
    }
    if (param.in === 'formData') {
      formParams.push(located);
      continue;
    }
    // JSON Schema's `false` (OAS 3.1): no value is valid, so there is nothing to offer; as an
    // argument it read `{}`, any value, and went out.
    if (param.schema === false && !param.required && param.in !== 'path') continue;
    const arg = claim(param.name, [`${param.in}_${param.name}`]);
    const schema = nonEmpty(parameterSchema(located, ctx, onProblem), param);
    properties[arg] = describe(schema, param.description, `${param.in} parameter '${param.name}'`);
    // JSON Schema's own annotation, so a client can see that the parameter is on its way out.
    if (param.deprecated === true) (properties[arg] as JsonObject).deprecated = true;
    targets.set(arg, { kind: 'parameter', in: param.in as 'path' | 'query' | 'header' | 'cookie', name: param.name });
    if (param.required || param.in === 'path') required.push(arg);
  }

  // The body: OpenAPI 3 requestBody, Swagger 2.0 `in: body` or formData parameters.
  let bodySchema: Json | undefined;
  let bodyDescription: string | undefined;
  let untypedBytes = false;
  if (formParams.length > 0) {
    const consumes = (entry.operation.consumes ?? (ctx.root.consumes as Json)) as Json;
    const offered = Array.isArray(consumes) ? consumes : [];
    // Form before multipart, as for OpenAPI 3 bodies (pickContentType): multipart only when a
    // file needs it or it is all that `consumes` offers.
    const multipart = formParams.some(({ param }) => param.type === 'file') || (offered.includes('multipart/form-data') && !offered.includes('application/x-www-form-urlencoded'));
    body = { contentType: multipart ? 'multipart/form-data' : 'application/x-www-form-urlencoded', required: formParams.some(({ param }) => param.required), shape: 'object', swaggerForm: true };
    bodySchema = {
      type: 'object',
      properties: Object.fromEntries(formParams.map((p) => [p.param.name, describe(parameterSchema(p, ctx, onProblem), p.param.description, undefined)])),
      required: formParams.filter(({ param }) => param.required).map(({ param }) => param.name),
    };
  } else if (swaggerBody) {
    const consumes = (entry.operation.consumes ?? (ctx.root.consumes as Json)) as Json;
    const contentType = Array.isArray(consumes) && typeof consumes[0] === 'string' ? pickContentType(consumes as string[]) : 'application/json';
    const { param, uri } = swaggerBody;
    bodySchema = deref(param.schema, ctx, onProblem, uri);
    bodyDescription = param.description;
    body = { contentType, required: param.required === true, shape: 'object', swaggerBodyName: param.name };
  } else if (entry.operation.requestBody !== undefined) {
    // Its schema's relative refs are written in the body's document, which may be another file.
    const { value, uri } = follow(entry.operation.requestBody, ctx, entry.uri);
    const requestBody = value as JsonObject | undefined;
    const content = (requestBody?.content ?? {}) as JsonObject;
    const types = Object.keys(content);
    if (types.length > 0) {
      const contentType = pickContentType(types);
      const given = (content[contentType] as JsonObject | undefined)?.schema;
      bodySchema = deref(given, ctx, onProblem, uri) ?? {};
      // OAS 3.1 `application/octet-stream: {}`: content of any kind, so bytes (binary.ts).
      untypedBytes = carriesBytes(contentType) && (given === undefined || (isObject(bodySchema) && Object.keys(bodySchema).length === 0));
      bodyDescription = typeof requestBody?.description === 'string' ? requestBody.description : undefined;
      body = { contentType, required: requestBody?.required === true, shape: 'object' };
    }
  }

  let dependentRequired: Record<string, string[]> | undefined;
  if (body) {
    // A copy: objectProperties merges allOf into it, and normalised schemas are shared.
    let schema = { ...(normalise(bodySchema ?? {}) as JsonObject) };
    let props = objectProperties(schema);
    // JSON, form and multipart bodies are serialised from their values; any other type is sent as given.
    const serialised = /json|x-www-form-urlencoded|multipart\//i.test(body.contentType);
    if (!serialised && (props || schema.type === 'array')) {
      // An XML or CSV body described by an object or array schema: there is no serialiser for
      // it here, and JSON under that label is wrong data. The caller writes the document.
      schema = { type: 'string', description: `the ${body.contentType} document, sent as written` };
      props = undefined;
    }
    if (!props || (!body.swaggerForm && takesUndeclared(schema, props, body.contentType))) body.shape = 'whole';
    if (body.shape === 'object' && props) {
      const bodyRequired = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
      const bodyArgs: Array<{ arg: string; name: string }> = [];
      for (const [name, propSchema] of Object.entries(props)) {
        // A property whose schema is `false` must not be sent (as for parameters above).
        if (propSchema === false && !bodyRequired.has(name)) continue;
        const arg = claim(name, [`body_${name}`]);
        const binary = body.contentType === 'multipart/form-data' && isBinaryArgument(propSchema);
        if (binary) (body.binaryProperties ??= []).push(name);
        properties[arg] = describe(binary ? asBase64Argument(propSchema as JsonObject) : propSchema, undefined, arg === name ? undefined : `request body property '${name}'`);
        targets.set(arg, { kind: 'bodyProperty', name });
        bodyArgs.push({ arg, name });
        if (body.required && bodyRequired.has(name)) required.push(arg);
      }
      // An optional body still needs its required properties once any of it is given: with
      // `{scope}` alone, a form that requires client_id and client_secret went out without them.
      if (!body.required && bodyRequired.size > 0) {
        const needed = bodyArgs.filter((entry) => bodyRequired.has(entry.name)).map((entry) => entry.arg);
        const dependent = bodyArgs.length * needed.length <= MAX_DEPENDENT_NAMES ? eachNeedsAll(bodyArgs, needed) : allNeedFirst(bodyArgs, needed);
        if (Object.keys(dependent).length > 0) dependentRequired = dependent;
      }
    } else {
      const arg = claim('body', ['request_body']);
      if (!serialised && (isBinarySchema(schema) || untypedBytes)) body.binaryBody = true;
      const form = /x-www-form-urlencoded|multipart\//i.test(body.contentType);
      properties[arg] = body.binaryBody
        ? describe(asBase64Argument(schema), bodyDescription ?? `request body (${body.contentType}), sent as the decoded bytes`, undefined)
        : describe(schema, bodyDescription ?? `request body (${body.contentType}), ${form ? 'its properties the fields' : 'sent as it is'}`, undefined);
      targets.set(arg, { kind: 'body' });
      if (body.required) required.push(arg);
    }
  }

  const inputSchema: JsonObjectSchema = { type: 'object', properties: properties as Record<string, unknown> };
  if (required.length > 0) inputSchema.required = required;
  if (dependentRequired) inputSchema.dependentRequired = dependentRequired;
  return { inputSchema, targets, body };
}

/**
 * Names a `dependentRequired` that lists every required body property under every body property
 * may hold; past it, allNeedFirst. Why: that form grows with the product of the two counts: a
 * body of 1,000 properties, 500 of them required, was a 3.4 MB schema whose validator ran the api
 * worker out of memory, as it would have the supervisor.
 */
const MAX_DEPENDENT_NAMES = 4_096;

/** Each body argument needs every required one (a refusal names all that are missing). */
function eachNeedsAll(bodyArgs: Array<{ arg: string }>, needed: string[]): Record<string, string[]> {
  return Object.fromEntries(bodyArgs.map(({ arg }) => [arg, needed.filter((other) => other !== arg)]).filter(([, others]) => others.length > 0));
}

/**
 * The same constraint in as many names as there are arguments: each body argument needs the first
 * required one, which needs the rest. A call missing them is refused twice at most (first for the
 * first one, then for the rest).
 */
function allNeedFirst(bodyArgs: Array<{ arg: string }>, needed: string[]): Record<string, string[]> {
  const [first, ...rest] = needed;
  const dependent: Record<string, string[]> = Object.create(null);
  for (const { arg } of bodyArgs) if (arg !== first) dependent[arg] = [first];
  if (rest.length > 0) dependent[first] = rest;
  return dependent;
}

/**
 * Whether an object body takes names it does not declare, and so is one `body` argument (spread
 * arguments cannot hold a name nobody declared): a free-form object (no properties; a form
 * one unless `additionalProperties: false`, which takes nothing), or declared properties with
 * `additionalProperties` beside them. Decision for the latter: the whole body, its properties
 * listed inside, rather than a catch-all argument, which a model would have to guess to use;
 * rare (none in GitHub's, Stripe's or Kubernetes' descriptions). A multipart body with file
 * parts keeps its spread arguments, which decode them (binary.ts).
 */
function takesUndeclared(schema: JsonObject, props: JsonObject, contentType: string): boolean {
  const form = contentType === 'application/x-www-form-urlencoded' || contentType === 'multipart/form-data';
  const extras = schema.additionalProperties !== undefined && schema.additionalProperties !== false;
  if (Object.keys(props).length === 0) return !form || schema.additionalProperties !== false;
  return extras && !(contentType === 'multipart/form-data' && Object.values(props).some(isBinaryArgument));
}

/** A binary schema, or an array of them (several files in one part name). */
function isBinaryArgument(schema: Json): boolean {
  return isBinarySchema(schema) || (schema !== null && typeof schema === 'object' && !Array.isArray(schema) && schema.type === 'array' && isBinarySchema(schema.items));
}

/** The properties of an object schema (with allOf merged), or undefined when it is not one. */
function objectProperties(schema: JsonObject): JsonObject | undefined {
  if (schema.oneOf || schema.anyOf) return undefined;
  const type = schema.type;
  if (type !== undefined && type !== 'object' && !(Array.isArray(type) && type.includes('object') && type.length === 1)) return undefined;
  if (Array.isArray(schema.allOf)) {
    const merged: JsonObject = { ...((schema.properties as JsonObject) ?? {}) };
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    for (const part of schema.allOf) {
      if (!part || typeof part !== 'object' || Array.isArray(part)) return undefined;
      // A copy: normalised schemas are shared between tools (normalise), and this merges into it.
      const own = { ...part };
      const inner = objectProperties(own);
      if (!inner) return undefined;
      Object.assign(merged, inner);
      for (const name of (Array.isArray(own.required) ? own.required : []) as string[]) required.add(name);
    }
    schema.properties = merged;
    schema.required = [...required];
    delete schema.allOf;
    return merged;
  }
  if (schema.properties && typeof schema.properties === 'object' && !Array.isArray(schema.properties)) return schema.properties as JsonObject;
  return type === 'object' ? {} : undefined;
}

/**
 * A string parameter that cannot be empty says so (`minLength: 1`), so a model learns it from the
 * schema and the validator refuses `""`: a path one (an empty segment calls another endpoint),
 * and a required query one without `allowEmptyValue`, which the serialiser leaves out when empty
 * (OpenAPI: no empty values unless allowed), so `""` sent a request lacking it, as a success.
 */
function nonEmpty(schema: Json, param: RawParameter): Json {
  const mustHaveText = param.in === 'path' || (param.in === 'query' && param.required === true && param.allowEmptyValue !== true);
  if (!mustHaveText || schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  // A minLength given stands, but not 0 on a path parameter (AWS networkmanager): "" was listed
  // as valid, and the call refuses it.
  if (schema.minLength !== undefined && !(schema.minLength === 0 && param.in === 'path')) return schema;
  const isString = schema.type === 'string' || (Array.isArray(schema.type) && schema.type.includes('string'));
  return isString ? { ...schema, minLength: 1 } : schema;
}

/** The parameter's own `example` beside its schema's `pattern`, which normalise tests it against. */
function withExample(schema: Json, param: RawParameter): Json {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema) || typeof schema.pattern !== 'string') return schema;
  const example = param.example ?? param['x-example'];
  return example === undefined || schema.example !== undefined ? schema : { ...schema, example: example as Json };
}

/** The parameter's schema, its refs resolved against the document the parameter is written in. */
function parameterSchema({ param, uri }: LocatedParameter, ctx: RefContext, onProblem?: (message: string) => void): Json {
  if (param.schema !== undefined) return normalise(withExample(deref(param.schema, ctx, onProblem, uri) ?? {}, param));
  if (param.content && typeof param.content === 'object' && !Array.isArray(param.content)) {
    const first = Object.values(param.content)[0] as JsonObject | undefined;
    return normalise(deref(first?.schema, ctx, onProblem, uri) ?? {});
  }
  // Swagger 2.0: the schema keywords sit on the parameter itself.
  const out: JsonObject = {};
  for (const key of ['type', 'format', 'items', 'enum', 'default', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'uniqueItems', 'multipleOf', 'x-example']) {
    if (param[key] !== undefined) out[key] = deref(param[key], ctx, onProblem, uri) as Json;
  }
  // A file upload: bytes, given as base64 (binary.ts).
  if (out.type === 'file') Object.assign(out, { type: 'string', format: 'binary' });
  return normalise(out);
}

function describe(schema: Json, description: string | undefined, where: string | undefined): Json {
  const base: JsonObject = schema && typeof schema === 'object' && !Array.isArray(schema) ? { ...schema } : {};
  const text = [description ?? (typeof base.description === 'string' ? base.description : undefined), where ? `(${where})` : undefined].filter(Boolean).join(' ');
  if (text) base.description = text;
  return base;
}

function safeName(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64);
  return ARG_NAME.test(safe) ? safe : 'arg';
}

/**
 * A tool description that says first that the operation is deprecated (`deprecated: true`),
 * unless its own text already starts by saying so: a model picks tools by their descriptions.
 */
export function markDeprecated(description: string, operation: JsonObject): string {
  if (operation.deprecated !== true || /^\W*deprecated\b/i.test(description)) return description;
  return `Deprecated. ${description}`;
}
