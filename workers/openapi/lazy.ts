/**
 * Modules loaded on first use. A worker must say `ready` fast: swagger-client's request builder
 * takes ~440 ms to load, undici ~115 ms, yaml ~50 ms, ajv with formats ~80 ms, and none of them
 * is needed to list tools from a JSON description. worker.ts warms them right after `ready`.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
import path from 'node:path';

function once<T>(load: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= load());
}

export const undici = once(() => require('undici') as typeof import('undici'));
export const yaml = once(() => require('yaml') as typeof import('yaml'));
export const ajv = once(() => ({
  Ajv: (require('ajv') as { default: typeof import('ajv').default }).default,
  addFormats: (require('ajv-formats') as { default: typeof import('ajv-formats').default }).default,
}));
export const swaggerBuildRequest = once(() => {
  const { buildRequest } = require('swagger-client/lib/execute/index.js') as { buildRequest: (options: Record<string, unknown>) => unknown };
  cachePathTemplateParses();
  return buildRequest;
});

/** Parses kept; templates repeat (one per operation), values substituted into them rarely do. */
const PARSE_CACHE_SIZE = 2048;

/**
 * swagger-client fills each path parameter by re-parsing the operation's path template with
 * openapi-path-templating's ABNF parser: about a third of an api worker's CPU per call. The
 * parse of a given string never changes and `resolve` only reads the result, so the parse is
 * memoised (bounded, oldest out first). Loaded from swagger-client's own resolution of the
 * package, so it is the copy the builder uses.
 */
function cachePathTemplateParses(): void {
  const from = path.dirname(require.resolve('swagger-client/lib/execute/index.js'));
  const entry = require.resolve('openapi-path-templating', { paths: [from] });
  const parseModule = require(path.join(path.dirname(entry), 'parse', 'index.cjs')) as { default: (template: string) => unknown };
  const parse = parseModule.default;
  const cache = new Map<string, unknown>();
  parseModule.default = (template: string) => {
    let parsed = cache.get(template);
    if (parsed === undefined) {
      parsed = parse(template);
      if (cache.size >= PARSE_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(template, parsed);
    }
    return parsed;
  };
}

/** Loads every lazy module now (after `ready`, so the first call does not pay for it). */
export function warmUp(): void {
  undici();
  swaggerBuildRequest();
  ajv();
}
