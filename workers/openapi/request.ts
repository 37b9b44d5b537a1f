import { McpvisorError } from '../../protocol/errors';
import type { ArgumentTarget, BodyInfo } from './input-schema';
import type { OperationEntry } from './operations';
import { deref, followObject, type Json, type JsonObject, type RefContext } from './refs';
import { swaggerBuildRequest } from './lazy';
import { HEADER_VALUE } from '../../protocol/http-headers';
import { contentText, serializeQuery } from './serialize';
import { acceptOf, builderPlan, parameterBuilders } from './builder-plan';
import { fillTemplate } from './path-template';
import { bytesOf, fileOf, partType } from './binary';
import { bodyEncodings, formKind, formUrlEncoded, mediaType, multipartValues } from './form-body';
import { formEncoding } from './form-encoding';

/** A request ready for undici. */
export interface BuiltRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer | FormData;
}

/** What request building needs of a tool; built once per tool, on its first call. */
export interface RequestPlan {
  spec: JsonObject;
  targets: Map<string, ArgumentTarget>;
  body?: BodyInfo;
}

/**
 * A one-operation description for swagger-client's builder: the operation with its parameters
 * and body resolved, under the synthetic operationId `op` (GitHub's `issues/create`-style ids are
 * not found by the builder, and a small spec keeps it fast).
 */
export function requestPlan(entry: OperationEntry, ctx: RefContext, targets: Map<string, ArgumentTarget>, body: BodyInfo | undefined): RequestPlan {
  return { spec: planSpec(entry, ctx), targets, body };
}

/**
 * The spec of requestPlan, plain JSON (compiled.ts stores it). It keeps only what the builder
 * reads (swagger-client lib/execute: index.js, oas3/ and swagger2/build-request.js): the
 * parameters whole (style, explode, schema type, default), the request body's media types and
 * their `encoding`, Swagger 2.0 `consumes`/`produces`, and of `responses` only the media types of
 * 2xx responses, which the builder joins into the `accept` header. Body and response schemas,
 * descriptions and examples are left out: GitHub's plans are ~10x smaller for it. Each `$ref`
 * resolves against the document it is written in (entry.uri, a parameter's, a body's, …).
 */
export function planSpec(entry: OperationEntry, ctx: RefContext): JsonObject {
  const op = entry.operation;
  const parameters = entry.parameters.map(({ param, uri }) => {
    const { description: _unused, ...rest } = deref(param as unknown as Json, ctx, undefined, uri) as JsonObject;
    return rest;
  });
  const operation: JsonObject = { operationId: 'op', parameters };
  if (op.consumes !== undefined) operation.consumes = deref(op.consumes, ctx, undefined, entry.uri) as Json;
  if (op.produces !== undefined) operation.produces = deref(op.produces, ctx, undefined, entry.uri) as Json;
  const requestBody = followObject(op.requestBody, ctx, entry.uri);
  const content = requestBody?.value.content;
  if (content && typeof content === 'object' && !Array.isArray(content)) {
    const types: JsonObject = {};
    for (const [type, media] of Object.entries(content)) {
      const followed = followObject(media, ctx, requestBody.uri);
      const given = followed?.value.encoding === undefined ? undefined : (deref(followed.value.encoding, ctx, undefined, followed.uri) as JsonObject);
      const encoding = followed && /^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i.test(type) ? formEncoding(followed.value.schema, given, ctx, followed.uri) : given;
      types[type] = encoding === undefined ? {} : { encoding };
    }
    operation.requestBody = { content: types };
  }
  const responses = followObject(op.responses, ctx, entry.uri);
  if (responses) {
    const kept: JsonObject = {};
    for (const [code, raw] of Object.entries(responses.value)) {
      const status = parseInt(code, 10);
      const media = status >= 200 && status < 300 ? followObject(raw, ctx, responses.uri)?.value.content : undefined;
      if (media && typeof media === 'object' && !Array.isArray(media)) kept[code] = { content: Object.fromEntries(Object.keys(media).map((type) => [type, {}])) };
    }
    operation.responses = kept;
  }
  const paths = { [entry.path]: { [entry.method.toLowerCase()]: operation } };
  if (!ctx.root.swagger) return { openapi: ctx.root.openapi as string, paths };
  const spec: JsonObject = { swagger: '2.0', paths };
  if (ctx.root.consumes != null) spec.consumes = ctx.root.consumes;
  if (ctx.root.produces != null) spec.produces = ctx.root.produces;
  return spec;
}

/**
 * Builds the upstream request from validated arguments with swagger-client's `buildRequest`
 * (query style/explode, headers, cookies, JSON and multipart bodies); the path is filled by
 * path-template.ts, form-urlencoded bodies by form-body.ts, some query styles by serialize.ts.
 * The URL is `baseUrl` + the templated path: decision, `apiBaseUrl` replaces the description's
 * `servers` (3.x) and `host`/`basePath` (2.0), as in the reference. A result outside `baseUrl`
 * (a path argument that tries to leave it) throws BLOCKED; a path segment that comes out empty,
 * `.` or `..` throws BAD_INPUT. Errors of the builder (a missing required parameter) are BAD_INPUT.
 */
export function buildUpstreamRequest(plan: RequestPlan, args: Record<string, unknown>, baseUrl: string): BuiltRequest {
  const { builderSpec, ownQuery, template, pathParameters, keyOf, swaggerSeparators, contentTypes } = builderPlan(plan.spec);
  // Without a prototype: the builder reads `parameters[name]` first, and a parameter named
  // `constructor` or `toString` found Object.prototype's function there and sent its source.
  const parameters: Record<string, unknown> = Object.create(null);
  const bodyProps: Record<string, unknown> = Object.create(null);
  const pathValues = new Map<string, unknown>();
  const query: string[] = [];
  let accept: string | undefined;
  let contentType: { arg: string; value: string } | undefined;
  let wholeBody: unknown;
  let hasBody = false;
  for (const [arg, value] of Object.entries(args)) {
    const target = plan.targets.get(arg);
    if (!target || value === undefined) continue;
    // Percent-encoding and form parts write UTF-8, which has no form for half a character: the
    // builder sent U+FFFD in its place, silently (a path argument was refused already).
    const encoded = target.kind === 'parameter' ? target.in !== 'header' : target.kind === 'bodyProperty' && plan.body !== undefined && /form-urlencoded|multipart\//i.test(plan.body.contentType);
    if (encoded && hasLoneSurrogate(value)) throw new McpvisorError('BAD_INPUT', `argument '${arg}' has a lone UTF-16 surrogate, which ${target.kind === 'parameter' ? 'a URL' : 'a form body'} cannot carry`);
    if (target.kind === 'parameter') {
      if (target.in === 'path') {
        // An empty segment would call another endpoint (`/items/` for `/items/{id}`).
        if (value === '' || value === '.' || value === '..') throw new McpvisorError('BAD_INPUT', `path argument '${arg}' may not be empty, '.' or '..'`);
        if (value !== null) pathValues.set(target.name, value);
        continue;
      }
      if (target.in === 'header' && typeof value === 'string' && !HEADER_VALUE.test(value)) {
        throw new McpvisorError('BAD_INPUT', `header argument '${arg}' has a line break, a control character or a character beyond Latin-1, which HTTP headers cannot carry`);
      }
      // Swagger 2.0 offers these as arguments (OpenAPI 3 says to ignore them): the caller's choice wins.
      if (target.in === 'header' && plan.spec.swagger && /^accept$/i.test(target.name)) accept = String(value);
      if (target.in === 'header' && plan.spec.swagger && /^content-type$/i.test(target.name)) contentType = { arg, value: String(value) };
      // Described by `content`: the value's text in that media type (`[]` too), sent as it is.
      const content = contentTypes.get(`${target.in}\0${target.name}`);
      if (content !== undefined) {
        parameters[keyOf(target.in, target.name)] = contentText(content, value);
        continue;
      }
      // An empty list or map is undefined in RFC 6570 (3.2.1): the parameter is left out. The
      // builder sent `?v=` for one unexploded (an empty value, not no value).
      if (target.in === 'query' && isEmptyContainer(value)) continue;
      const own = target.in === 'query' ? ownQuery.get(target.name) : undefined;
      if (own) {
        const pairs = withMalformedAs(arg, () => serializeQuery(own, value));
        if (pairs !== undefined) query.push(pairs);
      } else {
        const separator = target.in === 'header' && Array.isArray(value) ? swaggerSeparators.get(`header\0${target.name}`) : undefined;
        parameters[keyOf(target.in, target.name)] = separator !== undefined ? (value as unknown[]).map(String).join(separator) : value;
      }
    }
    else if (target.kind === 'bodyProperty') {
      bodyProps[target.name] = plan.body?.binaryProperties?.includes(target.name) ? fileOf(arg, target.name, value, partType(plan.spec, plan.body.contentType, target.name)) : value;
      hasBody = true;
    } else {
      wholeBody = plan.body?.binaryBody ? bytesOf(arg, value) : value;
      hasBody = true;
    }
  }
  const argOf = (name: string) => [...plan.targets].find(([, t]) => t.kind === 'parameter' && t.in === 'path' && t.name === name)?.[0] ?? name;
  const path = fillTemplate(template, pathParameters, pathValues, Boolean(plan.spec.swagger), argOf);
  const body = plan.body;
  // A required body is sent even when none of its (optional) properties was given: `{}`.
  const requestBody = body?.shape === 'whole' ? wholeBody : hasBody || body?.required ? bodyProps : undefined;
  if (body?.swaggerBodyName !== undefined && requestBody !== undefined) parameters[keyOf('body', body.swaggerBodyName)] = requestBody;
  if (body?.swaggerForm) {
    const multipart = /^multipart\//i.test(body.contentType);
    for (const [name, value] of Object.entries(bodyProps)) {
      // Multipart ssv and tsv parts joined here (the builder wrote `x%20y`); form-urlencoded ones are right.
      const separator = multipart && Array.isArray(value) ? swaggerSeparators.get(`formData\0${name}`) : undefined;
      parameters[keyOf('formData', name)] = separator === ' ' || separator === '\t' ? (value as unknown[]).map(String).join(separator) : value;
    }
  }
  const base = parsedBase(baseUrl);
  if (base.search !== '') {
    // A query parameter left out that the base URL sets (compiled.ts makes it optional): the
    // builder refuses a required one without a value, so it gets the base's, which goes out once.
    for (const [arg, target] of plan.targets) {
      if (target.kind !== 'parameter' || target.in !== 'query' || args[arg] !== undefined || ownQuery.has(target.name)) continue;
      const value = base.queryValues.get(target.name);
      if (value !== undefined) parameters[keyOf('query', target.name)] = value;
    }
  }
  // OpenAPI 3 form bodies: written here, or handed to the builder safe from its JSON.parse (form-body.ts).
  const form = plan.spec.swagger || body === undefined ? undefined : formKind(body.contentType);
  if (requestBody !== undefined && body !== undefined && /^multipart\//i.test(mediaType(body.contentType)) && mediaType(body.contentType) !== 'multipart/form-data') {
    // Decision: refused. Parts of multipart/related or mixed are told apart by position and
    // their own headers, not by form-data names; sent as form-data they would be another type.
    throw new McpvisorError('BAD_INPUT', `cannot build the request: a ${mediaType(body.contentType)} body cannot be written here (only multipart/form-data is)`);
  }
  let formBody: string | undefined;
  if (form === 'urlencoded' && requestBody !== undefined) {
    // A whole body given as a string is taken as the form text written out.
    formBody = isPlainObject(requestBody) ? formUrlEncoded(requestBody, bodyEncodings(plan.spec, body!.contentType)) : typeof requestBody === 'string' ? requestBody : String(requestBody ?? '');
  }
  const builderBody = form === 'urlencoded' ? undefined : form === 'multipart' && isPlainObject(requestBody) ? multipartValues(requestBody, bodyEncodings(plan.spec, body!.contentType)) : requestBody;

  let req: { url: string; method: string; headers: Record<string, string>; body?: unknown };
  try {
    req = swaggerBuildRequest()({
      spec: builderSpec,
      operationId: 'op',
      parameters,
      requestBody: plan.spec.swagger ? undefined : builderBody,
      // The bare type: the builder compares it with the description's as it is (builder-plan.ts).
      requestContentType: form === 'multipart' ? 'multipart/form-data' : body?.contentType,
      // Given, it is sent as it is, where the builder put its `produces` over it.
      responseContentType: accept ?? acceptOf(plan.spec),
      baseURL: base.origin + base.path,
      ...(plan.spec.swagger ? {} : { parameterBuilders: parameterBuilders() }),
    }) as typeof req;
  } catch (error) {
    throw new McpvisorError('BAD_INPUT', `cannot build the request: ${(error as Error).message}`);
  }
  const url = checkUrl(withQuery(withPath(req.url, base.origin + base.path, path), base.search, query), baseUrl);

  const headers: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(req.headers ?? {})) {
    if (value === undefined) continue;
    const text = String(value);
    if (!HEADER_VALUE.test(text)) {
      throw new McpvisorError('BAD_INPUT', `the value for header '${name}' has a line break, a control character or a character beyond Latin-1, which HTTP headers cannot carry`);
    }
    headers[name.toLowerCase()] = text;
  }
  let out: BuiltRequest['body'];
  if (formBody !== undefined) {
    out = formBody;
    headers['content-type'] = body!.contentType;
  } else if (req.body instanceof FormData) {
    // undici writes the boundary itself.
    delete headers['content-type'];
    out = withoutBlobNames(req.body, isPlainObject(requestBody) ? requestBody : bodyProps);
  } else if (req.body !== undefined && req.body !== null) {
    const type = headers['content-type'] ?? '';
    if (typeof req.body === 'string' && !/json/i.test(type)) out = req.body;
    else if (Buffer.isBuffer(req.body)) out = req.body;
    else out = JSON.stringify(req.body);
    if (!headers['content-type']) headers['content-type'] = 'application/json';
  } else if (body?.shape === 'whole' && hasBody && wholeBody !== undefined) {
    // A body given as null, "", 0 or false, which the builder drops as if none were given: the
    // JSON literal (`null`, `""`, `0`, `false`), or for a text type the text itself (empty).
    out = /json/i.test(body.contentType) ? JSON.stringify(wholeBody) : String(wholeBody ?? '');
    headers['content-type'] = body.contentType;
  } else {
    // No body given (an optional one): a content type without one makes strict servers answer 400.
    delete headers['content-type'];
  }
  if (contentType !== undefined && out !== undefined) givenContentType(contentType, headers, out);
  return { method: req.method, url, headers, body: out };
}

/**
 * A Swagger 2.0 `Content-Type` argument replaces the type the body is sent under when it names
 * the same kind of body (JSON for JSON, form for form, any other for text or bytes, which go as
 * written): the body is written for its own type, so `application/xml` over a JSON body would be
 * wrong data, and is BAD_INPUT. For multipart/form-data undici's own, with the boundary, stays.
 * Without a body there is no Content-Type to send.
 */
function givenContentType(given: { arg: string; value: string }, headers: Record<string, string>, body: NonNullable<BuiltRequest['body']>): void {
  const kind = (type: string) => (/json/.test(type) ? 'json' : type === 'application/x-www-form-urlencoded' ? 'form' : type.startsWith('multipart/') ? 'multipart' : 'other');
  const sent = body instanceof FormData ? 'multipart/form-data' : headers['content-type'] ?? '';
  if (kind(mediaType(given.value)) !== kind(mediaType(sent)) || (body instanceof FormData && mediaType(given.value) !== 'multipart/form-data')) {
    throw new McpvisorError('BAD_INPUT', `header argument '${given.arg}' (${given.value}) does not fit the body, which is written as ${mediaType(sent)}`);
  }
  if (!(body instanceof FormData)) headers['content-type'] = given.value;
}

/** The normalised URL; BLOCKED unless it has the origin of `baseUrl` and stays under its path. */
export function checkUrl(url: string, baseUrl: string): string {
  const target = new URL(url);
  const base = parsedBase(baseUrl);
  const basePath = base.path;
  if (target.origin !== base.origin || !(target.pathname === basePath || target.pathname.startsWith(`${basePath}/`) || basePath === '')) {
    throw new McpvisorError('BLOCKED', `the request would leave the API base URL ${base.origin}${basePath}`);
  }
  return target.href;
}

/** The last base URL parsed: a worker has one, read twice per call. */
let lastBase: { url: string; origin: string; path: string; search: string; queryValues: Map<string, string> } | undefined;

/** A base URL's origin, path (no trailing slash) and query (`?api-version=1`, or ''). */
function parsedBase(baseUrl: string): { origin: string; path: string; search: string; queryValues: Map<string, string> } {
  if (lastBase?.url !== baseUrl) {
    const base = new URL(baseUrl);
    // Each name's first value, decoded: parsed once, not on every call.
    const queryValues = new Map<string, string>();
    for (const [name, value] of base.searchParams) if (!queryValues.has(name)) queryValues.set(name, value);
    lastBase = { url: baseUrl, origin: base.origin, path: base.pathname.replace(/\/+$/, ''), search: base.search, queryValues };
  }
  return lastBase;
}

/**
 * The builder's URL (the base, for the builder fills no path, and its query) with the filled
 * path put in; a query in the path template comes before the builder's.
 */
function withPath(url: string, base: string, path: string): string {
  const rest = url.slice(base.length);
  return `${base}${path}${path.includes('?') && rest.startsWith('?') ? `&${rest.slice(1)}` : rest}`;
}

/**
 * `url` with the base URL's own query first (an Azure-style `?api-version=…`; the builder, given
 * the base without it, would have put the operation's path inside it), then the builder's query,
 * then the parameters serialised here. A name the request sets drops the base's pairs of that
 * name, as swagger-client's serializeRequest does: `?api-version=1&api-version=2024` made
 * services that read the first value use the base's.
 */
function withQuery(url: string, baseSearch: string, own: string[]): string {
  if (baseSearch === '' && own.length === 0) return url;
  const at = url.indexOf('?');
  const request = [at < 0 ? '' : url.slice(at + 1), ...own].filter((part) => part !== '');
  let base = baseSearch.slice(1);
  if (base !== '' && request.length > 0) {
    const set = new Set(request.join('&').split('&').map(queryName));
    base = base.split('&').filter((pair) => pair !== '' && !set.has(queryName(pair))).join('&');
  }
  const parts = [base, ...request].filter((part) => part !== '');
  return `${at < 0 ? url : url.slice(0, at)}${parts.length > 0 ? `?${parts.join('&')}` : ''}`;
}

/** The decoded name of a `name=value` query pair (`+` a space, as form decoding reads it). */
function queryName(pair: string): string {
  const name = pair.split('=', 1)[0].replace(/\+/g, ' ');
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/**
 * The builder's form with its typed parts (an Encoding Object's `contentType`: a JSON object, a
 * CSV text) made parts without a file name: it wrote them as files named `blob`
 * (`filename="blob"`), so multer refused the request ("Unexpected field") and Starlette and
 * Spring's `@RequestParam` took the value for an upload. RFC 7578 4.2: a file name is for the
 * content of a file. Files, the parts of binary properties (binary.ts, among `given`), keep
 * the property's name.
 * undici writes no `filename` for a file whose name is empty.
 */
function withoutBlobNames(form: FormData, given: Record<string, unknown>): FormData {
  const files = new Set<unknown>(Object.values(given).flat());
  let typed = false;
  form.forEach((value) => {
    typed ||= value instanceof Blob && !files.has(value);
  });
  if (!typed) return form;
  const out = new FormData();
  form.forEach((value, name) => out.append(name, value instanceof Blob && !files.has(value) ? new File([value], '', { type: value.type }) : value));
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `serialize` run; a lone surrogate (which no URL can carry) is BAD_INPUT naming the argument. */
function withMalformedAs<T>(arg: string, serialize: () => T): T {
  try {
    return serialize();
  } catch (error) {
    if (error instanceof URIError) throw new McpvisorError('BAD_INPUT', `argument '${arg}' has a lone UTF-16 surrogate, which a URL cannot carry`);
    throw error;
  }
}

/** Whether a string in `value` (nested in arrays and objects, walked without recursion) has a lone UTF-16 surrogate. */
function hasLoneSurrogate(value: unknown): boolean {
  const stack = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next === 'string') {
      if (!(next as string & { isWellFormed(): boolean }).isWellFormed()) return true;
    } else if (next !== null && typeof next === 'object' && !(next instanceof Uint8Array)) {
      for (const key in next) stack.push(key, (next as Record<string, unknown>)[key]);
    }
  }
  return false;
}

function isEmptyContainer(value: unknown): boolean {
  return Array.isArray(value) ? value.length === 0 : value !== null && typeof value === 'object' && !(value instanceof Uint8Array) && Object.keys(value).length === 0;
}
