/** Characters of an HTML page read for its text: an error page's message is near its start. */
const MAX_HTML_CHARS = 256 * 1024;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/**
 * Whether a body of content type `type` (lower case) is an HTML page: by its type, unless it
 * starts as JSON does (frameworks label their JSON errors text/html, and reading them as markup
 * dropped every `<…>` of their text), or untyped by its start.
 */
export function isHtml(type: string, text: string): boolean {
  if (/^(text\/html|application\/xhtml\+xml)\b/.test(type)) return !/^\s*[[{]/.test(text.slice(0, 256));
  return type === '' && /^\s*(<!doctype html|<html[\s>])/i.test(text.slice(0, 256));
}

/**
 * The text a person would read on an HTML page: its title, then the rest without scripts, styles,
 * comments and tags, entities decoded, whitespace collapsed. Why: an error page quoted as its
 * first 2,000 characters of markup was mostly `<style>` rules, and "Internal Server Error" came
 * after the cut. A light pass for an excerpt, not a parser: only the first 256 KB is read.
 */
export function htmlText(html: string): string {
  const head = html.slice(0, MAX_HTML_CHARS);
  const title = clean(titleOf(head));
  const body = clean(
    beforeLastTagEnd(
      head.replace(/<!--[\s\S]*?(-->|$)/g, ' ').replace(/<(head|script|style|noscript|template|svg)\b[\s\S]*?(<\/\1\s*>|$)/gi, ' '),
      (text) => text.replace(/<\/?(p|div|br|h[1-6]|li|tr|title|section|article|pre)\b[^>]*>/gi, ' '),
    ),
  );
  return title !== '' && !body.startsWith(title) ? `${title}: ${body}`.replace(/: $/, '') : body;
}

/**
 * The first title's text. Only the first `<title` is tried: a later one has no `>` or closing tag
 * after it when the first has none. Why: the regexp alone, tried at each of 36,000 `<title>`s
 * without a closing tag, took 2.8 s on 256 KB (a time that grows with the square of the page).
 */
function titleOf(head: string): string {
  const at = head.search(/<title\b/i);
  if (at < 0) return '';
  const title = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/iy;
  title.lastIndex = at;
  return title.exec(head)?.[1] ?? '';
}

/**
 * `change` applied to `text` up to its last `>`, the rest as it is. For replacements of tags
 * (`<…[^>]*>`): none ends after the last `>`, and before it each `[^>]*` stops at the next one.
 * Why: over the whole text, each `<` with no `>` after it read on to the end, and 32,000 `<`
 * took a second (256 KB of `<p`: about a minute).
 */
function beforeLastTagEnd(text: string, change: (text: string) => string): string {
  const end = text.lastIndexOf('>') + 1;
  return end === text.length ? change(text) : change(text.slice(0, end)) + text.slice(end);
}

/** Tags removed, entities decoded, whitespace collapsed. */
function clean(fragment: string): string {
  return beforeLastTagEnd(fragment, (text) => text.replace(/<[^>]*>/g, ''))
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, name: string) => {
      if (name[0] === '#') {
        const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : Number(name.slice(1));
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
      }
      return ENTITIES[name.toLowerCase()] ?? entity;
    })
    .replace(/\s+/g, ' ')
    .trim();
}
