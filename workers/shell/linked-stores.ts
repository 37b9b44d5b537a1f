import { readFileSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const STORE_REASON = "holds hard links of the server's own code (a package manager's store)";

/**
 * The package stores whose files are the server's own code under another name. pnpm, and bun on
 * Linux, install each file of a package as a hard link into one store shared by every project:
 * writing a store file in place (`echo >> file`) changes the installed file too, whatever
 * read-only mount covers `node_modules`. So a store inside the workspace is a way for a
 * sandboxed command to rewrite code the server runs unconfined at its next start, even when that
 * code lies outside the workspace.
 *
 * Only when the install is hard-linked (a `package.json` of `codeDirs` has more than one link);
 * then pnpm's `storeDir` (from the `.modules.yaml` of each `node_modules` above the code) and
 * bun's cache (`BUN_INSTALL_CACHE_DIR`, else `$BUN_INSTALL/install/cache`, else
 * `~/.bun/install/cache`). Real paths of those that exist.
 */
export function linkedStores(codeDirs: readonly string[], env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string[] {
  if (!codeDirs.some(hasOtherLinks)) return [];
  const candidates = new Set<string>();
  for (const dir of codeDirs) for (const store of pnpmStores(dir)) candidates.add(store);
  candidates.add(env.BUN_INSTALL_CACHE_DIR || path.join(env.BUN_INSTALL || path.join(home, '.bun'), 'install', 'cache'));
  const stores = new Set<string>();
  for (const candidate of candidates) {
    try {
      if (statSync(candidate).isDirectory()) stores.add(realpathSync(candidate));
    } catch {
      // not there: nothing to protect
    }
  }
  return [...stores];
}

function hasOtherLinks(dir: string): boolean {
  try {
    return statSync(path.join(dir, 'package.json')).nlink > 1;
  } catch {
    return false;
  }
}

/** `storeDir` of each pnpm `.modules.yaml` of a `node_modules` at or above `dir`. */
function pnpmStores(dir: string): string[] {
  const stores: string[] = [];
  for (let at = dir; ; at = path.dirname(at)) {
    const file = path.join(at, 'node_modules', '.modules.yaml');
    const store = storeDirOf(file);
    if (store) stores.push(path.resolve(path.dirname(file), store));
    if (path.dirname(at) === at) return stores;
  }
}

/** The `storeDir:` value of a pnpm `.modules.yaml` (a top-level scalar, maybe quoted). */
export function storeDirOf(file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const match = /^storeDir:[ \t]*(?:'([^'\n]*)'|"([^"\n]*)"|([^\n#]*?))[ \t]*(?:#.*)?$/m.exec(text);
  const value = match && (match[1] ?? match[2] ?? match[3]);
  return value ? value : undefined;
}
