import { setFlagsFromString } from 'node:v8';

/**
 * Imported for its side effect, once per process. `pattern`s come from untrusted descriptions and
 * are matched against untrusted arguments: `^(a+)+$` on 40 `a`s and a `!` backtracked for hours
 * and held the process. With this flag V8 moves a regexp that backtracks excessively to its
 * linear-time engine (same results), but only one compiled without the `u` flag
 * (lenient-regexp.ts decides the flags).
 * Also imported first by supervisor/cli/load-bundle.ts: V8 accepts a code cache only under the
 * flags it was made with, so the flag is set before a bundle is compiled, both when its cache is
 * written at build time and when it is read at start.
 */
setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
