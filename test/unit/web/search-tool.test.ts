import { errorCodeOf } from '../../../protocol/results';
import { formatSearch } from '../../../workers/web/search-tool';
import type { SearchOutcome } from '../../../workers/web/web-searcher';

const text = (result: ReturnType<typeof formatSearch>) => (result.content[0] as { text: string }).text;
const captcha = { engine: 'duckduckgo', reason: 'a captcha or challenge page' };

describe('formatSearch', () => {
  it.each<[string, SearchOutcome, string]>([
    ['an engine that answered HTTP 503', { results: [], engine: 'duckduckgo', blocked: [], failed: [{ engine: 'duckduckgo', reason: 'HTTP 503' }] }, 'UPSTREAM_ERROR: the search engine failed: duckduckgo (HTTP 503). Try again later or configure another engine.'],
    [
      'a blocked engine and a fallback that answered HTTP 500',
      { results: [], engine: 'bing', blocked: [captcha], failed: [{ engine: 'bing', reason: 'HTTP 500' }] },
      'UPSTREAM_ERROR: the search engines failed: bing (HTTP 500), duckduckgo (blocked: a captcha or challenge page). Try again later or configure another engine.',
    ],
    ['only blocked engines', { results: [], engine: 'duckduckgo', blocked: [captcha], failed: [] }, 'UPSTREAM_ERROR: the search engine blocked the search: duckduckgo (a captcha or challenge page). Try again later or configure another engine.'],
  ])('reports %s as a failure, not as no results', (_name, outcome, want) => {
    const result = formatSearch('q', outcome);
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('UPSTREAM_ERROR');
    expect(text(result)).toBe(want);
  });

  it('reports no results when the last engine answered with an empty page after others failed', () => {
    const result = formatSearch('q', { results: [], engine: 'bing', blocked: [captcha], failed: [{ engine: 'brave', reason: 'HTTP 502' }] });
    expect(result.isError).toBeUndefined();
    expect(text(result)).toBe('No results for "q".');
    expect(result.structuredContent).toMatchObject({ blocked: [captcha], failed: [{ engine: 'brave', reason: 'HTTP 502' }] });
  });
});
