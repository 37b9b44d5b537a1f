import { McpvisorError } from '../../protocol/errors';
import { wellFormed } from './engines/dom';

/**
 * The longest query a search takes, in characters (code points, as the tool's JSON Schema
 * `maxLength` counts them). Decision: 2,048, the longest any engine's own search box takes
 * (Google, Brave, Startpage); each engine has its own bound too (`maxQueryChars`: DuckDuckGo 500,
 * Bing 1,000). A longer query is refused rather than cut, so nobody searches for half a question.
 */
export const MAX_QUERY_CHARS = 2048;

/**
 * The query as it is sent: each run of whitespace or control characters (a newline, a tab, a
 * NUL) one space, none at either end, and lone surrogates U+FFFD. Decision: a browser's search
 * box is one line (it drops line breaks), and a query pasted from a paragraph means its words;
 * every other character (`c++`, `#`, `&`, `%`, quotes, `site:`, any script, emoji) goes as it
 * came, percent-encoded as UTF-8.
 */
export function normalizeQuery(query: string): string {
  return wellFormed(query).replace(/[\s\p{Cc}]+/gu, ' ').trim();
}

/** Characters as code points: an emoji is one, as for JSON Schema's `maxLength`. */
export function queryChars(query: string): number {
  let count = 0;
  for (const _ of query) count += 1;
  return count;
}

/** A query the library searches for at all: a string, not blank, within MAX_QUERY_CHARS. */
export function isValidQuery(query: unknown): query is string {
  if (typeof query !== 'string') return false;
  const text = normalizeQuery(query);
  return text !== '' && queryChars(text) <= MAX_QUERY_CHARS;
}

/**
 * The length of a normalized query, in characters. Throws McpvisorError BAD_INPUT naming each
 * limit (`data.queryChars`) when it passes MAX_QUERY_CHARS or every engine's `maxQueryChars`.
 */
export function assertQueryFits(text: string, engines: ReadonlyArray<{ name: string; maxQueryChars: number }>): number {
  const chars = queryChars(text);
  if (chars <= MAX_QUERY_CHARS && engines.some((engine) => chars <= engine.maxQueryChars)) return chars;
  const limits = chars > MAX_QUERY_CHARS ? `a search takes at most ${MAX_QUERY_CHARS}` : engines.map((engine) => `${engine.name} takes at most ${engine.maxQueryChars}`).join(', ');
  throw new McpvisorError('BAD_INPUT', `the query has ${chars} characters; ${limits}: shorten it`, { data: { queryChars: chars } });
}
