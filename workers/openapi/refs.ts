/**
 * The fast local `$ref` pass used to build tools: JSON pointers inside the description and into
 * documents it references (files or URLs relative to it, fetched once by load-spec.ts before this
 * pass). Cycles are cut where they close with a schema that accepts anything and says so, so a
 * recursive model never loops. Decision: this replaces swagger-client's `resolve()` on the startup
 * path (1.4 s on GitHub's description); requests are still built by swagger-client's builder from
 * the operation this pass resolves.
 */

import { fileURLToPath } from 'node:url';
import { McpvisorError, type ErrorCode } from '../../protocol/errors';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** The root document and the external documents it references, by absolute URI. */
export interface RefContext {
  root: JsonObject;
  /** Absolute URI of the root (file:// or http(s)://), for relative external refs. */
  rootUri?: string;
  external: Map<string, Json>;
  /** External documents that could not be loaded, by absolute URI; absent when none failed. */
  unloaded?: Map<string, UnloadedDocument>;
}

/**
 * An external document load-spec.ts could not load. Decision (spec 000 is silent): it does not
 * fail the description; whatever needs a `$ref` into it fails instead (UnloadedRefError), so an
 * operation that needs it is skipped and the others still become tools.
 */
export interface UnloadedDocument {
  /** NOT_FOUND, NETWORK_ERROR, BLOCKED, or BAD_INPUT (not JSON or YAML, too large, a scheme not followed). */
  code: ErrorCode;
  /** Why, for the log only: it may name local paths and private addresses. */
  reason: string;
  /** The document as logs show it (shownUri). */
  shown: string;
  /** The document whose `$ref` first named it, shown the same way. */
  from: string;
}

/**
 * Thrown where a `$ref` leads into an unloaded document: what needs its target cannot be built.
 * `code` is the load's. The message names the ref only, as it can reach the model
 * (get-api-endpoint-schema); `logDetail` adds where the ref is written and why its document failed,
 * which may name local paths and private addresses, for the log only.
 */
export class UnloadedRefError extends McpvisorError {
  readonly ref: string;
  readonly document: UnloadedDocument;
  readonly logDetail: string;

  constructor(ref: string, writtenIn: string | undefined, document: UnloadedDocument) {
    super(document.code, `$ref '${ref}' names a document that could not be loaded`, { data: { ref } });
    this.ref = ref;
    this.document = document;
    this.logDetail = `$ref '${ref}' in ${shownUri(writtenIn) ?? 'the description'}: ${document.shown} could not be loaded (${document.reason})`;
  }
}

/**
 * A document's URI as logs show it: a path for a `file:` URL, else the URL without its user name
 * and password (a relative ref inherits them from the description's URL).
 */
export function shownUri(uri: string | undefined): string | undefined {
  if (uri === undefined) return undefined;
  try {
    if (uri.startsWith('file:')) return fileURLToPath(uri);
    const url = new URL(uri);
    if (url.username === '' && url.password === '') return uri;
    url.username = '';
    url.password = '';
    return url.href;
  } catch {
    return uri;
  }
}

/** The unloaded document a ref written in `baseUri` points into, if it is one. */
export function unloadedTarget(ref: string, baseUri: string | undefined, ctx: RefContext): UnloadedDocument | undefined {
  if (ctx.unloaded === undefined || ctx.unloaded.size === 0) return undefined;
  const uri = refDocument(ref, baseUri);
  return uri === undefined ? undefined : ctx.unloaded.get(uri);
}

interface Located {
  value: Json | undefined;
  uri: string | undefined;
}

/** Decodes one JSON pointer (`#/components/schemas/A~1B`) against `doc`; undefined when absent. */
export function resolvePointer(doc: Json, pointer: string): Json | undefined {
  if (pointer === '' || pointer === '/') return pointer === '' ? doc : (doc as JsonObject)?.[''];
  if (!pointer.startsWith('/')) return undefined;
  let node: Json | undefined = doc;
  for (const raw of pointer.slice(1).split('/')) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined; // a broken %-escape (`%E0%A4%A`): unresolvable, reported as such
    }
    if (node === null || typeof node !== 'object') return undefined;
    node = Array.isArray(node) ? node[Number(key)] : node[key];
    if (node === undefined) return undefined;
  }
  return node;
}

/** The absolute URI of the document a ref points into (undefined = the root document). */
export function refDocument(ref: string, baseUri: string | undefined): string | undefined {
  const hash = ref.indexOf('#');
  const target = hash === -1 ? ref : ref.slice(0, hash);
  if (target === '') return baseUri;
  try {
    return new URL(target, baseUri ?? 'file:///').href;
  } catch {
    return undefined;
  }
}

function locate(ref: string, baseUri: string | undefined, ctx: RefContext): Located {
  const uri = refDocument(ref, baseUri);
  const doc = uri === undefined || uri === ctx.rootUri ? ctx.root : ctx.external.get(uri);
  const hash = ref.indexOf('#');
  const pointer = hash === -1 ? '' : ref.slice(hash + 1);
  return { value: doc === undefined ? undefined : resolvePointer(doc, pointer), uri: uri ?? ctx.rootUri };
}

/** Most `$ref`s one chain may take (follow, path-item.ts). */
export const MAX_REF_HOPS = 32;

/** Why a `$ref` chain was given up: the message follow() throws. */
export const LOOPING_CHAIN = `a $ref chain loops (or is longer than ${MAX_REF_HOPS} hops)`;

/**
 * The target of one `$ref` written in `baseUri`, with the document it is in. Throws
 * UnloadedRefError for a ref into an unloaded document, `Error` naming the ref when it cannot be
 * resolved otherwise.
 */
export function refTarget(ref: string, ctx: RefContext, baseUri: string | undefined): { value: Json; uri: string | undefined } {
  const found = locate(ref, baseUri, ctx);
  if (found.value === undefined) {
    const unloaded = unloadedTarget(ref, baseUri, ctx);
    throw unloaded ? new UnloadedRefError(ref, baseUri, unloaded) : new Error(`unresolvable $ref '${ref}'`);
  }
  return { value: found.value, uri: found.uri };
}

/**
 * Follows `$ref`s at the top of `node` only (a parameter, a request body), up to MAX_REF_HOPS.
 * Throws as refTarget does, and `Error` (LOOPING_CHAIN) when the chain loops.
 */
export function follow(node: Json | undefined, ctx: RefContext, baseUri = ctx.rootUri): { value: Json | undefined; uri: string | undefined } {
  let current: Json | undefined = node;
  let uri = baseUri;
  for (let hops = 0; hops < MAX_REF_HOPS; hops++) {
    if (!isRef(current)) return { value: current, uri };
    ({ value: current, uri } = refTarget(current.$ref, ctx, uri));
  }
  throw new Error(LOOPING_CHAIN);
}

/**
 * The object a node (written in `uri`) or its `$ref` chain leads to, with the document it is in;
 * undefined for anything else or a broken ref.
 */
export function followObject(node: Json | undefined, ctx: RefContext, uri: string | undefined): { value: JsonObject; uri: string | undefined } | undefined {
  try {
    const found = follow(node, ctx, uri);
    return isObject(found.value) ? { value: found.value, uri: found.uri } : undefined;
  } catch {
    return undefined;
  }
}

/** Objects one deref may write before it writes `$ref`s out to a limited depth only. */
export const DEREF_NODE_BUDGET = 4_096;

/** Thrown inside derefWithin when the budget is spent. */
const SPENT = Symbol('deref budget spent');

/**
 * A deep copy of `node` with every `$ref` replaced by its target. A ref met again inside itself
 * becomes `{ description: 'recursive reference to <ref>' }`. Unresolvable refs become
 * `{ description: 'unresolved reference <ref>' }` and are reported through `onProblem`; a ref into
 * an unloaded document throws UnloadedRefError instead (its target is not known to be wrong, only
 * unknown, and a tool that takes anything there would send what the API may refuse).
 * Results of refs without a cycle inside are shared (treat the output as read-only). The
 * result depends only on its arguments, never on what was written out before (see CachedRef).
 *
 * Written out, refs can make a tree of exponential size: Microsoft Graph's entities reference
 * each other through navigation properties, so that one request body came to 114 MB and the
 * description never finished loading. When the copy would pass `budget` objects, refs are
 * written out to the deepest nesting that stays within it (at least one level), and a ref below
 * is `{ type, description: '<ref>: not written out …' }`. schema-budget.ts then cuts the
 * listing to its size as for any large schema.
 */
export function deref(node: Json | undefined, ctx: RefContext, onProblem?: (message: string) => void, baseUri = ctx.rootUri, budget = DEREF_NODE_BUDGET): Json | undefined {
  const whole = derefWithin(node, ctx, baseUri, Infinity, budget);
  if (whole !== SPENT) return reported(whole, onProblem);
  let kept = derefWithin(node, ctx, baseUri, 1, Infinity) as Written;
  // Deeper while it fits; done when nothing was left out for depth.
  for (let depth = 2; kept.limited; depth++) {
    const deeper = derefWithin(node, ctx, baseUri, depth, budget);
    if (deeper === SPENT) break;
    kept = deeper;
  }
  return reported(kept, onProblem);
}

interface Written {
  value: Json | undefined;
  problems: string[];
  /** Some ref was left out for depth. */
  limited: boolean;
}

function reported(written: Written, onProblem: ((message: string) => void) | undefined): Json | undefined {
  for (const problem of written.problems) onProblem?.(problem);
  return written.value;
}

/**
 * A ref written out whole (no cut inside), kept per description. Why the costs: a hit returned
 * the whole target for free, past the depth limit and the node budget, so the same schema came
 * out deeper after other lookups had warmed the cache (get-api-endpoint-schema answered one
 * endpoint 11 KB in a fresh worker and 848 KB later). A hit now spends what walking would and
 * is used only where walking would not cut, so it gives what walking gives, only faster.
 */
interface CachedRef {
  value: Json;
  /** Objects written for it (spent on a hit). */
  objects: number;
  /** Refs nested inside one another in it, itself included (a hit deeper than maxDepth allows walks instead). */
  height: number;
  /** Unresolved refs met inside, reported again on a hit. */
  problems: string[];
}

/** deref with at most `maxDepth` refs written out inside one another; SPENT past `budget` objects. */
function derefWithin(node: Json | undefined, ctx: RefContext, baseUri: string | undefined, maxDepth: number, budget: number): Written | typeof SPENT {
  const cache = derefCache(ctx);
  const stack: string[] = [];
  const problems: string[] = [];
  let cut = 0;
  let limited = false;
  let written = 0;
  /** The most refs on the stack so far (within the ref being written out, see below). */
  let deepest = 0;
  const spend = (objects = 1) => {
    written += objects;
    if (written > budget) throw SPENT;
  };
  const walk = (value: Json | undefined, uri: string | undefined): Json | undefined => {
    if (value === null || typeof value !== 'object') return value;
    spend();
    if (Array.isArray(value)) return value.map((item) => walk(item, uri) as Json);
    if (typeof value.$ref === 'string') {
      const ref = value.$ref;
      const key = `${refDocument(ref, uri) ?? ''}#${ref.slice(ref.indexOf('#') + 1)}`;
      const cached = cache.get(key);
      if (cached !== undefined && stack.length + cached.height <= maxDepth) {
        spend(cached.objects);
        problems.push(...cached.problems);
        deepest = Math.max(deepest, stack.length + cached.height);
        return cached.value;
      }
      // Cut or not: the schema depends on the document all the same.
      const unloaded = unloadedTarget(ref, uri, ctx);
      if (unloaded) throw new UnloadedRefError(ref, uri, unloaded);
      const recursive = stack.includes(key);
      if (recursive || stack.length >= maxDepth) {
        cut++;
        if (!recursive) limited = true;
        const target = locate(ref, uri, ctx).value as JsonObject | undefined;
        const out: JsonObject = { description: recursive ? `recursive reference to ${ref}` : `${ref}: not written out (nested too deep to list)` };
        if (target && typeof target === 'object' && typeof target.type === 'string') return { type: target.type, ...out };
        return out;
      }
      const found = locate(ref, uri, ctx);
      if (found.value === undefined) {
        problems.push(`unresolved reference ${ref}`);
        return { description: `unresolved reference ${ref}` };
      }
      const cutsBefore = cut;
      const writtenBefore = written;
      const problemsBefore = problems.length;
      const deepestOutside = deepest;
      stack.push(key);
      deepest = stack.length;
      const resolved = walk(found.value, found.uri);
      stack.pop();
      const height = deepest - stack.length;
      deepest = Math.max(deepestOutside, deepest);
      // Sibling keywords of a $ref (3.1) win over the target's.
      const siblings = Object.keys(value).filter((k) => k !== '$ref');
      const out = siblings.length > 0 && resolved && typeof resolved === 'object' && !Array.isArray(resolved)
        ? { ...resolved, ...Object.fromEntries(siblings.map((k) => [k, walk(value[k], uri) as Json])) }
        : resolved;
      if (cut === cutsBefore && siblings.length === 0 && out !== undefined) {
        cache.set(key, { value: out, objects: written - writtenBefore, height, problems: problems.slice(problemsBefore) });
      }
      return out;
    }
    const out: JsonObject = {};
    for (const [key, inner] of Object.entries(value)) {
      // `example(s)` can be huge and never matter for a tool's arguments, except to test the
      // schema's `pattern` against (normalise.ts, refusesOwnValues).
      if (((key === 'example' || key === 'examples') && typeof value.pattern !== 'string') || key === 'x-github') continue;
      // A property named `__proto__` would set the copy's prototype: defined as data instead.
      if (key === '__proto__') Object.defineProperty(out, key, { value: walk(inner, uri), enumerable: true, writable: true, configurable: true });
      else out[key] = walk(inner, uri) as Json;
    }
    return out;
  };
  try {
    const value = walk(node, baseUri);
    return { value, problems, limited };
  } catch (error) {
    if (error === SPENT) return SPENT;
    throw error;
  }
}

const caches = new WeakMap<RefContext, Map<string, CachedRef>>();
function derefCache(ctx: RefContext): Map<string, CachedRef> {
  let cache = caches.get(ctx);
  if (!cache) caches.set(ctx, (cache = new Map()));
  return cache;
}

/** A JSON object (not null, not an array). */
export function isObject(value: Json | undefined): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function isRef(node: Json | undefined): node is JsonObject & { $ref: string } {
  return node !== null && typeof node === 'object' && !Array.isArray(node) && typeof node.$ref === 'string';
}

/** Every external document URI a node references, relative to `baseUri`. */
export function externalRefs(node: Json, baseUri: string | undefined, out = new Set<string>()): Set<string> {
  const stack: Json[] = [node];
  while (stack.length > 0) {
    const value = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      // One by one: spreading a 150,000-item enum into push() overflows the call stack.
      for (const item of value) stack.push(item);
      continue;
    }
    if (typeof value.$ref === 'string' && !value.$ref.startsWith('#')) {
      const uri = refDocument(value.$ref, baseUri);
      if (uri !== undefined && uri !== baseUri) out.add(uri);
    }
    for (const inner of Object.values(value)) if (inner !== null && typeof inner === 'object') stack.push(inner);
  }
  return out;
}
