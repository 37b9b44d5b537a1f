import { McpvisorError } from '../../protocol/errors';
import { errorResult } from '../../protocol/results';
import type { ToolDescriptor, ToolResult } from '../../protocol/tool';
import { MAX_QUERY_CHARS, type SearchOutcome } from './web-searcher';

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
 * Formats a search for people: a numbered list (title, URL, snippet). When every engine refused
 * the search (a captcha or bot challenge), the result is an error with code UPSTREAM_ERROR and
 * `data.blocked`, so the caller knows it is not "no results". Decision: the spec's headless
 * `[]` holds for the library; a person using a tool deserves to know why the list is empty.
 */
export function formatSearch(query: string, outcome: SearchOutcome): ToolResult {
  if (outcome.results.length === 0 && outcome.blocked.length > 0) {
    const which = outcome.blocked.map((entry) => `${entry.engine} (${entry.reason})`).join(', ');
    return errorResult(new McpvisorError('UPSTREAM_ERROR', `the search engine blocked the search: ${which}. Try again later or configure another engine.`, {
      data: { blocked: outcome.blocked },
    }));
  }
  const structured = { query, engine: outcome.engine, results: outcome.results, ...(outcome.blocked.length > 0 ? { blocked: outcome.blocked } : {}) };
  if (outcome.results.length === 0) return { content: [{ type: 'text', text: `No results for "${query}".` }], structuredContent: structured };
  const lines = outcome.results.map((result, index) => `${index + 1}. ${result.title}\n   URL: ${result.url}${result.snippet ? `\n   ${result.snippet}` : ''}`);
  return {
    content: [{ type: 'text', text: `Found ${outcome.results.length} results for "${query}" (${outcome.engine}):\n\n${lines.join('\n\n')}` }],
    structuredContent: structured,
  };
}
