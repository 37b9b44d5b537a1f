import path from 'node:path';
import { parseShell, SUBSTITUTION_MARK, type SimpleCommand } from './shell-words';

/** The four patterns of spec 002, as named in refusals. */
export const BLOCKED_PATTERNS = ['rm -rf /', 'mkfs', 'dd if=', '> /dev/'] as const;
export type BlockedPattern = (typeof BLOCKED_PATTERNS)[number];

export interface BlockedMatch {
  pattern: BlockedPattern;
  /** Why, in words, e.g. "recursive delete of the root directory". */
  reason: string;
  /** The simple command that matched, words joined by single spaces. */
  command: string;
}

/**
 * The matching rule (spec 002 lists the patterns but not how they match; this is our rule).
 *
 * The command is read as shell text (see shell-words.ts): quotes and backslashes are removed,
 * whitespace runs are word breaks, and it is split into simple commands at `;`, `&&`, `||`, `|`,
 * `&`, newlines, `( )` and `{ }`. Code inside `$( )`, backticks, `<( )`/`>( )`, the script of a
 * shell started with `-c` (`sh -c '…'`, `bash -lc "…"`), the arguments of `eval`, here-documents
 * fed to a shell, and `echo`/`printf` text piped into a shell are checked the same way, up to
 * eight levels deep. In each simple command, leading `NAME=value` assignments and the wrappers
 * `sudo`, `doas`, `env`, `nohup`, `time`, `nice`, `ionice`, `exec`, `command`, `builtin`,
 * `timeout`, `stdbuf`, `xargs`, `busybox` (with their options) are skipped, and the command name
 * is compared by its basename (`/bin/rm` is `rm`). Then:
 *
 * - `rm -rf /`: `rm` with a recursive flag (`-r`, `-R`, `--recursive`, alone or combined as in
 *   `-fr`, `-rfv`) and an operand that is the root directory after lexical normalisation (`/`,
 *   `//`, `/.`, `/..`, `/./`) or a glob of its entries (`/*`, `/.*`, `/?*`); and any `rm` with
 *   `--no-preserve-root`. `-f` is not required: it only suppresses prompts.
 *   After `cd /` (or `cd //`, `cd /..`, …) earlier in the same script, relative operands count
 *   from the root: `cd / && rm -rf *` matches.
 * - `mkfs`: a command named `mkfs`, `mkfs.<type>` or `mke2fs`, anywhere a command can stand.
 * - `dd if=`: `dd` with an `if=` operand, in any position, or with an `of=` operand on a device
 *   under `/dev/` other than the harmless ones below.
 * - `> /dev/`: an output redirection (`>`, `>>`, `>|`, `&>`, `>&`, with or without an fd number and
 *   with or without a space) onto a path under `/dev/`, except `/dev/null`, `/dev/zero`,
 *   `/dev/stdout`, `/dev/stderr`, `/dev/tty`, `/dev/fd/<n>` and `/dev/shm/…`; and `tee` onto such
 *   a device (the same write, spelled as a command).
 *
 * Words that are arguments of other commands are data, not code: `echo mkfs`, `grep "dd if=" x`,
 * `git commit -m "rm -rf /"` and `rm -rf /tmp/build` are allowed. Variables and globs are not
 * expanded, so `rm -rf $DIR` passes: this list is a guardrail against accidents, not a security
 * boundary. The sandbox (SANDBOX_MODE=true, bubblewrap) is the boundary.
 */
export function findBlockedPattern(command: string): BlockedMatch | undefined {
  return checkScript(command, 0);
}

const MAX_DEPTH = 8;
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ash', 'mksh', 'busybox-sh']);
/** Wrapper commands and, for each, its options that take a separate argument. */
const WRAPPERS: Record<string, Set<string>> = {
  sudo: new Set(['-u', '-g', '-C', '-h', '-p', '-r', '-t', '-U', '-D', '-R', '-T']),
  doas: new Set(['-u', '-C']),
  env: new Set(['-u', '-C', '-S', '--unset', '--chdir']),
  nohup: new Set(),
  time: new Set(['-f', '-o']),
  nice: new Set(['-n', '--adjustment']),
  ionice: new Set(['-c', '-n', '-p']),
  exec: new Set(['-a']),
  command: new Set(),
  builtin: new Set(),
  timeout: new Set(['-s', '-k', '--signal', '--kill-after']),
  stdbuf: new Set(['-i', '-o', '-e']),
  xargs: new Set(['-a', '-d', '-E', '-I', '-L', '-n', '-P', '-s']),
  busybox: new Set(),
};
/** Wrappers whose first operand is not the command (the duration of `timeout`). */
const SKIP_FIRST_OPERAND = new Set(['timeout']);
const HARMLESS_DEVICES = /^\/dev\/(null|zero|stdout|stderr|stdin|tty|fd\/\d+|shm\/.*)$/;

function checkScript(script: string, depth: number): BlockedMatch | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const parsed = parseShell(script);
  for (const nested of parsed.nested) {
    const found = checkScript(nested, depth + 1);
    if (found) return found;
  }
  const pipelines = new Map<number, SimpleCommand[]>();
  // Whether an earlier `cd` of this script went to the root (scoping of subshells is ignored).
  const cwd = { atRoot: false };
  for (const command of parsed.commands) {
    const found = checkCommand(command, depth, cwd);
    if (found) return found;
    // Appended in place: copying the array per member was quadratic, and `a|a|…` (100,000
    // characters, 50,000 members) held the worker's event loop until its liveness check killed it.
    const members = pipelines.get(command.pipeline);
    if (members) members.push(command);
    else pipelines.set(command.pipeline, [command]);
  }
  // `echo 'rm -rf /' | sh`: the text printed into a shell is code.
  for (const members of pipelines.values()) {
    const shellIndex = members.findIndex((member, index) => index > 0 && isBareShell(stripWrappers(member.words)));
    if (shellIndex < 0) continue;
    for (const member of members.slice(0, shellIndex)) {
      const words = stripWrappers(member.words);
      const name = words[0] ? path.posix.basename(words[0]) : '';
      if (name !== 'echo' && name !== 'printf') continue;
      const text = words.slice(1).filter((word) => !/^-[a-zA-Z]+$/.test(word)).join(' ');
      const found = checkScript(text.replace(/\\n/g, '\n'), depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}

function checkCommand(command: SimpleCommand, depth: number, cwd: { atRoot: boolean }): BlockedMatch | undefined {
  const text = [...command.words, ...command.redirects.map((r) => `${r.op}${r.target}`)].join(' ');
  for (const redirect of command.redirects) {
    if (!redirect.op.includes('>')) continue;
    const target = path.posix.normalize(redirect.target);
    if (target.startsWith('/dev/') && !HARMLESS_DEVICES.test(target)) {
      return { pattern: '> /dev/', reason: `output redirected onto the device ${target}`, command: text };
    }
  }
  const words = stripWrappers(command.words);
  if (words.length === 0) return undefined;
  const name = path.posix.basename(words[0]);
  const args = words.slice(1);

  if (SHELLS.has(name)) {
    const script = shellScript(args);
    if (script !== undefined) return checkScript(script, depth + 1);
    if (isBareShell(words)) {
      for (const body of command.heredocs) {
        const found = checkScript(body, depth + 1);
        if (found) return found;
      }
    }
    return undefined;
  }
  if (name === 'eval') return checkScript(args.join(' '), depth + 1);
  if (name === 'mkfs' || name.startsWith('mkfs.') || name === 'mke2fs') {
    return { pattern: 'mkfs', reason: 'creating a filesystem erases a device', command: text };
  }
  if (name === 'dd') {
    if (args.some((arg) => arg.startsWith('if='))) {
      return { pattern: 'dd if=', reason: 'dd copies raw data over files and devices', command: text };
    }
    const device = args.find((arg) => arg.startsWith('of=/dev/') && !HARMLESS_DEVICES.test(path.posix.normalize(arg.slice(3))));
    if (device) return { pattern: 'dd if=', reason: `dd writing onto the device ${device.slice(3)}`, command: text };
    return undefined;
  }
  if (name === 'cd' || name === 'pushd') {
    const target = args.find((arg) => !arg.startsWith('-'));
    cwd.atRoot = target !== undefined && isRootOrItsEntries(target) && !/[*?]/.test(target);
    return undefined;
  }
  if (name === 'tee') {
    const device = args.find((arg) => arg.startsWith('/dev/') && !HARMLESS_DEVICES.test(path.posix.normalize(arg)));
    if (device) return { pattern: '> /dev/', reason: `tee writing onto the device ${device}`, command: text };
    return undefined;
  }
  if (name === 'rm') return checkRm(args, text, cwd.atRoot);
  return undefined;
}

function checkRm(args: string[], text: string, atRoot: boolean): BlockedMatch | undefined {
  let recursive = false;
  let noPreserveRoot = false;
  const operands: string[] = [];
  let endOfOptions = false;
  for (const arg of args) {
    if (!endOfOptions && arg === '--') endOfOptions = true;
    else if (!endOfOptions && arg.startsWith('--')) {
      if (arg === '--recursive') recursive = true;
      if (arg === '--no-preserve-root') noPreserveRoot = true;
    } else if (!endOfOptions && arg.startsWith('-') && arg.length > 1) {
      if (/[rR]/.test(arg)) recursive = true;
    } else operands.push(arg);
  }
  if (noPreserveRoot) {
    return { pattern: 'rm -rf /', reason: 'rm with --no-preserve-root', command: text };
  }
  if (recursive && operands.some((operand) => isRootOrItsEntries(operand) || (atRoot && isRootOrItsEntries(`/${operand}`)))) {
    return { pattern: 'rm -rf /', reason: 'recursive delete of the root directory', command: text };
  }
  return undefined;
}

/** `/`, `//`, `/.`, `/..`, `/*`, `/.*`, `/?*` (lexically; no expansion). */
function isRootOrItsEntries(operand: string): boolean {
  if (!operand.startsWith('/') || operand.includes(SUBSTITUTION_MARK)) return false;
  const normal = path.posix.normalize(operand);
  if (normal === '/') return true;
  const rest = normal.replace(/\/+$/, '').slice(1);
  return !rest.includes('/') && /^[.*?]*[*?][.*?]*$/.test(rest);
}

/** Drops `NAME=value` prefixes and wrapper commands with their options, repeatedly. */
function stripWrappers(input: string[]): string[] {
  let words = input;
  for (let guard = 0; guard < 16; guard++) {
    let start = 0;
    while (start < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[start])) start++;
    words = words.slice(start);
    const name = words[0] === undefined ? '' : path.posix.basename(words[0]);
    const withArgument = WRAPPERS[name];
    if (!withArgument) return words;
    let i = 1;
    let skipOperand = SKIP_FIRST_OPERAND.has(name);
    while (i < words.length) {
      const word = words[i];
      if (word === '--') {
        i++;
        break;
      }
      if (word.startsWith('-') && word.length > 1) {
        i += withArgument.has(word) ? 2 : 1;
      } else if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) {
        i++;
      } else if (skipOperand) {
        skipOperand = false;
        i++;
      } else break;
    }
    words = words.slice(i);
  }
  return words;
}

/** The script of `sh -c SCRIPT` (options may be combined, as in `-ec` or `-lc`). */
function shellScript(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('-') || arg === '-' || arg === '--') return undefined;
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(arg)) return args[i + 1] ?? '';
    if (arg === '-o' || arg === '+o') i++;
  }
  return undefined;
}

/** A shell that reads its script from stdin: `sh`, `bash -s`, `sudo bash -x`. */
function isBareShell(words: string[]): boolean {
  if (words.length === 0 || !SHELLS.has(path.posix.basename(words[0]))) return false;
  return words.slice(1).every((word) => word.startsWith('-') && !/^-[a-zA-Z]*c[a-zA-Z]*$/.test(word));
}
