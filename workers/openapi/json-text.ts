/**
 * JSON text indented as `JSON.stringify(value, null, 2)` would, but from the text itself: numbers
 * and strings stay exactly as written. Why: parsing turns an integer past 2^53 into another
 * number (`12345678901234567890` → `12345678901234567000`), which an API's ids must not suffer.
 * `lossy` says whether such an integer occurs (JSON.parse of this text changes a value).
 * The text must be valid JSON (the caller parsed it already).
 */
export function indentJson(text: string): { text: string; lossy: boolean } {
  const out: string[] = [];
  let depth = 0;
  let lossy = false;
  let at = 0;
  const newline = () => `\n${'  '.repeat(depth)}`;
  while (at < text.length) {
    const c = text[at];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      at++;
    } else if (c === '"') {
      let end = at + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      out.push(text.slice(at, end + 1));
      at = end + 1;
    } else if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      let next = at + 1;
      while (/\s/.test(text[next] ?? '')) next++;
      if (text[next] === close) {
        out.push(c + close); // empty: `{}` / `[]`, as JSON.stringify writes them
        at = next + 1;
      } else {
        depth++;
        out.push(c + newline());
        at++;
      }
    } else if (c === '}' || c === ']') {
      depth--;
      out.push(newline() + c);
      at++;
    } else if (c === ',') {
      out.push(`,${newline()}`);
      at++;
    } else if (c === ':') {
      out.push(': ');
      at++;
    } else {
      // A number or a literal (true, false, null).
      let end = at + 1;
      while (end < text.length && !/[\s,\]}]/.test(text[end])) end++;
      const token = text.slice(at, end);
      if (/^-?\d+$/.test(token) && !Number.isSafeInteger(Number(token))) lossy = true;
      out.push(token);
      at = end;
    }
  }
  return { text: out.join(''), lossy };
}
