import { errorCodeOf } from '../../../protocol/results';
import { formatFetchResult } from '../../../workers/web/fetch-tool';

const page = { success: true, data: { content: 'a'.repeat(25_000), metadata: { title: 'T', url: 'https://example.com/' } } };

describe('formatFetchResult', () => {
  it('truncates to 10,000 characters and says which start_index reads on', () => {
    const result = formatFetchResult(page, 0, 10_000);
    expect(result.structuredContent).toMatchObject({ startIndex: 0, endIndex: 10_000, totalLength: 25_000, truncated: true, nextStartIndex: 10_000 });
    const text = (result.content[0] as { text: string }).text;
    expect(text).toContain('Title: T\nURL: https://example.com/');
    expect(text).toContain('characters 0-10000 of 25000. Call fetch_web_content again with start_index=10000');
  });

  it('returns the last window without a truncation note', () => {
    const result = formatFetchResult(page, 20_000, 10_000);
    expect(result.structuredContent).toMatchObject({ endIndex: 25_000, truncated: false });
    expect(result.structuredContent).not.toHaveProperty('nextStartIndex');
  });

  it('refuses a start_index past the end', () => {
    const result = formatFetchResult(page, 30_000, 10);
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('BAD_INPUT');
  });

  it.each([
    ['BLOCKED', 'BLOCKED'],
    ['HTTP_ERROR', 'UPSTREAM_ERROR'],
    ['TIMEOUT', 'NETWORK_ERROR'],
    ['INVALID_URL', 'BAD_INPUT'],
  ] as const)('maps a %s fetch failure to the %s code', (fetchCode, code) => {
    const result = formatFetchResult({ success: false, error: 'why', code: fetchCode }, 0, 10);
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe(code);
    expect((result.content[0] as { text: string }).text).toBe(`${code}: why`);
  });
});
