import { McpvisorError } from '../../protocol/errors';
import { errorResult } from '../../protocol/results';
import type { ToolDescriptor, ToolResult } from '../../protocol/tool';
import { clip } from './engines/dom';
import { MAX_QUERY_CHARS, normalizeQuery } from './search-query';
import type { SearchOutcome } from './web-searcher';

/** The query as the answer's first line repeats it: a long one is cut (all of it is in structuredContent). */
const MAX_ECHOED_QUERY_CHARS = 200;

export const SEARCH_TOOL: ToolDescriptor = {
  name: 'search',
  title: 'Web search',
  description: 'Search the web and return a list of results with titles, URLs and snippets.',
  inputSchema: {
    type: 'object',
    properties: { query: { type: 'string', maxLength: MAX_QUERY_CHARS, description: 'What to search for' } },
    required: ['query'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, openWorldHint: true },
};

/**
 * Whether no engine answered: every one tried blocked the search or answered an HTTP error (the
 * last one tried, which the outcome names, among them). Then an empty list means "could not
 * search", not "nothing found".
 */
export function noEngineAnswered(outcome: SearchOutcome): boolean {
  return outcome.results.length === 0 && [...outcome.blocked, ...outcome.failed].some((entry) => entry.engine === outcome.engine);
}

/**
 * Formats a search for people: a numbered list (title, URL, snippet), under a line repeating the
 * query (cut at 200 characters). When no engine answered
 * (a captcha or bot challenge, an HTTP error status), the result is an error with code
 * UPSTREAM_ERROR and `data.blocked` / `data.failed`, so the caller knows it is not "no results".
 * Decision: the spec's headless `[]` holds for the library; a person using a tool deserves to
 * know why the list is empty.
 */
export function formatSearch(raw: string, outcome: SearchOutcome): ToolResult {
  // The query as it was sent (one line, trimmed), so the first line of the answer stays one line.
  const query = normalizeQuery(raw);
  const echoed = clip(query, MAX_ECHOED_QUERY_CHARS);
  if (noEngineAnswered(outcome)) {
    const refused = outcome.failed.length === 0
      ? `the search engine blocked the search: ${describe(outcome.blocked, '')}`
      : `the search engine${outcome.blocked.length + outcome.failed.length > 1 ? 's' : ''} failed: ${describe([...outcome.failed, ...outcome.blocked.map((entry) => ({ ...entry, blocked: true }))], 'blocked: ')}`;
    return errorResult(new McpvisorError('UPSTREAM_ERROR', `${refused}. Try again later or configure another engine.`, {
      data: { blocked: outcome.blocked, failed: outcome.failed },
    }));
  }
  const structured = {
    query,
    engine: outcome.engine,
    results: outcome.results,
    ...(outcome.blocked.length > 0 ? { blocked: outcome.blocked } : {}),
    ...(outcome.failed.length > 0 ? { failed: outcome.failed } : {}),
  };
  if (outcome.results.length === 0) return { content: [{ type: 'text', text: `No results for "${echoed}".` }], structuredContent: structured };
  const lines = outcome.results.map((result, index) => `${index + 1}. ${result.title}\n   URL: ${result.url}${result.snippet ? `\n   ${result.snippet}` : ''}`);
  return {
    content: [{ type: 'text', text: `Found ${outcome.results.length} results for "${echoed}" (${outcome.engine}):\n\n${lines.join('\n\n')}` }],
    structuredContent: structured,
  };
}

/** `duckduckgo (HTTP 503), bing (blocked: a captcha …)`: blocked entries marked when mixed with failures. */
function describe(entries: Array<{ engine: string; reason: string; blocked?: boolean }>, blockedMark: string): string {
  return entries.map((entry) => `${entry.engine} (${entry.blocked ? blockedMark : ''}${entry.reason})`).join(', ');
}
