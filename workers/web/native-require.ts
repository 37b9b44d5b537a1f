import * as nodeModule from 'node:module';

type ModuleStatics = { Module: { _load(request: string, parent: unknown, isMain: boolean): unknown } };

/**
 * Loads a package with Node's own loader, for linkedom: its CommonJS build requires css-select 7,
 * which is ESM only. Node >= 20.19 loads that natively (require(esm)); module loaders that
 * replace `require` and `createRequire` (jest's) cannot, so we go to `Module._load`, the function
 * behind every `require`. In plain Node this is an ordinary `require`.
 */
export function nativeRequire(name: string): unknown {
  const resolved = require.resolve(name);
  return (nodeModule as unknown as ModuleStatics).Module._load(resolved, null, false);
}
