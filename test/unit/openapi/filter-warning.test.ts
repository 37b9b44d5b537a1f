import { ToolsManager, type ToolFilter } from '../../../workers/openapi/tools-manager';

/** The warnings a manager over no operations gives for `filter`, with their fields. */
function warnings(filter: ToolFilter & Record<string, unknown>): Array<{ message: string; fields?: Record<string, unknown> }> {
  const seen: Array<{ message: string; fields?: Record<string, unknown> }> = [];
  ToolsManager.fromTools(filter, [], 0, (message, fields) => seen.push({ message, fields }));
  return seen;
}

describe('the warning that the filters left no tools', () => {
  it('shows the filters alone, not the rest of the API settings it was given', () => {
    // The service hands the whole API configuration over as the filter.
    const none = warnings({ apiBaseUrl: 'https://api.example.com', headers: { 'X-Api-Key': 'secret' }, includeTags: ['pets'], toolsMode: 'all' });
    expect(none.find((warning) => warning.message === 'no tools left after filtering')?.fields).toEqual({ filter: { toolsMode: 'all', includeTags: ['pets'] } });
  });

  it('cuts a long list at 20 entries and counts it', () => {
    const includeTools = Array.from({ length: 500 }, (_, i) => `GET::items${i}`);
    const none = warnings({ toolsMode: 'explicit', includeTools });
    expect(none.find((warning) => warning.message === 'no tools left after filtering')?.fields).toEqual({ filter: { toolsMode: 'explicit', includeTools: [...includeTools.slice(0, 20), '… 500 in all'] } });
  });
});
