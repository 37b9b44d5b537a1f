import { realpathSync } from 'node:fs';
import path from 'node:path';

/**
 * The program behind `/bin/sh` (`dash` on Debian and Ubuntu, `bash` on Fedora, `busybox` on
 * Alpine), by real path; `sh` when it cannot be read. The sandbox binds the host's /usr and /bin, so
 * it is the same inside.
 */
export function systemShell(file = '/bin/sh'): string {
  try {
    return path.basename(realpathSync(file));
  } catch {
    return 'sh';
  }
}

/**
 * What a POSIX shell says to bash syntax: `[[`, `source`, `declare`, `shopt` not found (dash
 * prints `sh: 1: [[: not found`), `set -o pipefail` refused, `${v:0:3}` or `${!v}` a bad
 * substitution, an array or `<(…)` a syntax error. `echo {1..3}` prints itself and fails nothing,
 * so it is not caught: the tool's description names the shell.
 */
const BASH_SYNTAX = /(?:^|[ :])(?:\[\[|source|declare|shopt|mapfile|readarray): not found$|Illegal option -o pipefail|Bad substitution$|Syntax error: "\(" unexpected/m;

const CLUES = [': not found', 'Illegal option', 'Bad substitution', 'Syntax error'];

/**
 * A note for an exec result whose output reads like bash syntax refused by a /bin/sh that is not
 * bash (`shell`, from systemShell); undefined otherwise. Models write bash: `set -o pipefail` ended
 * a whole command with "Illegal option", with nothing said about which shell ran it.
 */
export function bashSyntaxNote(output: string, shell: string): string | undefined {
  // includes() first: the regex took ~5 ms over 2 MB of output that holds none of these words.
  if (shell === 'bash' || !CLUES.some((clue) => output.includes(clue)) || !BASH_SYNTAX.test(output)) return undefined;
  return `commands run in /bin/sh, which is ${shell} here (POSIX sh), not bash: for [[ ]], arrays, {1..3}, source, set -o pipefail or \${v:0:3} run bash -c '…' or bash script.sh`;
}
