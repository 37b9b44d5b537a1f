// V8's backtracking limit, set once per process (see there); it applies only without `u`.
import './regexp-backtrack-limit';

/** Syntax that means something else, or nothing, without `u`: `\p{…}`, `\P{…}`, `\u{…}`, characters beyond the BMP. */
export const NEEDS_UNICODE = /\\[pPu]\{|[\uD800-\uDFFF]/;

/**
 * ajv's `code.regExp`: a `pattern` compiled by JavaScript, without ajv's `u` flag unless the
 * pattern needs it (NEEDS_UNICODE), so that V8's backtracking limit (regexp-backtrack-limit.ts)
 * applies.
 * Trade-offs, decided here: without `u`, `.` and negated classes count a character beyond the
 * BMP in an argument as two (`^.{2}$` accepts one emoji), which only loosens a check the API
 * repeats; a pattern that needs `u` still backtracks without bound (the residual ReDoS risk).
 * A pattern invalid with `u` is compiled without it: many descriptions write patterns for other
 * engines (`^\d{4}\-\d{2}$`), and one refused pattern made ajv refuse the whole schema.
 */
export const lenientRegExp = Object.assign(
  (pattern: string, flags: string): RegExp => {
    const plain = flags.replace('u', '');
    const [first, second] = NEEDS_UNICODE.test(pattern) ? [flags, plain] : [plain, flags];
    try {
      return new RegExp(pattern, first);
    } catch {
      return new RegExp(pattern, second);
    }
  },
  { code: 'new RegExp' },
);
