import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/**
 * "not found" as shells and env report it: dash `sh: 1: node: not found`, bash
 * `bash: line 1: node: command not found`, a shebang's `/usr/bin/env: 'node': No such file or directory`.
 */
const NOT_FOUND = /(?:^|[\s:])['‘]?([\w.+-]+)['’]?: (?:command )?not found$|^\/usr\/bin\/env: ['‘]([\w.+-]+)['’]: No such file or directory$/gm;

/** Names checked at most per command (a script can print "not found" many times). */
const MAX_NAMES = 5;

/** A program a sandboxed command could not find, and why: hidden, or in a directory the sandbox shows off its PATH. */
export interface MissingProgram {
  name: string;
  /** Set when the sandbox shows its directory, which is not on the sandbox's PATH. */
  offPathDir?: string;
}

/**
 * Of the programs a sandboxed command could not find (read from its output: stderr, and stdout
 * for `2>&1`), those the server's own PATH (`hostPath`) finds where the sandbox does not: in a directory it does not show
 * (`visible(dir)` false: tools installed per user, nvm's node, pyenv, cargo, ~/.local/bin, live
 * under the home directory, which no sandbox mounts), or in one it shows that is not on its PATH
 * (`onPath(dir)` false: /opt/node/bin). `npm test` answered `node: not found` with nothing to say
 * that the server has a node. Of a hidden one, only the name: the sandbox hides the host's files.
 */
export function missingPrograms(output: string, hostPath: string | undefined, visible: (dir: string) => boolean, onPath: (dir: string) => boolean): MissingProgram[] {
  // includes() rather than a regex: ~0.3 ms instead of ~5 over 2 MB of output.
  if (!hostPath || !(output.includes('not found') || output.includes('No such file'))) return [];
  const names = new Set<string>();
  for (const match of output.matchAll(NOT_FOUND)) {
    names.add(match[1] ?? match[2]);
    if (names.size === MAX_NAMES) break;
  }
  const missing: MissingProgram[] = [];
  for (const name of names) {
    // The first one the server's PATH finds is what it would run.
    const dir = hostPath.split(':').find((entry) => path.isAbsolute(entry) && isExecutableFile(path.join(entry, name)));
    if (dir === undefined || onPath(dir)) continue;
    missing.push(visible(dir) ? { name, offPathDir: dir } : { name });
  }
  return missing;
}

/** Why a program the server has is not found in the sandbox (hidden-programs.ts). */
export function missingNote({ name, offPathDir }: MissingProgram): string {
  if (offPathDir) return `${name} is in ${offPathDir}, which the sandbox shows but is not on its PATH: run it as ${offPathDir}/${name}, or PATH=${offPathDir}:$PATH`;
  return `${name} is installed for the server in a directory the sandbox does not show (the sandbox has /usr, /bin, /opt and the workspace; per-user installs such as nvm, pyenv, cargo or ~/.local/bin are under the home directory): install it system-wide or in the workspace, or run without the sandbox`;
}

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
