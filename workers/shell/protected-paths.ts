import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { McpvisorError } from '../../protocol/errors';
import { linkedStores, STORE_REASON } from './linked-stores';

/**
 * Paths inside the workspace that sandbox mode keeps read-only: what the server runs or reads at
 * its next start. The workspace defaults to the server's start directory, which can be a checkout
 * of this repository or a project with a local install; a sandboxed command that rewrote the
 * server's code or config there would run unconfined, as the server's user, at the next worker
 * restart or server start.
 */
export interface ProtectedPath {
  /** Real path, inside the workspace or the workspace itself. */
  path: string;
  /** What it holds, as the file tools' refusal says it. */
  reason: string;
}

/** A file the supervisor runs or reads at its start, sent in the worker's init config. */
export interface ServerFile {
  path: string;
  kind: 'config' | 'code';
}

export const CODE_REASON = "holds the server's own code";
export const CONFIG_REASON = "is the server's own configuration";

export interface ProtectionSources {
  /** Real path of the workspace. */
  workspace: string;
  /**
   * The package's root directory. Default: found from this module's location (the nearest
   * package.json above it). Given only by tests, to point the protection at a fixture.
   */
  packageRoot?: string;
  /** The Node binary; default `process.execPath`. */
  execPath?: string;
  /** The config file and custom toolset modules the supervisor was given. */
  serverFiles?: readonly ServerFile[];
}

/**
 * The paths sandbox mode makes read-only, computed once at worker start; empty when the workspace
 * holds none of the server's code or config. Candidates: the package root, the package directory
 * of each runtime dependency that resolves from it (unresolvable ones skipped), the Node binary's
 * directory and the global packages beside it (`<prefix>/lib/node_modules`: npm, npx, a global
 * install), the server files, and a pnpm or bun store whose files are hard links of that code
 * (linked-stores.ts), wherever the code itself lies. Each is compared by real path, so a
 * symlinked workspace or package does not fool it. Decisions:
 *
 * - A candidate under a `node_modules` directory inside the workspace widens to the outermost such
 *   directory: a project-local install runs hoisted transitive dependencies and the `.bin` links
 *   (pnpm: the package's own symlink) from it, and any of them replaced is code run at start.
 * - A workspace inside a protected directory (a dependency, Node's directory, or the package root's
 *   `dist/` or `node_modules/`) is read-only whole. A workspace elsewhere below the package root
 *   (a checkout's scratch directory) holds no code and stays writable.
 * - A path below another protected one is dropped: the outer mount already covers it, and the
 *   ancestors `readOnlyMountArgs` binds must not lie inside a read-only one.
 */
export function protectedPaths(sources: ProtectionSources): ProtectedPath[] {
  const ws = sources.workspace;
  const root = sources.packageRoot ?? findPackageRoot(__dirname);
  const candidates: ProtectedPath[] = [];
  const code = (dir: string) => candidates.push({ path: dir, reason: CODE_REASON });
  if (root) {
    const codeDirs = [root, ...dependencyDirs(root)];
    for (const dir of codeDirs) code(dir);
    for (const store of linkedStores(codeDirs)) candidates.push({ path: store, reason: STORE_REASON });
  }
  const execPath = sources.execPath ?? process.execPath;
  const nodeDir = path.dirname(realOrUndefined(execPath) ?? execPath);
  code(nodeDir);
  if (path.basename(nodeDir) === 'bin') code(path.join(nodeDir, '..', 'lib', 'node_modules'));
  for (const file of sources.serverFiles ?? []) candidates.push({ path: file.path, reason: file.kind === 'config' ? CONFIG_REASON : CODE_REASON });

  const realRoot = root ? realOrUndefined(root) : undefined;
  const kept: ProtectedPath[] = [];
  for (const candidate of candidates) {
    const real = realOrUndefined(candidate.path);
    if (real === undefined) continue;
    if (isAtOrUnder(real, ws)) kept.push({ path: widenToNodeModules(ws, real), reason: candidate.reason });
    else if (isAtOrUnder(ws, real) && isDirectory(real)) {
      const holdsCode = real !== realRoot || ['dist', 'node_modules'].some((dir) => isAtOrUnder(ws, path.join(real, dir)));
      if (holdsCode) kept.push({ path: ws, reason: candidate.reason });
    }
  }
  // Shortest first, so an outer path is kept before the ones under it.
  kept.sort((a, b) => a.path.length - b.path.length || (a.path < b.path ? -1 : 1));
  const result: ProtectedPath[] = [];
  for (const entry of kept) if (!result.some((outer) => isAtOrUnder(entry.path, outer.path))) result.push(entry);
  return result;
}

/**
 * bubblewrap arguments that make `paths` read-only, to follow the workspace's read-write bind
 * (bwrap applies mounts in order). A mount point cannot be renamed or removed (EBUSY), but a
 * directory holding one can: `mv node_modules x` would carry the read-only mount away and leave
 * the path free for a new `node_modules`. So each directory between the workspace and a protected
 * path is bound onto itself first, read-write: it stays writable but cannot be moved or removed.
 * Each mount costs ~1 ms of a sandbox's start, paid only when the workspace holds the server's code.
 */
export function readOnlyMountArgs(workspace: string, paths: readonly ProtectedPath[]): string[] {
  const ancestors = new Set<string>();
  for (const { path: target } of paths) {
    for (let dir = path.dirname(target); dir !== workspace && isAtOrUnder(dir, workspace); dir = path.dirname(dir)) ancestors.add(dir);
  }
  const depth = (dir: string) => dir.split(path.sep).length;
  const args: string[] = [];
  for (const dir of [...ancestors].sort((a, b) => depth(a) - depth(b))) args.push('--bind', dir, dir);
  // Not the -try variants: a protected path gone since the start fails the sandbox, closed.
  for (const { path: target } of paths) args.push('--ro-bind', target, target);
  return args;
}

/**
 * Refuses (BAD_INPUT) a file tool's change at or under a protected path. `resolved` is the real
 * path the tool acts on (resolvePath's answer), `input` the path the caller gave.
 */
export function checkWritable(resolved: string, input: string, paths: readonly ProtectedPath[] | undefined): void {
  const hit = paths?.find((entry) => isAtOrUnder(resolved, entry.path));
  if (!hit) return;
  throw new McpvisorError('BAD_INPUT', `${input}: ${hit.path} ${hit.reason}; it is read-only in sandbox mode`, {
    data: { path: input, protected: hit.path },
  });
}

/** The nearest directory at or above `from` that holds a package.json (Node's package scope). */
export function findPackageRoot(from: string): string | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * The directory of each of `root`'s runtime `dependencies` as Node would load it from `root`: the
 * first `node_modules/<dep>` holding a package.json from `root` upwards (Node's own lookup order,
 * ~1 ms for all of them where require.resolve took ~13 ms of each shell worker's start); else
 * `<dep>/package.json` resolved, or (a package whose `exports` hide it) its main resolved and the
 * directory above it whose package.json names it. A dependency none finds is skipped.
 */
export function dependencyDirs(root: string): string[] {
  let names: string[];
  try {
    const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    names = Object.keys(manifest.dependencies ?? {});
  } catch {
    return [];
  }
  const dirs: string[] = [];
  for (const name of names) {
    const dir = resolveDependency(name, root);
    if (dir) dirs.push(dir);
  }
  return dirs;
}

/** Node's own resolver (a test runner's `require` may resolve its own way). */
const nodeRequire = createRequire(__filename);

function resolveDependency(name: string, root: string): string | undefined {
  for (let dir = root; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return realOrUndefined(candidate);
    if (path.dirname(dir) === dir) break;
  }
  try {
    return path.dirname(nodeRequire.resolve(`${name}/package.json`, { paths: [root] }));
  } catch {
    // Hidden by `exports`, or not installed: try the main.
  }
  let main: string;
  try {
    main = nodeRequire.resolve(name, { paths: [root] });
  } catch {
    return undefined;
  }
  for (let dir = path.dirname(main); path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    try {
      if ((JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name === name) return dir;
    } catch {
      // No package.json here (a build directory): keep climbing.
    }
  }
  return undefined;
}

/** `target` with everything after the first `node_modules` component below `workspace` dropped. */
function widenToNodeModules(workspace: string, target: string): string {
  const parts = path.relative(workspace, target).split(path.sep);
  const at = parts.indexOf('node_modules');
  return at < 0 ? target : path.join(workspace, ...parts.slice(0, at + 1));
}

/** True when `target` is `dir` or below it (both real, absolute). */
export function isAtOrUnder(target: string, dir: string): boolean {
  return target === dir || target.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);
}

function realOrUndefined(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
