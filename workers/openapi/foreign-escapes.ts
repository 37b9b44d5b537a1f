/**
 * Escapes of Java, Perl and Ruby regular expressions that JavaScript lacks, in `u` syntax. With
 * `u`, JavaScript refuses them; without it, it reads them as plain letters. Descriptions
 * generated from Java (AWS) or Ruby (Linode) models use them.
 */

/** Java's POSIX classes: ASCII only, as Java has them unless UNICODE_CHARACTER_CLASS is set. */
const POSIX: Record<string, string> = {
  Lower: 'a-z',
  Upper: 'A-Z',
  ASCII: '\\x00-\\x7f',
  Alpha: 'a-zA-Z',
  Digit: '0-9',
  Alnum: 'a-zA-Z0-9',
  Punct: '!-\\/:-@\\[-`{-~',
  Graph: '!-~',
  Print: ' -~',
  Blank: ' \\t',
  Cntrl: '\\x00-\\x1f\\x7f',
  XDigit: '0-9a-fA-F',
  Space: ' \\t\\n\\x0b\\f\\r',
};

/** Java's own property names that are unions JavaScript has no single name for. */
const UNIONS: Record<string, string> = {
  LD: '\\p{L}\\p{Nd}',
  all: '\\s\\S',
};

/** Java's horizontal white space (`\h`). */
const HORIZONTAL_SPACE = '\\t \\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000';

/**
 * `\p{name}` (`\P{name}` when negated) of another engine as JavaScript class contents: within a
 * class as they are, outside one in brackets. Tried in order: a POSIX class (`Alnum`), a name
 * JavaScript knows (`L`, `Alphabetic`, after Java's `Is` prefix), a script (`Han`, `IsLatin`). Undefined for
 * blocks (`InGreek`), Java's `javaLowerCase`-style names, and a negated union inside a class.
 */
export function propertyClass(name: string, negated: boolean, inClass: boolean): string | undefined {
  // POSIX first: JavaScript also knows `Upper`, `Alpha` and `Space`, as Unicode properties.
  let contents: string | undefined = POSIX[name] ?? UNIONS[name];
  if (contents === undefined) {
    const bare = name.startsWith('Is') && name.length > 2 ? name.slice(2) : name;
    const known = [bare, `Script=${bare}`].find((candidate) => compiles(`\\p{${candidate}}`, 'u'));
    if (known !== undefined) return `\\${negated ? 'P' : 'p'}{${known}}`;
    return undefined;
  }
  if (!inClass) return `[${negated ? '^' : ''}${contents}]`;
  return negated ? undefined : contents;
}

/**
 * A backslash and a letter JavaScript gives no meaning (it would read the letter itself), as
 * Java, Perl and Ruby mean it; undefined when there is no faithful translation (`\G`, `\K`, `\Q`).
 */
export function foreignEscape(letter: string, inClass: boolean): string | undefined {
  switch (letter) {
    // Without the `m` flag, `^` and `$` are the input's start and end.
    case 'A':
      return inClass ? undefined : '^';
    case 'z':
      return inClass ? undefined : '$';
    // The end, or before a final line break.
    case 'Z':
      return inClass ? undefined : '(?=\\n?$)';
    case 'h':
      return inClass ? HORIZONTAL_SPACE : `[${HORIZONTAL_SPACE}]`;
    case 'H':
      return inClass ? undefined : `[^${HORIZONTAL_SPACE}]`;
    case 'R':
      return inClass ? undefined : '(?:\\r\\n|[\\n\\x0b\\f\\r\\x85\\u2028\\u2029])';
    case 'e':
      return '\\x1b';
    case 'a':
      return '\\x07';
    default:
      return undefined;
  }
}

/** Whether JavaScript compiles `pattern` with `flags`. */
export function compiles(pattern: string, flags: string): boolean {
  try {
    new RegExp(pattern, flags);
    return true;
  } catch {
    return false;
  }
}
