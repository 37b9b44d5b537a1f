/**
 * ajv's `code.regExp`: a `pattern` as JavaScript compiles it with ajv's `u` flag, or else without
 * it. Why: many descriptions write patterns for other engines (`^\d{4}\-\d{2}$`), valid without
 * the flag and refused with it, and one refused pattern made ajv refuse the whole schema.
 */
export const lenientRegExp = Object.assign(
  (pattern: string, flags: string): RegExp => {
    try {
      return new RegExp(pattern, flags);
    } catch {
      return new RegExp(pattern, flags.replace('u', ''));
    }
  },
  { code: 'new RegExp' },
);
