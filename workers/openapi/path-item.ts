/**
 * Path Item Objects whose `$ref` has fields beside it (`$ref: ./paths/pets.yaml` with a `post`
 * and `parameters` of its own). OpenAPI says the result is undefined when a field is in both the
 * referring and the referenced item. Decision: the two are merged, the referring item's fields
 * winning (they are written where the path is, the more specific); a field in both that is not
 * merged (an operation, `summary`, `description`) is reported, so that nothing is dropped without
 * a word. Each field keeps the document it is written in, against which its relative `$ref`s
 * resolve: an operation beside the `$ref` in the root's, one from `paths/pets.yaml` in that file's.
 */

import { isObject, LOOPING_CHAIN, MAX_REF_HOPS, refTarget, type Json, type JsonObject, type RefContext } from './refs';

export const METHOD_KEYS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;
export type MethodKey = (typeof METHOD_KEYS)[number];

/** The fields one document gives a path item: those beside a `$ref`, or those of its last target. */
export interface PathItemLayer {
  /** Its fields, `$ref` left out. */
  fields: JsonObject;
  /** The document they are written in. */
  uri: string | undefined;
  /** The `$ref` beside them, which names the next layer. */
  ref?: string;
}

export interface PathItemLayers {
  /** The item written in `paths` first, then the item each `$ref` names. */
  layers: PathItemLayer[];
  /**
   * Why the last layer's `$ref` could not be followed: UnloadedRefError, or `Error` for a ref that
   * does not resolve, names no object, or loops. The layers before it are read all the same.
   */
  broken?: unknown;
}

/** A path item with its layers merged: what collectOperations reads. */
export interface MergedPathItem {
  /** Each method's operation, from the nearest layer that has it, with that layer's document. */
  operations: Map<MethodKey, { operation: Json; uri: string | undefined }>;
  /** The path-level `parameters` of each layer, the farthest first, so that nearer ones win by `in` and name. */
  parameters: Array<{ list: Json | undefined; uri: string | undefined }>;
  /** Every field name of every layer, `$ref` aside. */
  keys: Set<string>;
}

/**
 * The layers of a path item (an object) written in `uri`: itself, then what its `$ref` names,
 * and so on while the target has a `$ref` of its own, up to MAX_REF_HOPS. Never throws: a `$ref`
 * that cannot be followed ends the layers and is returned as `broken`.
 */
export function pathItemLayers(item: JsonObject, ctx: RefContext, uri = ctx.rootUri): PathItemLayers {
  const layers: PathItemLayer[] = [];
  const seen = new Set<JsonObject>([item]);
  let node = item;
  let at = uri;
  for (;;) {
    const { $ref: ref, ...fields } = node;
    if (typeof ref !== 'string') {
      layers.push({ fields, uri: at });
      return { layers };
    }
    layers.push({ fields, uri: at, ref });
    let target: { value: Json; uri: string | undefined };
    try {
      target = refTarget(ref, ctx, at);
    } catch (error) {
      return { layers, broken: error };
    }
    if (!isObject(target.value)) return { layers, broken: new Error(`the path item is ${kindOf(target.value)}, not an object`) };
    if (seen.has(target.value) || layers.length >= MAX_REF_HOPS) return { layers, broken: new Error(LOOPING_CHAIN) };
    seen.add(target.value);
    node = target.value;
    at = target.uri;
  }
}

/**
 * The layers merged, the nearest winning. `onProblem(where, problem)` gets each operation given
 * in two layers (where: `METHOD /path`) and each differing `summary` or `description` (where: the
 * path). Other fields (`servers`, `x-…`) are not read for tools and are not reported.
 */
export function mergePathItem(layers: PathItemLayer[], path: string, onProblem: (where: string, problem: string) => void): MergedPathItem {
  const operations: MergedPathItem['operations'] = new Map();
  const texts = new Map<string, Json>();
  const keys = new Set<string>();
  layers.forEach(({ fields, uri }, depth) => {
    // The `$ref` of the layer before is the one that named this one.
    const named = `beside a $ref and in the path item '${layers[depth - 1]?.ref}' names (OpenAPI leaves which undefined)`;
    for (const [key, value] of Object.entries(fields)) {
      keys.add(key);
      if ((METHOD_KEYS as readonly string[]).includes(key)) {
        if (!operations.has(key as MethodKey)) operations.set(key as MethodKey, { operation: value, uri });
        else onProblem(`${key.toUpperCase()} ${path}`, `defined both ${named}; the one beside the $ref is used`);
      } else if (key === 'summary' || key === 'description') {
        if (!texts.has(key)) texts.set(key, value);
        else if (texts.get(key) !== value) onProblem(path, `'${key}' is given both ${named}; the one beside the $ref is kept`);
      }
    }
  });
  const parameters = layers.map(({ fields, uri }) => ({ list: fields.parameters, uri })).reverse();
  return { operations, parameters, keys };
}

/** What a JSON value is, for messages: `null`, `an array`, `a string`. */
export function kindOf(value: Json | undefined): string {
  if (value === null || value === undefined) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}
