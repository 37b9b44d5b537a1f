// First: a V8 flag, which must be the same when a code cache is written and when it is read.
import '../../protocol/regexp-backtrack-limit';
import { readFileSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import path from 'node:path';
import { Script } from 'node:vm';

/**
 * Runs a command's bundle (scripts/bundle.js) as a CommonJS module, compiled with the V8 code
 * cache written beside it at build time (`<bundle>.cache`). Why: V8 compiles the 1.8 MB bundle
 * whole before its first line runs, ~28 ms here, and then compiles each function on its first call;
 * the cache holds both, and the compile takes ~2.5 ms with it (2-core development machine). A
 * missing cache, or one V8 rejects (another Node version or V8 flags), only costs that time back.
 * Returns what became of the cache.
 */
export function loadBundle(file: string, parent: NodeJS.Module): 'used' | 'rejected' | 'none' {
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(`${file}.cache`);
  } catch {
    // No cache: compiled from source.
  }
  const script = compile(file, cachedData);
  run(script, file, parent);
  if (!cachedData) return 'none';
  return script.cachedDataRejected ? 'rejected' : 'used';
}

/**
 * For scripts/bundle.js: runs the bundle's module code (the command itself starts only in a
 * process started as that command), then writes V8's code cache beside it, so the functions
 * every start runs are in the cache, compiled.
 */
export function writeCodeCache(file: string, parent: NodeJS.Module): void {
  const script = compile(file);
  run(script, file, parent);
  writeFileSync(`${file}.cache`, script.createCachedData());
}

/**
 * The bundle is written wrapped as a CommonJS module function (scripts/bundle.js), so its text is
 * compiled as read: V8 keeps the source of a script for as long as it runs, and a wrapped or
 * shebang-stripped copy would be a second 2 MB string. V8 accepts a code cache only for the very
 * source it was made from: both paths compile here.
 */
function compile(file: string, cachedData?: Buffer): Script {
  return new Script(readFileSync(file, 'utf8'), { filename: file, cachedData });
}

function run(script: Script, file: string, parent: NodeJS.Module): void {
  const bundle = new Module(file, parent);
  bundle.filename = file;
  bundle.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(path.dirname(file));
  const wrapper = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: NodeJS.Module, filename: string, dirname: string) => void;
  wrapper.call(bundle.exports, bundle.exports, Module.createRequire(file), bundle, file, path.dirname(file));
  bundle.loaded = true;
}
