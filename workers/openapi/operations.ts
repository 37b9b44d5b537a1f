import { follow, isObject, UnloadedRefError, type Json, type JsonObject, type RefContext } from './refs';
import { extractResourceName, generateToolId } from './tool-id';
import { HEADER_NAME } from '../../protocol/http-headers';
import { withJsonForMediaRange } from './media-types';
import { kindOf, mergePathItem, METHOD_KEYS, pathItemLayers } from './path-item';

/** A parameter with its `$ref` followed (schema still raw). */
export interface RawParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie' | 'body' | 'formData';
  required?: boolean;
  description?: string;
  schema?: Json;
  [key: string]: Json | undefined;
}

/**
 * A parameter and the absolute URI of the document it is written in, against which the
 * relative `$ref`s inside it (its schema's) resolve: a parameter in `parameters/id.yaml` whose
 * schema names `../schemas/id.yaml` means the file beside `parameters/`, not beside the root.
 */
export interface LocatedParameter {
  param: RawParameter;
  /** undefined: the root of a description read from no location (inline, stdin). */
  uri: string | undefined;
}

/** One operation of the description, as read from it (spec 000's IOperation plus where it lives). */
export interface OperationEntry {
  toolId: string;
  /** Upper case. */
  method: string;
  path: string;
  operation: JsonObject;
  /**
   * Absolute URI of the document the operation is written in (its path item's, which a `$ref`
   * may put in another file; beside such a `$ref`, the referring item's): relative `$ref`s in it
   * (request body, responses) resolve against it.
   */
  uri: string | undefined;
  /** Path-level and operation-level parameters merged (the operation's win), refs followed. */
  parameters: LocatedParameter[];
  tags: string[];
  resourceName?: string;
}

/**
 * Every operation in document order. An operation that cannot be used (an unresolvable parameter
 * `$ref`, one into a document that could not be loaded, a parameter without name or location) is
 * left out and reported through `onSkip` with the reason and skipFields' fields; nothing is
 * dropped silently. Methods outside the seven HTTP methods are reported too.
 * A path item `$ref` with fields beside it is merged with what it names (path-item.ts); when it
 * cannot be followed, the path and each operation beside it are reported through `onSkip`.
 * An optional parameter that cannot be sent (see unsendable) is left out of its operation and
 * reported through `onProblem`; a required one skips the operation.
 */
export function collectOperations(ctx: RefContext, onSkip: (where: string, reason: string, fields?: Record<string, unknown>) => void, onProblem: (where: string, problem: string) => void = () => undefined): OperationEntry[] {
  const out: OperationEntry[] = [];
  const paths = ctx.root.paths as JsonObject;
  for (const [path, rawItem] of Object.entries(paths)) {
    // The Paths Object may carry `x-…` extensions; anything else not starting with `/` is no path.
    if (path.startsWith('x-')) continue;
    if (!path.startsWith('/')) {
      onSkip(path, 'a path must start with /');
      continue;
    }
    if (!isObject(rawItem)) {
      onSkip(path, `the path item is ${kindOf(rawItem)}, not an object`);
      continue;
    }
    // A `$ref` that cannot be followed loses what it names (reported here), not what is beside it.
    const { layers, broken } = pathItemLayers(rawItem, ctx);
    if (broken !== undefined) onSkip(path, skipReason(broken), skipFields(broken));
    const item = mergePathItem(layers, path, onProblem);
    for (const key of item.keys) {
      if (!(METHOD_KEYS as readonly string[]).includes(key) && !['parameters', 'summary', 'description', 'servers'].includes(key) && !key.startsWith('x-')) {
        // TRACE is a method of the Path Item Object, but spec 000's tool IDs and filters have seven.
        onSkip(`${key.toUpperCase()} ${path}`, key === 'trace' ? 'TRACE operations are not served (tool IDs take GET, POST, PUT, PATCH, DELETE, HEAD and OPTIONS)' : `'${key}' is not an HTTP method`);
      }
    }
    for (const method of METHOD_KEYS) {
      const found = item.operations.get(method);
      if (found === undefined) continue;
      const { operation, uri } = found;
      const where = `${method.toUpperCase()} ${path}`;
      if (!isObject(operation)) {
        onSkip(where, `the operation is ${kindOf(operation)}, not an object`);
        continue;
      }
      try {
        // What the `$ref` names may declare path-level parameters, required ones among them: as
        // for any operation that needs what could not be read, no tool rather than a partial one.
        if (broken !== undefined) throw broken;
        const parameters = mergeParameters([...item.parameters, { list: operation.parameters, uri }], ctx, (problem) => onProblem(where, problem));
        out.push({
          toolId: generateToolId(method, path),
          method: method.toUpperCase(),
          path,
          operation: withJsonForMediaRange(operation, ctx, uri),
          uri,
          parameters,
          tags: Array.isArray(operation.tags) ? operation.tags.filter((tag): tag is string => typeof tag === 'string') : [],
          resourceName: extractResourceName(path),
        });
      } catch (error) {
        onSkip(where, skipReason(error), skipFields(error));
      }
    }
  }
  return out;
}

/**
 * Path-level parameter lists, the farthest path item layer first, then the operation's; a later
 * one replaces an earlier of the same `in` and name. Each list is written in its own document
 * (`uri`), and each parameter keeps the one it is in (a `$ref` may move it to another file).
 */
function mergeParameters(lists: Array<{ list: Json | undefined; uri: string | undefined }>, ctx: RefContext, onProblem: (problem: string) => void): LocatedParameter[] {
  const merged = new Map<string, LocatedParameter>();
  for (const { list, uri: listUri } of lists) {
    if (!Array.isArray(list)) continue;
    for (const raw of list) {
      const { value: param, uri } = follow(raw, ctx, listUri);
      if (param === null || typeof param !== 'object' || Array.isArray(param)) throw new Error('a parameter is not an object');
      if (typeof param.name !== 'string' || typeof param.in !== 'string') throw new Error(`a parameter lacks 'name' or 'in'`);
      if (!['path', 'query', 'header', 'cookie', 'body', 'formData'].includes(param.in)) throw new Error(`parameter '${param.name}' has an unknown location '${param.in}'`);
      if (param.in === 'header' && ignoredHeader(param.name, ctx)) continue;
      const why = unsendable(param as RawParameter);
      if (why !== undefined) {
        if (param.required === true || param.in === 'path') throw new Error(why);
        onProblem(`parameter left out: ${why}`);
        continue;
      }
      merged.set(`${param.in}\u0000${param.name}`, { param: param as RawParameter, uri });
    }
  }
  return [...merged.values()];
}


/**
 * Why reading an operation failed, in the description's terms (for `operation skipped: …`). For
 * the log only: for a document that could not be loaded it says where and why (local paths,
 * private addresses).
 */
export function skipReason(error: unknown): string {
  if (error instanceof UnloadedRefError) return error.logDetail;
  if (error instanceof RangeError && /call stack/i.test(error.message)) return 'its schema nests too deep';
  if (error instanceof URIError) return `a $ref has a malformed %-escape (${error.message})`;
  return error instanceof Error ? error.message : String(error);
}

/** Log fields of a skip beside the reason: the ref, its document and the load's code, when one failed. */
export function skipFields(error: unknown): Record<string, unknown> {
  if (!(error instanceof UnloadedRefError)) return {};
  return { ref: error.ref, document: error.document.shown, code: error.code };
}

/** Why the request builder cannot send a parameter, or undefined when it can. */
function unsendable(param: RawParameter): string | undefined {
  // swagger-client keys parameters by name in plain objects, where `__proto__` sets the
  // prototype instead: the parameter vanished and `{__proto__}` went upstream unfilled.
  if (param.name === '__proto__') return `${param.in} parameter '__proto__' cannot be sent (the request builder drops that name)`;
  // undici refuses the request (UND_ERR_INVALID_ARG, reported as a network error) on every call that gives it.
  if (param.in === 'header' && !HEADER_NAME.test(param.name)) return `header parameter ${JSON.stringify(param.name)} is not a valid HTTP header name`;
  return undefined;
}

/** Headers that say how the message is framed or routed: never an argument's to set. */
const FRAMING_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect', 'proxy-connection']);

/**
 * Header parameters left out of tools: the framing headers above, and in OpenAPI 3 `Accept`,
 * `Content-Type` and `Authorization`, whose definitions the specification says SHALL be ignored
 * (the request body's media type and the configured auth set them).
 */
function ignoredHeader(name: string, ctx: RefContext): boolean {
  const lower = name.toLowerCase();
  return FRAMING_HEADERS.has(lower) || (!ctx.root.swagger && (lower === 'accept' || lower === 'content-type' || lower === 'authorization'));
}
