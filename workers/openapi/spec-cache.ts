import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { WorkerLogger } from '../../protocol/worker-runtime';
import { packageVersion } from '../../protocol/version';
import { COMPILED_FORMAT, isCurrentCompiled, type Compiled } from './compiled';

/** Artifacts kept per cache directory; the least recently used go first. */
export const MAX_ARTIFACTS = 20;
/** A `.tmp` file older than this is left over from a crash and removed. */
const STALE_TMP_MS = 60 * 60 * 1000;
/**
 * An artifact is an index `<key>.json` and its data `<key>.data` (compiled.ts). The index file's
 * first line is `<sha256> <data length>`: the hash of the rest of the index and of the data, so a
 * damaged artifact (a flipped byte, a same-length edit) is rebuilt, never served.
 */
const INDEX_NAME = /^([0-9a-f]{64})\.json$/;
const DATA_NAME = /^([0-9a-f]{64})\.data$/;

/** What changes the tools of one description besides its text. */
export interface CompileKeyOptions {
  disableAbbreviation: boolean;
  maxNameLength: number;
  /** The base URL's query (compiled.ts compileApi): a query parameter it sets is optional. */
  baseQuery?: string;
}

/**
 * The cache directory: `specCache` when it is a path (relative to the working directory),
 * none when it is `false`, else `$XDG_CACHE_HOME/mcpvisor/openapi` (an absolute XDG_CACHE_HOME
 * only, as the XDG spec asks) or `~/.cache/mcpvisor/openapi`; none without a home directory.
 */
export function specCacheDir(option: string | false | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (option === false) return undefined;
  if (typeof option === 'string') return path.resolve(option);
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'mcpvisor', 'openapi');
  let home = '';
  try {
    home = os.homedir();
  } catch {
    // No home directory (a system user): no default cache.
  }
  return home ? path.join(home, '.cache', 'mcpvisor', 'openapi') : undefined;
}

/**
 * The key of a description file from its metadata only (the file is not read): absolute path,
 * device, inode, size, mtime and ctime in ns. Decision: ctime too, because tools that restore
 * mtime (cp -p, rsync -t in place) would otherwise keep a stale artifact; it cannot be set back.
 * Undefined when the file cannot be stat'ed or is not a regular file: loadSpec then reports it.
 */
export async function fileKey(file: string, options: CompileKeyOptions): Promise<string | undefined> {
  try {
    const st = await stat(file, { bigint: true });
    if (!st.isFile()) return undefined;
    return keyOf({ kind: 'file', file, dev: String(st.dev), ino: String(st.ino), size: String(st.size), mtimeNs: String(st.mtimeNs), ctimeNs: String(st.ctimeNs) }, options);
  } catch {
    return undefined;
  }
}

/** The key of a description given as text (URL, standard input, inline): its sha256. */
export function textKey(text: string, options: CompileKeyOptions): string {
  return keyOf({ kind: 'text', sha256: createHash('sha256').update(text).digest('hex') }, options);
}

function keyOf(source: Record<string, string>, options: CompileKeyOptions): string {
  const parts = { format: COMPILED_FORMAT, version: packageVersion(), code: codeFingerprint(), source, disableAbbreviation: options.disableAbbreviation, maxNameLength: options.maxNameLength, baseQuery: options.baseQuery ?? '' };
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

let fingerprint: string | undefined;
/**
 * Size and mtime of the modules of this folder and of protocol/ (unicode-pattern.ts and
 * lenient-regexp.ts decide which patterns are kept, and how). Decision: part of the key so that a rebuilt checkout with changed tool
 * generation does not serve old artifacts under an unchanged package version (installed packages
 * keep fixed mtimes, so this is stable there).
 */
function codeFingerprint(): string {
  if (fingerprint !== undefined) return fingerprint;
  const parts: string[] = [];
  for (const dir of [__dirname, path.join(__dirname, '..', '..', 'protocol')]) {
    try {
      for (const name of readdirSync(dir).sort()) {
        if (!/\.(js|ts)$/.test(name) || name.endsWith('.d.ts')) continue;
        const st = statSync(path.join(dir, name));
        parts.push(`${name}:${st.size}:${st.mtimeMs}`);
      }
    } catch {
      // Unreadable folder: the version alone keys its code.
    }
  }
  return (fingerprint = parts.join(','));
}

/**
 * The artifact stored under `key`, or undefined (a log line) when it is absent, not ours (another
 * owner), damaged (its hash or length does not match), not JSON, of another format or package
 * version, stored under another key, or its index and data are not of one write.
 */
export async function readArtifact(dir: string, key: string, log: WorkerLogger): Promise<Compiled | undefined> {
  const file = path.join(dir, `${key}.json`);
  let text: string;
  let data: string;
  let header: RegExpExecArray | null;
  try {
    text = await readOwn(file, 'utf8');
    header = /^([0-9a-f]{64}) (\d+)\n/.exec(text);
    // ASCII by construction (asciiJson): latin1 decodes it as utf8 would, at one byte a character.
    // Of the length the index gives only: a data file grown to 300 MB is not read.
    data = await readOwn(path.join(dir, `${key}.data`), 'latin1', header ? Number(header[2]) : 0);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    if (reason === 'length') log.warn('spec cache: artifact damaged (its data is not of the length its index gives), rebuilding', { file });
    else log.debug(reason === 'foreign' ? 'spec cache: artifact owned by another user, ignored' : 'spec cache miss', { file, reason });
    return undefined;
  }
  const body = header ? text.slice(header[0].length) : '';
  if (!header || createHash('sha256').update(body).update(data, 'latin1').digest('hex') !== header[1]) {
    log.warn('spec cache: artifact damaged (its hash does not match), rebuilding', { file });
    return undefined;
  }
  let stored: { key?: unknown; api?: unknown };
  try {
    stored = JSON.parse(body) as typeof stored;
  } catch {
    log.debug('spec cache: artifact is not JSON (truncated?), rebuilding', { file });
    return undefined;
  }
  if (stored === null || typeof stored !== 'object' || stored.key !== key || !isCurrentCompiled(stored.api, data)) {
    log.debug('spec cache: artifact of another key, format or version, rebuilding', { file });
    return undefined;
  }
  return { api: stored.api, data };
}

/**
 * A file's text, refused (error message 'foreign') when another user owns it, and ('length')
 * when `length` is given and the file is not of that size.
 */
async function readOwn(file: string, encoding: 'utf8' | 'latin1', length?: number): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const st = await handle.stat();
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) throw new Error('foreign');
    if (length !== undefined && st.size !== length) throw new Error('length');
    return await handle.readFile(encoding);
  } finally {
    await handle.close();
  }
}

/**
 * Stores `compiled` under `key`: directory created 0700, files written 0600 to temporary names
 * and renamed (readers never see half a file; concurrent writers of one key are harmless), the
 * data before the index, then the directory pruned to MAX_ARTIFACTS. A failure is a warning,
 * never an error. Resolves true once stored.
 */
export async function writeArtifact(dir: string, key: string, compiled: Compiled, log: WorkerLogger): Promise<boolean> {
  const file = path.join(dir, `${key}.json`);
  const suffix = `${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const body = JSON.stringify({ key, api: compiled.api });
  const hash = createHash('sha256').update(body).update(compiled.data, 'latin1').digest('hex');
  const writes: Array<[string, string, BufferEncoding]> = [
    [path.join(dir, `${key}.data`), compiled.data, 'latin1'],
    [file, `${hash} ${compiled.data.length}\n${body}`, 'utf8'],
  ];
  const renamed: string[] = [];
  try {
    await mkdir(dir, { mode: 0o700, recursive: true });
    for (const [target, text, encoding] of writes) {
      await writeFile(`${target}.${suffix}`, text, { mode: 0o600, flag: 'wx', encoding });
      await rename(`${target}.${suffix}`, target);
      renamed.push(target);
    }
  } catch (error) {
    for (const [target] of writes) await rm(`${target}.${suffix}`, { force: true }).catch(() => undefined);
    // Data whose index could not be written (a full disk) is of no use, and would hold the space.
    if (renamed.length < writes.length) for (const target of renamed) await rm(target, { force: true }).catch(() => undefined);
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    // A server user without a writable home (nobody's is /nonexistent) saw this at every start,
    // with nothing to say what to set.
    log.warn(
      `spec cache not written to ${dir}: ${reason}; the next start parses the description again (give the server's user a cache directory it can write: specCache in the config, --spec-cache <dir> or XDG_CACHE_HOME; or turn the cache off: --spec-cache off)`,
      { dir, reason },
    );
    return false;
  }
  log.debug('spec cache written', { file });
  await pruneArtifacts(dir);
  return true;
}

/** Marks an artifact as just used, so pruning keeps it. */
export async function touchArtifact(dir: string, key: string): Promise<void> {
  const now = new Date();
  await utimes(path.join(dir, `${key}.json`), now, now).catch(() => undefined);
}

async function pruneArtifacts(dir: string): Promise<void> {
  const now = Date.now();
  const indexes: Array<{ key: string; mtimeMs: number }> = [];
  const data: Array<{ key: string; mtimeMs: number }> = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const st = await stat(path.join(dir, name)).catch(() => undefined);
    if (!st) continue;
    const index = INDEX_NAME.exec(name);
    const datum = DATA_NAME.exec(name);
    if (index) indexes.push({ key: index[1], mtimeMs: st.mtimeMs });
    else if (datum) data.push({ key: datum[1], mtimeMs: st.mtimeMs });
    else if (name.endsWith('.tmp') && now - st.mtimeMs > STALE_TMP_MS) await rm(path.join(dir, name), { force: true }).catch(() => undefined);
  }
  indexes.sort((a, b) => b.mtimeMs - a.mtimeMs);
  const kept = new Set(indexes.slice(0, MAX_ARTIFACTS).map((index) => index.key));
  // The index first, so an index is never left without its data.
  for (const old of indexes.slice(MAX_ARTIFACTS)) await rm(path.join(dir, `${old.key}.json`), { force: true }).catch(() => undefined);
  // Data without an index: pruned, or left by a crash between the two renames (once stale, as a
  // writer of the same key may be between them now).
  for (const datum of data) {
    if (!kept.has(datum.key) && (indexes.some((index) => index.key === datum.key) || now - datum.mtimeMs > STALE_TMP_MS)) {
      await rm(path.join(dir, `${datum.key}.data`), { force: true }).catch(() => undefined);
    }
  }
}
