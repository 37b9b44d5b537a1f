import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiResponse } from '../../../workers/openapi/api-client';
import { responseToResult } from '../../../workers/openapi/results';
import { ApiToolService } from '../../../workers/openapi/service';

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

  test('show the headers a caller needs, those the operation declares, and the rate limit once it runs low', () => {
    const headers = {
      'content-type': 'application/json', etag: 'W/"abc"', 'last-modified': 'Tue, 01 Jul 2025 10:00:00 GMT', 'x-total-count': '1234',
      'azure-asyncoperation': 'https://management.example/ops/1', 'operation-location': 'https://ai.example/ops/2', 'x-request-cost': '3', 'x-other': 'no', 'set-cookie': 'sid=secret',
    };
    const result = responseToResult(response(202, 'application/json', '{}', { headers }), undefined, ['x-request-cost', 'set-cookie']);
    expect(textOf(result, 1)).toBe([
      'response headers (HTTP 202):', 'etag: W/"abc"', 'last-modified: Tue, 01 Jul 2025 10:00:00 GMT', 'x-total-count: 1234',
      'azure-asyncoperation: https://management.example/ops/1', 'operation-location: https://ai.example/ops/2', 'x-request-cost: 3',
    ].join('\n'));
    // GitHub sends its rate limit on every answer: shown only when a tenth or less is left.
    const limit = (remaining: string) => ({ 'content-type': 'application/json', 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': remaining, 'x-ratelimit-reset': '1800000000', 'x-ratelimit-used': '1' });
    expect(responseToResult(response(200, 'application/json', '{}', { headers: limit('4000') })).content).toHaveLength(1);
    expect(textOf(responseToResult(response(200, 'application/json', '{}', { headers: limit('12') })), 1)).toBe('response headers (HTTP 200):\nx-ratelimit-remaining: 12\nx-ratelimit-limit: 5000\nx-ratelimit-reset: 1800000000\nx-ratelimit-used: 1');
    expect(textOf(responseToResult(response(200, 'application/json', '{}', { headers: { 'ratelimit-remaining': '3' } })), 1)).toBe('response headers (HTTP 200):\nratelimit-remaining: 3');
  });

  test("an endpoint tool's result shows the response headers its description declares, Swagger 2.0 and OpenAPI 3 alike", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-cost': '3', 'x-next-token': 'abc', 'x-undeclared': 'no' });
      res.end('[]');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const openapi = { openapi: '3.0.3', info: { title: 't', version: '1' }, paths: { '/items': { get: { operationId: 'listItems', responses: { 200: { description: 'ok', headers: { 'X-Request-Cost': { schema: { type: 'integer' } } } }, default: { $ref: '#/components/responses/Paged' } } } } }, components: { responses: { Paged: { description: 'paged', headers: { 'X-Next-Token': { schema: { type: 'string' } } } } } } };
    const swagger = { swagger: '2.0', info: { title: 't', version: '1' }, paths: { '/items': { get: { operationId: 'listItems', responses: { 200: { description: 'ok', headers: { 'X-Request-Cost': { type: 'integer' } } } } } } } };
    try {
      for (const [spec, shown] of [[openapi, 'x-request-cost: 3\nx-next-token: abc'], [swagger, 'x-request-cost: 3']] as const) {
        const s = await ApiToolService.create({ apiBaseUrl: base, specInputMethod: 'inline', openApiSpec: JSON.stringify(spec), specCache: false });
        const result = await s.handle(s.tools[0].name, {});
        expect(textOf(result, 1)).toBe(`response headers (HTTP 200):\n${shown}`);
        await s.close();
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('return as image content only PNG, JPEG, GIF and WebP, as their bytes say; other images are summarised', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]);
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0]);
    const webp = Buffer.from('RIFF\u0000\u0000\u0000\u0000WEBPVP8 ', 'latin1');
    expect(responseToResult(response(200, 'image/png', png)).content).toEqual([{ type: 'image', data: png.toString('base64'), mimeType: 'image/png' }]);
    expect(responseToResult(response(200, 'image/jpg', jpeg)).content[0]).toMatchObject({ type: 'image', mimeType: 'image/jpeg' });
    expect(responseToResult(response(200, 'image/gif', 'GIF89a....')).content[0]).toMatchObject({ type: 'image', mimeType: 'image/gif' });
    expect(responseToResult(response(200, 'image/webp', webp)).content[0]).toMatchObject({ type: 'image', mimeType: 'image/webp' });
    // The type the bytes are wins: a PNG sent as JPEG.
    expect(responseToResult(response(200, 'image/jpeg', png)).content[0]).toMatchObject({ type: 'image', mimeType: 'image/png' });
    const tiff = Buffer.from([0x49, 0x49, 0x2a, 0x00, 8, 0, 0, 0]);
    expect(responseToResult(response(200, 'image/tiff', tiff)).content).toEqual([{ type: 'text', text: 'binary response: image/tiff, 8 bytes (not a PNG, JPEG, GIF or WebP image by its first bytes)' }]);
    expect(responseToResult(response(200, 'image/x-icon', Buffer.from([0, 0, 1, 0, 1, 0]))).content[0]).toMatchObject({ type: 'text' });
    expect(responseToResult(response(200, 'image/png', 'not a png at all')).content).toEqual([{ type: 'text', text: 'binary response: image/png, 16 bytes (not a PNG, JPEG, GIF or WebP image by its first bytes)' }]);
  });

  test('label a 403 that is a rate limit as rate limited, not as an authentication error', () => {
    const secondary = responseToResult(response(403, 'application/json', '{"message":"You have exceeded a secondary rate limit."}', { headers: { 'content-type': 'application/json', 'retry-after': '60' } }));
    expect(textOf(secondary)).toBe('UPSTREAM_ERROR: rate limited: HTTP 403: {"message":"You have exceeded a secondary rate limit."} [retry-after: 60]');
    const exhausted = responseToResult(response(403, 'text/plain', 'Forbidden', { headers: { 'content-type': 'text/plain', 'x-ratelimit-remaining': '0' } }));
    expect(textOf(exhausted)).toBe('UPSTREAM_ERROR: rate limited: HTTP 403: Forbidden [rate limit exhausted]');
    expect(textOf(responseToResult(response(403, 'text/plain', 'API rate limit exceeded for 1.2.3.4')))).toBe('UPSTREAM_ERROR: rate limited: HTTP 403: API rate limit exceeded for 1.2.3.4');
    expect(textOf(responseToResult(response(403, 'text/plain', 'Resource not accessible by integration', { headers: { 'x-ratelimit-remaining': '4999' } })))).toBe('UPSTREAM_ERROR: authentication error: HTTP 403: Resource not accessible by integration');
    expect(textOf(responseToResult(response(401, 'text/plain', 'Bad credentials')))).toBe('UPSTREAM_ERROR: authentication error: HTTP 401: Bad credentials');
  });
});
