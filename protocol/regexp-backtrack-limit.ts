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
 * The cost: the flag is process-wide, so any regexp without `u` that backtracks past 50,000
 * times in one run (`/\d{16}/` over 8 MB of shorter numbers) moves to that engine too, many
 * times slower. Scans of large text in these processes are loops or use `u` (results.ts).
 */
setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
