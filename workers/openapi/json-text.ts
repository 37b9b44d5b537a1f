/**
 * JSON text indented as `JSON.stringify(value, null, 2)` would, but from the text itself: numbers
 * and strings stay exactly as written. Why: parsing turns an integer past 2^53 into another
 * number (`12345678901234567890` → `12345678901234567000`), which an API's ids must not suffer.
 * `lossy` says whether parsing this text changes a number (an unsafe integer, more significant
 * digits than a double holds, or one out of its range). The text must be valid JSON (the caller
 * parsed it already). Undefined when the indented text would pass `maxChars`: indentation grows
 * with depth, and 32 KB of `[[[…]]]` would otherwise make gigabytes.
 */
export function indentJson(text: string, maxChars: number): { text: string; lossy: boolean } | undefined {
  const out: string[] = [];
  let size = 0;
  let depth = 0;
  let lossy = false;
  let at = 0;
  const push = (piece: string) => {
    out.push(piece);
    size += piece.length;
  };
  const newline = () => `\n${'  '.repeat(depth)}`;
  while (at < text.length) {
    if (size > maxChars) return undefined;
    const c = text[at];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      at++;
    } else if (c === '"') {
      let end = at + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      push(text.slice(at, end + 1));
      at = end + 1;
    } else if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      let next = at + 1;
      while (text[next] === ' ' || text[next] === '\t' || text[next] === '\n' || text[next] === '\r') next++;
      if (text[next] === close) {
        push(c + close); // empty: `{}` / `[]`, as JSON.stringify writes them
        at = next + 1;
      } else {
        depth++;
        push(c + newline());
        at++;
      }
    } else if (c === '}' || c === ']') {
      depth--;
      push(newline() + c);
      at++;
    } else if (c === ',') {
      push(`,${newline()}`);
      at++;
    } else if (c === ':') {
      push(': ');
      at++;
    } else {
      // A number or a literal (true, false, null).
      let end = at + 1;
      while (end < text.length && !/[\s,\]}]/.test(text[end])) end++;
      const token = text.slice(at, end);
      if (!lossy && (c === '-' || (c >= '0' && c <= '9'))) lossy = changesWhenParsed(token);
      push(token);
      at = end;
    }
  }
  return size > maxChars ? undefined : { text: out.join(''), lossy };
}

/** Whether `Number(token)` differs from the JSON number `token`, as far as a reader can tell. */
function changesWhenParsed(token: string): boolean {
  const value = Number(token);
  if (!Number.isFinite(value)) return true;
  if (/^-?\d+$/.test(token)) return !Number.isSafeInteger(value);
  // A double holds 15-17 significant digits: more than 15 may not come back as written.
  const digits = token.replace(/[eE].*$/, '').replace(/[-.]/g, '').replace(/^0+/, '').replace(/0+$/, '');
  return digits.length > 15 && String(value) !== token;
}
