/**
 * Modules loaded on first use. A worker must say `ready` fast: swagger-client's request builder
 * takes ~440 ms to load, undici ~115 ms, yaml ~50 ms, ajv with formats ~80 ms, and none of them
 * is needed to list tools from a JSON description. worker.ts warms them right after `ready`.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
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
export const swaggerBuildRequest = once(
  () => (require('swagger-client/lib/execute/index.js') as { buildRequest: (options: Record<string, unknown>) => unknown }).buildRequest,
);

/** Loads every lazy module now (after `ready`, so the first call does not pay for it). */
export function warmUp(): void {
  undici();
  swaggerBuildRequest();
  ajv();
}
