import type { ApiResponse } from '../../../workers/openapi/api-client';
import { responseToResult } from '../../../workers/openapi/results';

const response = (status: number, type: string, body: Buffer | string, more: Partial<ApiResponse> = {}): ApiResponse => ({ status, method: 'GET', headers: type ? { 'content-type': type } : {}, body: Buffer.from(body), truncated: false, url: 'http://x/', ...more });
const textOf = (result: { content: Array<{ type: string; text?: string }> }, item = 0) => result.content[item].text;

describe('results', () => {
  test('say that a body labelled JSON is not valid JSON, keeping its text', () => {
    const result = responseToResult(response(200, 'application/json; charset=utf-8', '{"id": 1, oops'));
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toBeUndefined();
    expect(textOf(result)).toMatch(/^\{"id": 1, oops\n\[not valid JSON although the response says application\/json: .+\]$/);
    // An untyped body that only looks like JSON is text, as before.
    expect(textOf(responseToResult(response(200, '', '{not json')))).toBe('{not json');
  });

  test('quote an HTML error page as its text: title first, no scripts, styles or tags, entities decoded', () => {
    const page = `<!DOCTYPE html><html><head><title>500 Internal Server Error</title><style>${'body{margin:0}'.repeat(500)}</style><script>var x = "<b>";</script></head>`
      + '<body><!-- trace id 7 --><h1>Internal&nbsp;Server Error</h1><p>The server <b>could not</b> complete your request &amp; said &#8220;sorry&#8221;.</p></body></html>';
    expect(textOf(responseToResult(response(500, 'text/html; charset=utf-8', page)))).toBe(
      'UPSTREAM_ERROR: HTTP 500 (an HTML page, as text): 500 Internal Server Error: Internal Server Error The server could not complete your request & said \u201csorry\u201d.',
    );
    // Untyped, known by its start; a JSON error is quoted as it came.
    expect(textOf(responseToResult(response(502, '', '<html><body>Bad gateway</body></html>')))).toBe('UPSTREAM_ERROR: HTTP 502 (an HTML page, as text): Bad gateway');
    expect(textOf(responseToResult(response(404, 'application/json', '{"message":"<b>Not Found</b>"}')))).toBe('UPSTREAM_ERROR: HTTP 404: {"message":"<b>Not Found</b>"}');
    // A long page is cut after its text is taken.
    const long = textOf(responseToResult(response(503, 'text/html', `<style>${'x'.repeat(5000)}</style><p>${'word '.repeat(1000)}</p>`)))!;
    expect(long).toMatch(/^UPSTREAM_ERROR: HTTP 503 \(an HTML page, as text\): word word /);
    expect(long.length).toBeLessThan(2_100);
  });
});
