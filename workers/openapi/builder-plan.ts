import { isObject, type Json, type JsonObject } from './refs';
import { oas3ParameterBuilders, type ParameterBuilder } from './lazy';
import { formCookie, needsOwnQuery, type StyledParameter } from './serialize';
import { compileTemplate, type PathParameter, type PathTemplate } from './path-template';
import { formKind } from './form-body';

/** What request.ts needs of a plan beside swagger-client's builder; made once per plan. */
export interface BuilderPlan {
  /**
   * The spec the builder gets: the operation under the path `''` (so its URL is the base URL
   * and its query: the path is filled by path-template.ts), without its path parameters, the
   * query parameters serialize.ts writes, and (OpenAPI 3) parameter schemas.
   */
  builderSpec: JsonObject;
  /** Query parameters serialize.ts writes (allowReserved, space- and pipe-delimited, deepObject; Swagger 2.0 pipes), by name. */
  ownQuery: Map<string, StyledParameter>;
  template: PathTemplate;
  pathParameters: Map<string, PathParameter>;
  /** The key of a parameter's value in the builder's `parameters` (see parameterKeys). */
  keyOf(location: string, name: string): string;
  /**
   * Swagger 2.0 header and formData arrays, by `<in>\0<name>`: the separator of their
   * collectionFormat, for request.ts to join them with. The builder joined header arrays with `,`
   * whatever the format, and wrote ssv and tsv multipart parts with a literal `%20` or `%09`.
   */
  swaggerSeparators: Map<string, string>;
  /**
   * OpenAPI 3 query, header and cookie parameters described by `content`, by `<in>\0<name>`: the
   * media type, for request.ts to write the value as its text (serialize.ts contentText) before
   * the builder, which then sends that text as it is.
   */
  contentTypes: Map<string, string>;
}

const SEPARATORS: Record<string, string> = { csv: ',', ssv: ' ', tsv: '\t', pipes: '|' };

const plans = new WeakMap<JsonObject, BuilderPlan>();

/** The builder plan of a request plan's spec (one path, one operation: request.ts planSpec). */
export function builderPlan(spec: JsonObject): BuilderPlan {
  let made = plans.get(spec);
  if (made) return made;
  const ownQuery = new Map<string, StyledParameter>();
  const pathParameters = new Map<string, PathParameter>();
  const swaggerSeparators = new Map<string, string>();
  const contentTypes = new Map<string, string>();
  const [route, methods] = Object.entries(spec.paths as JsonObject)[0];
  const kept: JsonObject = {};
  const queryNames = new Set<string>();
  for (const [method, operation] of Object.entries(methods as JsonObject)) {
    const parameters = (operation as JsonObject).parameters;
    for (const p of Array.isArray(parameters) ? parameters : []) if (isObject(p) && p.in === 'query' && typeof p.name === 'string') queryNames.add(p.name);
    const builderParameters = (Array.isArray(parameters) ? parameters : []).filter((p) => {
      if (!isObject(p)) return true;
      if (spec.swagger && (p.in === 'header' || p.in === 'formData') && p.type === 'array') swaggerSeparators.set(`${p.in}\0${p.name}`, SEPARATORS[String(p.collectionFormat ?? 'csv')] ?? ',');
      if (!spec.swagger && isObject(p.content)) contentTypes.set(`${p.in}\0${p.name}`, Object.keys(p.content)[0] ?? '');
      if (p.in === 'path') {
        pathParameters.set(p.name as string, p as unknown as PathParameter);
        return false;
      }
      // Swagger 2.0 `pipes` query arrays: the builder left the `|` raw, which a query may not
      // hold (RFC 3986) and strict servers such as Tomcat refuse; written as pipeDelimited, `%7C`.
      if (spec.swagger && p.in === 'query' && p.type === 'array' && p.collectionFormat === 'pipes') {
        ownQuery.set(p.name as string, { name: p.name as string, style: 'pipeDelimited', explode: false });
        return false;
      }
      if (spec.swagger || p.in !== 'query' || !needsOwnQuery(p as unknown as StyledParameter)) return true;
      ownQuery.set(p.name as string, p as unknown as StyledParameter);
      return false;
    });
    // Without schemas: the builder reads a parameter's schema only to run JSON.parse on a string
    // value when the schema also allows an object or array (its UI takes JSON text), and a string
    // argument must stay that string (`filter: "{\"a\":1}"` went out as `?a=1`).
    // Without `default`s: the builder sent a parameter's `default` (Swagger 2.0's, or one written
    // beside an OpenAPI 3 schema) in place of one not given, `?page=1&sort=created` the model
    // never asked for. The default is what the server assumes when none is sent (Swagger 2.0,
    // Parameter Object), as OpenAPI 3 calls already went.
    kept[method] = { ...(operation as JsonObject), parameters: builderParameters.map((p) => withoutDefault(spec.swagger ? p : withoutSchema(p))) };
    const requestBody = (operation as JsonObject).requestBody;
    if (isObject(requestBody) && isObject(requestBody.content)) (kept[method] as JsonObject).requestBody = { ...requestBody, content: bareFormTypes(requestBody.content) };
  }
  const keys = parameterKeys(Object.values(kept).flatMap((operation) => (operation as JsonObject).parameters as Json[]));
  const keyOf = (location: string, name: string) => keys.get(`${location}\0${name}`) ?? `${location}.${name}`;
  made = { builderSpec: { ...spec, paths: { '': kept } }, ownQuery, template: compileTemplate(withoutTemplatedQuery(route, queryNames)), pathParameters, keyOf, swaggerSeparators, contentTypes };
  plans.set(spec, made);
  return made;
}

/**
 * `route` without the `name={name}` pairs of its own query whose `name` is a query parameter of
 * the operation, which is then sent as any other query parameter (or left out when not given).
 * Medium's `/search/tags?query={query}` and its other such operations (APIs.guru) were
 * refused on every call: no path parameter fills `{query}`.
 */
export function withoutTemplatedQuery(route: string, queryNames: ReadonlySet<string>): string {
  const query = route.indexOf('?');
  if (query < 0 || queryNames.size === 0) return route;
  const hash = route.indexOf('#', query);
  const end = hash < 0 ? route.length : hash;
  const pairs = route.slice(query + 1, end).split('&');
  const kept = pairs.filter((pair) => {
    const templated = /^([^=]+)=\{([^{}]+)\}$/.exec(pair);
    return !(templated && templated[1] === templated[2] && queryNames.has(templated[2]));
  });
  if (kept.length === pairs.length) return route;
  return `${route.slice(0, query)}${kept.length > 0 ? `?${kept.join('&')}` : ''}${route.slice(end)}`;
}

/**
 * Where the builder finds each parameter's value: it reads `parameters[name]` first, then
 * `parameters['<in>.<name>']`, so keyed by `<in>.<name>` alone a parameter named `query.x`
 * took query `x`'s value. A name no other parameter has, and that is no other's `<in>.<name>`,
 * is its own key; any other is keyed `<in>.<name>`. (Query `x`, header `x` and query `query.x`
 * together would still meet; no description seen has such names.)
 */
function parameterKeys(parameters: Json[]): Map<string, string> {
  const named = parameters.filter(isObject).map((p) => ({ location: String(p.in), name: String(p.name) }));
  const counts = new Map<string, number>();
  for (const { name } of named) counts.set(name, (counts.get(name) ?? 0) + 1);
  const qualified = new Set(named.map(({ location, name }) => `${location}.${name}`));
  return new Map(named.map(({ location, name }) => [`${location}\0${name}`, counts.get(name) === 1 && !qualified.has(name) ? name : `${location}.${name}`]));
}

/**
 * A body's media types with `multipart/form-data; charset=utf-8` (and the like) also under the
 * bare type, which request.ts passes: the builder writes form-data only for that exact string,
 * and sent a JSON object under the full one. undici writes the boundary.
 */
function bareFormTypes(content: JsonObject): JsonObject {
  const out: JsonObject = { ...content };
  for (const [type, media] of Object.entries(content)) if (formKind(type) === 'multipart' && out['multipart/form-data'] === undefined) out['multipart/form-data'] = media;
  return out;
}

function withoutDefault(parameter: Json): Json {
  if (!isObject(parameter) || parameter.default === undefined) return parameter;
  const { default: _default, ...rest } = parameter;
  return rest;
}

function withoutSchema(parameter: Json): Json {
  if (!isObject(parameter) || parameter.schema === undefined) return parameter;
  const { schema: _schema, ...rest } = parameter;
  return rest;
}

let builders: Record<string, ParameterBuilder> | undefined;

/**
 * swagger-client's OpenAPI 3 parameter builders, with its cookie builder made to add to the
 * `Cookie` header (the builder's own sets it, so of several cookie parameters only the last was
 * sent) and array and object cookies written by serialize.ts formCookie.
 */
export function parameterBuilders(): Record<string, ParameterBuilder> {
  if (builders) return builders;
  const own = oas3ParameterBuilders();
  const cookie: ParameterBuilder = (options) => {
    const before = options.req.headers?.Cookie;
    const pairs = formCookie(options.parameter as StyledParameter, options.value);
    if (pairs === undefined) own.cookie(options);
    else if (pairs !== '') (options.req.headers ??= {}).Cookie = pairs;
    const after = options.req.headers?.Cookie;
    if (typeof before === 'string' && before !== '' && after !== before) options.req.headers!.Cookie = `${before}; ${String(after)}`;
  };
  return (builders = { ...own, cookie });
}

const accepts = new WeakMap<JsonObject, string | undefined>();

/**
 * The `accept` header swagger-client's OpenAPI 3 builder derives from the media types of the 2xx
 * responses (oas3/build-request.js, joined with ", "), derived here once per plan and passed as
 * `responseContentType`, which the builder then uses as it is: deriving it on every call cost
 * ~3 µs, a sixth of the builder's time. Swagger 2.0 plans (`produces`) are left to the builder.
 */
export function acceptOf(spec: JsonObject): string | undefined {
  if (spec.swagger) return undefined;
  if (accepts.has(spec)) return accepts.get(spec);
  const types: string[] = [];
  for (const methods of Object.values(spec.paths as JsonObject)) {
    for (const operation of Object.values(methods as JsonObject)) {
      const responses = (operation as JsonObject).responses;
      if (!isObject(responses)) continue;
      for (const [code, response] of Object.entries(responses)) {
        const status = parseInt(code, 10);
        const content = isObject(response) ? response.content : undefined;
        // Not push(...keys): a description's list as call arguments can overflow the stack.
        if (status >= 200 && status < 300 && isObject(content)) for (const type of Object.keys(content)) types.push(type);
      }
    }
  }
  // Each type once: several 2xx responses often share them (Kubernetes listed three twice).
  const accept = types.length > 0 ? [...new Set(types)].join(', ') : undefined;
  accepts.set(spec, accept);
  return accept;
}
