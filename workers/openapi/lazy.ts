/**
 * Modules loaded on first use. A worker must say `ready` fast, and none of these is needed to list
 * tools from a JSON description: worker.ts warms them when the supervisor asks, once the whole
 * server has started. The calls' own dependencies (undici, swagger-client's request builder,
 * ajv) come from the build's one-file bundle of them (scripts/bundle.js), or from the packages
 * when there is none (the sources, in unit tests). From ~1,500 files they took ~355 ms to load
 * and ~41 MB of RSS; bundled, ~175 ms and ~27 MB (2-core development machine). yaml (~50 ms)
 * is read before `ready`, for YAML descriptions only, and stays out of the bundle so that a start
 * never compiles the bundle.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
import { existsSync } from 'node:fs';
import path from 'node:path';

function once<T>(load: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= load());
}

/** The exports of dist/workers/openapi/deps.bundle.js: each part is initialised on first read. */
interface Deps {
  readonly undici: typeof import('undici');
  /** Ajv for JSON Schema 2020-12. */
  readonly ajv: { Ajv: typeof import('ajv/dist/2020').default; addFormats: typeof import('ajv-formats').default };
  readonly buildRequest: (options: Record<string, unknown>) => unknown;
  /** The builder's own OpenAPI 3 parameter builders (one per `in`), to wrap one of them. */
  readonly oas3ParameterBuilders: Record<string, ParameterBuilder>;
  /** openapi-path-templating's parse module, as the builder requires it. */
  readonly pathTemplateParser: { default: (template: string) => unknown };
}

const deps = once((): Deps => {
  const bundle = path.join(__dirname, 'deps.bundle.js');
  if (existsSync(bundle)) return require(bundle) as Deps;
  return {
    get undici() {
      return require('undici') as Deps['undici'];
    },
    get ajv() {
      return {
        Ajv: (require('ajv/dist/2020') as { default: Deps['ajv']['Ajv'] }).default,
        addFormats: (require('ajv-formats') as { default: Deps['ajv']['addFormats'] }).default,
      };
    },
    get buildRequest() {
      return (require('swagger-client/lib/execute/index.js') as { buildRequest: Deps['buildRequest'] }).buildRequest;
    },
    get oas3ParameterBuilders() {
      return require('swagger-client/lib/execute/oas3/parameter-builders.js') as Deps['oas3ParameterBuilders'];
    },
    get pathTemplateParser() {
      const from = path.dirname(require.resolve('swagger-client/lib/execute/index.js'));
      const entry = require.resolve('openapi-path-templating', { paths: [from] });
      return require(path.join(path.dirname(entry), 'parse', 'index.cjs')) as Deps['pathTemplateParser'];
    },
  };
});

/** One of swagger-client's parameter builders: writes one parameter's value into `req`. */
export type ParameterBuilder = (options: { req: { headers?: Record<string, unknown> }; parameter: unknown; value: unknown; [key: string]: unknown }) => void;

export const undici = once(() => deps().undici);
export const yaml = once(() => require('yaml') as typeof import('yaml'));
export const ajv = once(() => deps().ajv);
export const swaggerBuildRequest = once(() => {
  memoise(deps().pathTemplateParser);
  return deps().buildRequest;
});
export const oas3ParameterBuilders = once(() => deps().oas3ParameterBuilders);

/** Parses kept; templates repeat (one per operation), values substituted into them rarely do. */
const PARSE_CACHE_SIZE = 2048;

/**
 * swagger-client fills each path parameter by re-parsing the operation's path template with
 * openapi-path-templating's ABNF parser: about a third of an api worker's CPU per call. The
 * parse of a given string never changes and `resolve` only reads the result, so the parse is
 * memoised (bounded, oldest out first), on the module the builder itself calls.
 */
function memoise(parser: Deps['pathTemplateParser']): void {
  const parse = parser.default;
  const cache = new Map<string, unknown>();
  parser.default = (template: string) => {
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
