import { compiles, foreignEscape, propertyClass } from './foreign-escapes';

/**
 * A description's `pattern` as JSON Schema validators compile it: with the `u` flag (ajv, and so
 * the MCP SDK's client, which compiles a whole schema or nothing). Many descriptions write
 * patterns that JavaScript accepts only without `u` (web-compatibility syntax: `\-` or `\_`
 * outside a class, `\000`, a lone `{` or `]`); listed as written, one of them made a client
 * refuse the tool's whole input schema (AWS descriptions: hundreds of tools).
 *
 * Returns the pattern itself when it compiles with `u`; else what it means without `u`, written
 * in `u` syntax (same strings matched); undefined when it compiles neither way, or when its
 * rewriting does not compile with `u` either.
 *
 * One exception to "what it means without `u`": an escaped letter with no meaning in JavaScript
 * (`\A`, `\z`, `\p{Alnum}`) reads there as the letter itself, never what the author meant. The
 * patterns come from Java, Ruby or Perl (AWS, Linode), and read as letters they refused every
 * valid value (`\A[a-z]+\z` wanted an `A` first). Those engines' anchors, escapes and character
 * classes are written in JavaScript's terms (foreign-escapes.ts); any other such letter leaves the
 * pattern out, a looser check rather than a wrong one.
 */
export function unicodePattern(pattern: string): string | undefined {
  if (compiles(pattern, 'u')) return pattern;
  if (!compiles(pattern, '')) return undefined;
  const rewritten = rewrite(pattern);
  return rewritten !== undefined && compiles(rewritten, 'u') ? rewritten : undefined;
}

const SYNTAX = new Set([...'^$\\.*+?()[]{}|/']);
const CLASS_ESCAPES = new Set([...'dDsSwW']);
const QUANTIFIER = /^\{\d+(?:,\d*)?\}/;

/** The pattern's meaning without `u` (ECMA-262 Annex B), in `u` syntax; only called on one that compiles without `u`. */
function rewrite(pattern: string): string | undefined {
  const groups = capturingGroups(pattern);
  const named = /\(\?<[^=!]/.test(pattern);
  let out = '';
  let inClass = false;
  /** In a class, whether the last atom was `\d`, `\w`…: a `-` after one is a literal, which `u` wants escaped. */
  let afterClassEscape = false;
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i];
    if (c === '\\') {
      const escaped = escape(pattern, i, inClass, groups, named);
      if (escaped === undefined) return undefined;
      const [text, length, classEscape] = escaped;
      out += text;
      i += length;
      afterClassEscape = classEscape;
      continue;
    }
    if (inClass) {
      // Java's class intersection (`[\p{Print}&&[^|]]`), which JavaScript reads as literals.
      if (pattern.startsWith('&&', i)) return undefined;
      if (c === ']') inClass = false;
      const next = pattern[i + 1];
      const beforeClassEscape = next === '\\' && CLASS_ESCAPES.has(pattern[i + 2]);
      out += c === '-' && (afterClassEscape || beforeClassEscape) && next !== ']' ? '\\-' : c;
    } else if (c === '[') {
      inClass = true;
      out += c;
      if (pattern[i + 1] === '^') out += pattern[++i];
    } else if (c === '{') {
      const quantifier = QUANTIFIER.exec(pattern.slice(i))?.[0];
      out += quantifier ?? '\\{';
      i += quantifier ? quantifier.length : 1;
      afterClassEscape = false;
      continue;
    } else {
      // A `}` or `]` here is a literal (a quantifier's `}` was copied with it).
      out += c === '}' || c === ']' ? `\\${c}` : c;
    }
    afterClassEscape = false;
    i++;
  }
  return out;
}

/**
 * The escape at `i`: its text in `u` syntax, its length in `pattern`, and whether it is a class
 * escape; undefined for one with no JavaScript meaning and no translation.
 */
function escape(pattern: string, i: number, inClass: boolean, groups: number, named: boolean): [string, number, boolean] | undefined {
  const e = pattern[i + 1];
  const rest = pattern.slice(i + 1);
  if (CLASS_ESCAPES.has(e)) return [`\\${e}`, 2, true];
  if (SYNTAX.has(e) || 'fnrtvb'.includes(e) || (e === 'B' && !inClass)) return [`\\${e}`, 2, false];
  if (e === '-') return [inClass ? '\\-' : '-', 2, false];
  if (/^[0-9]/.test(e)) {
    const decimal = /^[0-9]+/.exec(rest)![0];
    if (!inClass && e !== '0' && Number(decimal) <= groups) return [`\\${decimal}`, 1 + decimal.length, false];
    if (!inClass && e === '0' && !/^[0-9]/.test(rest.slice(1))) return ['\\0', 2, false];
    // Legacy octal (at most \377), else the digit itself (`\8`), in hex: after `\1` a plain 8 would read as `\18`.
    const octal = /^(?:[0-3][0-7]{0,2}|[4-7][0-7]?)/.exec(rest)?.[0] ?? e;
    const code = octal === e && /[89]/.test(e) ? e.charCodeAt(0) : parseInt(octal, 8);
    return [`\\x${code.toString(16).padStart(2, '0')}`, 1 + octal.length, false];
  }
  const whole = (re: RegExp): string | undefined => re.exec(rest)?.[0];
  if (e === 'p' || e === 'P') {
    const property = whole(/^[pP]\{[^}]*\}/);
    const text = property === undefined ? undefined : propertyClass(property.slice(2, -1), e === 'P', inClass);
    return text === undefined ? undefined : [text, 1 + property!.length, true];
  }
  // Java's and Perl's `\x{60}`.
  const braced = e === 'x' ? whole(/^x\{[0-9A-Fa-f]{1,6}\}/) : undefined;
  if (braced !== undefined) return [`\\u${braced.slice(1)}`, 1 + braced.length, false];
  const kept = e === 'c' ? whole(/^c[A-Za-z]/) : e === 'x' ? whole(/^x[0-9A-Fa-f]{2}/) : e === 'u' ? whole(/^u(?:[0-9A-Fa-f]{4}|\{[0-9A-Fa-f]+\})/) : undefined;
  if (kept !== undefined) return [`\\${kept}`, 1 + kept.length, false];
  if (e === 'k' && named) return ['\\k', 2, false];
  // `\c` without a letter is a backslash, then `c`.
  if (e === 'c') return ['\\\\', 1, false];
  if (e !== undefined && /[A-Za-z]/.test(e)) {
    const text = foreignEscape(e, inClass);
    return text === undefined ? undefined : [text, 2, false];
  }
  // An identity escape (`\_`, `\:`, `\ `): the character itself.
  return [e ?? '', 2, false];
}

/** Capturing groups: `(` not followed by `?`, or `(?<name>`; outside classes, unescaped. */
function capturingGroups(pattern: string): number {
  let count = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(' && (pattern[i + 1] !== '?' || (pattern[i + 2] === '<' && !'=!'.includes(pattern[i + 3])))) count++;
  }
  return count;
}
