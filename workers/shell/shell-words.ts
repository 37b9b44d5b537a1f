/**
 * A small reader of POSIX shell text, just enough for the blocked-pattern guard: it splits a script
 * into simple commands (words after quote removal, plus output redirections) and finds the code
 * nested in `$( )`, backticks, `<( )`/`>( )` and here-documents. It never expands variables or
 * globs; a word holding a substitution keeps the marker `$(…)` in its text.
 *
 * It is deliberately forgiving: unbalanced quotes or parentheses end at the end of the text instead
 * of failing, so a malformed command is still checked (and then fails in the real shell).
 */

export interface Redirect {
  /** The operator as written, without the fd number: `>`, `>>`, `>|`, `&>`, `>&`, `<`, `<<`, … */
  op: string;
  /** The target word after quote removal (for a here-document, its delimiter). */
  target: string;
}

export interface SimpleCommand {
  words: string[];
  redirects: Redirect[];
  /** Commands joined by `|` share a pipeline number. */
  pipeline: number;
  /** Bodies of the here-documents fed to this command. */
  heredocs: string[];
}

export interface ParsedScript {
  commands: SimpleCommand[];
  /** Code found inside substitutions, to be checked as scripts of their own. */
  nested: string[];
}

const SUBSTITUTION_MARK = '$(…)';

/** Splits `source` into simple commands. Linear in the length of the text. */
export function parseShell(source: string): ParsedScript {
  const commands: SimpleCommand[] = [];
  const nested: string[] = [];
  let words: string[] = [];
  let redirects: Redirect[] = [];
  let heredocs: string[] = [];
  let word: string | null = null;
  let pendingRedirect: string | null = null;
  let pendingHeredocs: Array<{ command: SimpleCommand | null; delimiter: string; stripTabs: boolean }> = [];
  // Pending here-documents before this index have their command: `:<<A;:<<A;…` on one line
  // (25,000 of them in 100,000 characters) walked all of them at each `;`, 1.7 s.
  let unowned = 0;
  let pipeline = 0;
  let i = 0;
  const n = source.length;

  const append = (text: string) => {
    word = (word ?? '') + text;
  };
  const endWord = () => {
    if (word === null) return;
    if (pendingRedirect !== null) {
      redirects.push({ op: pendingRedirect, target: word });
      if (pendingRedirect === '<<' || pendingRedirect === '<<-') {
        pendingHeredocs.push({ command: null, delimiter: word, stripTabs: pendingRedirect === '<<-' });
      }
      pendingRedirect = null;
    } else {
      words.push(word);
    }
    word = null;
  };
  const endCommand = (nextIsPipe: boolean) => {
    endWord();
    if (words.length > 0 || redirects.length > 0) {
      const command: SimpleCommand = { words, redirects, pipeline, heredocs };
      commands.push(command);
      for (; unowned < pendingHeredocs.length; unowned++) pendingHeredocs[unowned].command = command;
    }
    words = [];
    redirects = [];
    heredocs = [];
    if (!nextIsPipe) pipeline++;
  };
  /** Reads from `start` (just after an opening parenthesis) to its matching `)`; returns the end. */
  const readParens = (start: number): number => {
    let depth = 1;
    let j = start;
    while (j < n && depth > 0) {
      const c = source[j];
      if (c === '\\') j += 2;
      else if (c === "'") {
        const close = source.indexOf("'", j + 1);
        j = close < 0 ? n : close + 1;
      } else {
        if (c === '(') depth++;
        else if (c === ')') depth--;
        j++;
      }
    }
    return j;
  };
  const readBackticks = (start: number): number => {
    let j = start;
    let body = '';
    while (j < n && source[j] !== '`') {
      if (source[j] === '\\' && j + 1 < n) {
        body += source[j + 1];
        j += 2;
      } else body += source[j++];
    }
    nested.push(body);
    return j + 1;
  };
  /** `$…` at position i (pointing at `$`); returns the new position. */
  const readDollar = (at: number): number => {
    if (source[at + 1] === '(') {
      if (source[at + 2] === '(') {
        const end = readParens(at + 3);
        append(source.slice(at, Math.min(end + 1, n)));
        return Math.min(end + 1, n);
      }
      const end = readParens(at + 2);
      nested.push(source.slice(at + 2, Math.max(at + 2, end - 1)));
      append(SUBSTITUTION_MARK);
      return end;
    }
    if (source[at + 1] === '{') {
      const close = source.indexOf('}', at + 2);
      const end = close < 0 ? n : close + 1;
      append(source.slice(at, end));
      return end;
    }
    append('$');
    return at + 1;
  };
  const consumeHeredocs = () => {
    // Called just after a newline: the bodies of the here-documents opened on the line before.
    for (const doc of pendingHeredocs) {
      let body = '';
      while (i < n) {
        const lineEnd = source.indexOf('\n', i);
        const line = source.slice(i, lineEnd < 0 ? n : lineEnd);
        i = lineEnd < 0 ? n : lineEnd + 1;
        const compared = doc.stripTabs ? line.replace(/^\t+/, '') : line;
        if (compared === doc.delimiter) break;
        body += `${line}\n`;
      }
      doc.command?.heredocs.push(body);
    }
    pendingHeredocs = [];
    unowned = 0;
  };

  while (i < n) {
    const c = source[i];
    if (c === ' ' || c === '\t' || c === '\r') {
      endWord();
      i++;
    } else if (c === '\n') {
      endCommand(false);
      i++;
      if (pendingHeredocs.length > 0) consumeHeredocs();
    } else if (c === ';') {
      endCommand(false);
      i++;
    } else if (c === '|') {
      const isOr = source[i + 1] === '|';
      endCommand(!isOr);
      i += isOr ? 2 : source[i + 1] === '&' ? 2 : 1;
    } else if (c === '&') {
      if (source[i + 1] === '>') {
        endWord();
        const append2 = source[i + 2] === '>';
        pendingRedirect = append2 ? '&>>' : '&>';
        i += append2 ? 3 : 2;
      } else {
        endCommand(false);
        i += source[i + 1] === '&' ? 2 : 1;
      }
    } else if (c === '(' || c === ')' || ((c === '{' || c === '}' || c === '!') && word === null)) {
      endCommand(false);
      i++;
    } else if (c === '#' && word === null) {
      const lineEnd = source.indexOf('\n', i);
      i = lineEnd < 0 ? n : lineEnd;
    } else if (c === '\\') {
      if (source[i + 1] !== '\n' && i + 1 < n) append(source[i + 1]);
      i += 2;
    } else if (c === "'") {
      const close = source.indexOf("'", i + 1);
      append(source.slice(i + 1, close < 0 ? n : close));
      i = close < 0 ? n : close + 1;
    } else if (c === '"') {
      let j = i + 1;
      append('');
      while (j < n && source[j] !== '"') {
        const d = source[j];
        if (d === '\\' && j + 1 < n) {
          append('$`"\\\n'.includes(source[j + 1]) ? (source[j + 1] === '\n' ? '' : source[j + 1]) : `\\${source[j + 1]}`);
          j += 2;
        } else if (d === '$') j = readDollar(j);
        else if (d === '`') {
          j = readBackticks(j + 1);
          append(SUBSTITUTION_MARK);
        } else {
          append(d);
          j++;
        }
      }
      i = j + 1;
    } else if (c === '$') {
      i = readDollar(i);
    } else if (c === '`') {
      i = readBackticks(i + 1);
      append(SUBSTITUTION_MARK);
    } else if (c === '<' || c === '>') {
      if (source[i + 1] === '(') {
        // Process substitution: code of its own.
        const end = readParens(i + 2);
        nested.push(source.slice(i + 2, Math.max(i + 2, end - 1)));
        append(SUBSTITUTION_MARK);
        i = end;
        continue;
      }
      // A word of digits right before the operator is the fd number, not a word.
      if (word !== null && /^\d+$/.test(word)) word = null;
      else endWord();
      let op = c;
      let j = i + 1;
      if (c === '>' && (source[j] === '>' || source[j] === '|' || source[j] === '&')) op += source[j++];
      else if (c === '<') {
        if (source[j] === '<') {
          op += source[j++];
          if (source[j] === '<' || source[j] === '-') op += source[j++];
        } else if (source[j] === '&' || source[j] === '>') op += source[j++];
      }
      pendingRedirect = op;
      i = j;
    } else {
      append(c);
      i++;
    }
  }
  endCommand(false);
  if (pendingHeredocs.length > 0) consumeHeredocs();
  return { commands, nested };
}

/** The marker a word carries where a command substitution stood. */
export { SUBSTITUTION_MARK };
