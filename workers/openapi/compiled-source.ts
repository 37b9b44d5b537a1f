import type { WorkerLogger } from '../../protocol/worker-runtime';
import { compileApi, type Compiled } from './compiled';
import { loadSpec, parseSpecText, readSpecText, specLocation, type LoadedSpec, type LoadSpecOptions, type SpecLocation, type SpecText } from './load-spec';
import { fileKey, readArtifact, specCacheDir, textKey, touchArtifact, writeArtifact, type CompileKeyOptions } from './spec-cache';

export interface CompiledSourceOptions extends LoadSpecOptions, CompileKeyOptions {
  /** Cache directory, or false for none; default spec-cache.ts specCacheDir. */
  specCache?: string | false;
}

/** One start's compiled tools and where they came from. */
export interface CompiledStart {
  compiled: Compiled;
  /** The description's source, for messages. */
  source: string;
  /**
   * hit: read from the cache; miss: built, stored by persist(); off: no cache; uncached: built and
   * not stored (external `$ref`s, loaded or not).
   */
  cache: 'hit' | 'miss' | 'off' | 'uncached';
  /** For after `ready`: stores the artifact (miss) or marks it used (hit). Never rejects. */
  persist(): Promise<void>;
  /** Loads the full description again (get-api-endpoint-schema); loadSpec's errors. */
  reload(): Promise<LoadedSpec>;
}

/**
 * The compiled tools of a description: from the cache when its key matches (a file is only
 * stat'ed; URL, stdin and inline text is hashed, so a URL is still downloaded), else loaded with
 * loadSpec and compiled. Errors are loadSpec's and compileApi's, as without a cache. The result
 * holds no reference to the parsed description: reload() parses it again when needed.
 */
export async function loadCompiled(options: CompiledSourceOptions, log: WorkerLogger): Promise<CompiledStart> {
  const where = specLocation(options);
  const dir = specCacheDir(options.specCache);
  let read: SpecText | undefined;
  let key: string | undefined;
  if (dir !== undefined) {
    const started = performance.now();
    if (where.kind === 'file') key = await fileKey(where.file, options);
    else {
      read = await readSpecText(options);
      key = textKey(read.text, options);
    }
    const compiled = key === undefined ? undefined : await readArtifact(dir, key, log);
    if (compiled && key !== undefined) {
      const hit = key;
      log.debug('spec cache hit', { dir, key, ms: Math.round(performance.now() - started) });
      return { compiled, source: sourceOf(where, read), cache: 'hit', persist: () => touchArtifact(dir, hit), reload: reloader(options, where, read) };
    }
  }
  const started = performance.now();
  read ??= await readSpecText(options);
  const spec = await parseSpecText(read, options);
  log.debug('spec loaded', { source: spec.source, ms: Math.round(performance.now() - started) });
  const compiled = compileApi(spec, options);
  // External documents can change on their own (a file key sees only the root): never cached,
  // nor one that could not be loaded (it may be there next time).
  const stored = dir !== undefined && key !== undefined && spec.external.size === 0 && spec.unloaded === undefined ? { dir, key } : undefined;
  return {
    compiled,
    source: spec.source,
    cache: dir === undefined ? 'off' : stored ? 'miss' : 'uncached',
    persist: stored ? async () => void (await writeArtifact(stored.dir, stored.key, compiled, log)) : async () => undefined,
    reload: reloader(options, where, read),
  };
}

function sourceOf(where: SpecLocation, read: SpecText | undefined): string {
  return where.kind === 'file' ? where.shown : (read?.source ?? where.kind);
}

/** Standard input cannot be read twice: its text is kept. Anything else is read again. */
function reloader(options: LoadSpecOptions, where: SpecLocation, read: SpecText | undefined): () => Promise<LoadedSpec> {
  if (where.kind === 'stdin' && read) return keptText(read, options);
  return readAgain({ openApiSpec: options.openApiSpec, specSource: options.specSource, specInputMethod: options.specInputMethod, timeoutMs: options.timeoutMs, maxBytes: options.maxBytes, auth: options.auth });
}

// Two functions, not two closures in one: closures of one scope share its variables, and the
// re-reading one would keep a downloaded text alive.
function keptText(read: SpecText, options: LoadSpecOptions): () => Promise<LoadedSpec> {
  return () => parseSpecText(read, options);
}

function readAgain(options: LoadSpecOptions): () => Promise<LoadedSpec> {
  return () => loadSpec(options);
}
