import { ApiClient, type ApiResponse } from '../../../workers/openapi/api-client';
import { isAuthError, StaticAuthProvider, type AuthErrorInfo, type IAuthProvider } from '../../../workers/openapi/auth';
import { hasDigitRun, responseToResult } from '../../../workers/openapi/results';
import { errorCodeOf } from '../../../protocol/results';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';
import { rejection } from '../../helpers/rejection';

let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());

class TokenProvider implements IAuthProvider {
  token = 'stale';
  errors: AuthErrorInfo[] = [];
  constructor(private readonly answer: 'refresh' | 'no' | 'throw') {}
  async getAuthHeaders() {
    return { Authorization: `Bearer ${this.token}` };
  }
  async handleAuthError(error: AuthErrorInfo) {
    this.errors.push(error);
    if (this.answer === 'throw') throw new Error('token expired: log in again');
    if (this.answer === 'no') return false;
    this.token = 'good';
    return true;
  }
}

describe('ApiClient', () => {
  test('sends static headers and spec 000 request(method, path, params)', async () => {
    const client = new ApiClient(`${upstream.url}/v1`, undefined, { 'X-Api-Key': 'k1' });
    const got = await client.request('GET', '/users', { page: 2, tags: ['a', 'b'] });
    expect(got.status).toBe(200);
    const echo = JSON.parse(got.body.toString()).echo;
    expect(echo.url).toBe('/v1/users?page=2&tags=a&tags=b');
    expect(echo.headers['x-api-key']).toBe('k1');
    // Some APIs refuse a request without one (GitHub: 403); a configured one replaces it.
    expect(echo.headers['user-agent']).toMatch(/^mcpvisor\/\d+\.\d+\.\d+/);
    const own = new ApiClient(upstream.url, undefined, { 'user-agent': 'my-agent/2' });
    expect(JSON.parse((await own.request('GET', '/users')).body.toString()).echo.headers['user-agent']).toBe('my-agent/2');
    await own.close();
    const post = await client.request('POST', 'users', { name: 'n' });
    expect(JSON.parse(JSON.parse(post.body.toString()).echo.body)).toEqual({ name: 'n' });
    await client.close();
  });

  test('retries once with fresh headers when handleAuthError returns true', async () => {
    const provider = new TokenProvider('refresh');
    const client = new ApiClient(upstream.url, provider);
    const before = upstream.requests.length;
    const got = await client.request('GET', '/auth');
    expect(got.status).toBe(200);
    expect(provider.errors).toHaveLength(1);
    expect(provider.errors[0]).toMatchObject({ status: 401, method: 'GET' });
    expect(upstream.requests.length - before).toBe(2);
    await client.close();
  });

  test('reports the error without retrying when handleAuthError returns false, and its message when it throws', async () => {
    const no = new ApiClient(upstream.url, new TokenProvider('no'));
    const before = upstream.requests.length;
    const answer = await no.request('GET', '/auth');
    expect(answer.status).toBe(401);
    expect(upstream.requests.length - before).toBe(1);
    const result = responseToResult(answer);
    expect(result.isError).toBe(true);
    expect(result.content[0]).toMatchObject({ text: expect.stringContaining('authentication error: HTTP 401') });
    const thrower = new ApiClient(upstream.url, new TokenProvider('throw'));
    const error = await rejection(thrower.request('GET', '/auth'));
    expect(error).toMatchObject({ code: 'UPSTREAM_ERROR', message: 'authentication error (HTTP 401): token expired: log in again' });
    // spec 000: isAuthError is true for an authentication error, our own included.
    expect(isAuthError(error)).toBe(true);
    await Promise.all([no.close(), thrower.close()]);
  });

  test('times out, caps the body, limits redirects and answers a cross-origin one with itself, not followed', async () => {
    const client = new ApiClient(upstream.url, undefined, undefined, { requestTimeoutMs: 300, maxResponseBytes: 1000, maxRedirects: 2 });
    expect(await rejection(client.request('GET', '/hang'))).toMatchObject({ code: 'TIMEOUT', message: expect.stringContaining('timed out after 300 ms') });
    const big = await client.request('GET', '/big/5000');
    expect(big).toMatchObject({ truncated: true });
    expect(big.body.length).toBe(1000);
    expect(responseToResult(big).content[0]).toMatchObject({ text: expect.stringMatching(/\[response cut at 1000 bytes\]$/) });
    // With a declared length: over the cap is cut the same way; within it is read whole.
    expect(await client.request('GET', '/big/5000?sized')).toMatchObject({ truncated: true, body: Buffer.alloc(1000, 'x') });
    expect(await client.request('GET', '/big/1000?sized')).toMatchObject({ truncated: false, body: Buffer.alloc(1000, 'x') });
    expect((await client.request('GET', '/redirect/2')).status).toBe(200);
    expect(await rejection(client.request('GET', '/redirect/3'))).toMatchObject({ code: 'UPSTREAM_ERROR', message: 'more than 2 redirects' });
    const away = await client.request('GET', '/away');
    expect(away).toMatchObject({ status: 302, headers: { location: expect.stringMatching(/^http:\/\/[^/]+/) }, body: Buffer.alloc(0) });
    const result = responseToResult(away);
    expect(result.isError).toBeUndefined();
    expect((result.content[0] as { text: string }).text).toBe(`HTTP 302: redirect to ${new URL(away.headers.location).href} (another origin: not followed, so the API's credentials are not sent there)`);
    expect((result.content[1] as { text: string }).text).toContain(`location: ${away.headers.location}`);
    await client.close();
  });

  test('reports a refused connection as a network error and aborts with the caller', async () => {
    const dead = new ApiClient('http://127.0.0.1:9');
    expect(await rejection(dead.request('GET', '/x'))).toMatchObject({ code: 'NETWORK_ERROR', message: expect.stringContaining('ECONNREFUSED') });
    expect(await dead.testConnection()).toBe(false);
    const live = new ApiClient(upstream.url);
    expect(await live.testConnection()).toBe(true);
    const controller = new AbortController();
    const pending = rejection(live.request('GET', '/hang', undefined, undefined, { signal: controller.signal }));
    controller.abort(Object.assign(new Error('cancelled'), { code: 'CANCELLED' }));
    expect(await pending).toMatchObject({ code: 'CANCELLED' });
    await Promise.all([dead.close(), live.close()]);
  });
});

describe('ApiClient.request', () => {
  test('sends a query name the base URL also has once, the given value replacing the base URL\'s', async () => {
    const client = new ApiClient(`${upstream.url}/v1?api-version=1&keep=k`);
    const echo = async (params?: Record<string, unknown>) => JSON.parse((await client.request('GET', '/things', params)).body.toString()).echo.url;
    expect(await echo({ 'api-version': '2024' })).toBe('/v1/things?keep=k&api-version=2024');
    expect(await echo({ other: 'o' })).toBe('/v1/things?api-version=1&keep=k&other=o');
    await client.close();
  });

  test('keeps a slash at the end of the base URL\'s query, dropping only the path\'s', async () => {
    const client = new ApiClient(`${upstream.url}/api//?next=/`);
    expect(client.baseUrl).toBe(`${upstream.url}/api?next=/`);
    expect(JSON.parse((await client.request('GET', '/things')).body.toString()).echo.url).toBe('/api/things?next=/');
    expect(new ApiClient(`${upstream.url}/?a=b/`).baseUrl).toBe(`${upstream.url}?a=b/`);
    await client.close();
  });
});

describe('ApiClient headers', () => {
  test('configured headers win over request headers of the same name, and cookies add up (a configured one wins by name)', async () => {
    const client = new ApiClient(upstream.url, undefined, { 'X-Api-Key': 'configured', Cookie: 'session=s1' });
    const got = await client.send({ method: 'GET', url: `${upstream.url}/echo`, headers: { 'x-api-key': 'from-argument', cookie: 'c1=a; session=from-argument' } });
    const echo = JSON.parse(got.body.toString()).echo;
    expect(echo.headers['x-api-key']).toBe('configured');
    expect(echo.headers.cookie).toBe('c1=a; session=s1');
    await client.close();
    // An auth provider's cookies add up too; of one name, the provider's is sent.
    const provided = new ApiClient(upstream.url, new StaticAuthProvider({ Cookie: 'token=t; session=from-provider' }), { Cookie: 'session=s1' });
    const withProvider = await provided.send({ method: 'GET', url: `${upstream.url}/echo`, headers: { cookie: 'c1=a; c2=b' } });
    expect(JSON.parse(withProvider.body.toString()).echo.headers.cookie).toBe('c1=a; c2=b; session=from-provider; token=t');
    await provided.close();
  });

  test('keeps every pair of an exploded cookie a request repeats, replacing only the names a configured cookie sets', async () => {
    const cookieOf = async (configured: string) => {
      const client = new ApiClient(upstream.url, undefined, { Cookie: configured });
      const got = await client.send({ method: 'GET', url: `${upstream.url}/echo`, headers: { cookie: 'c=a; c=b; d=1; c=c' } });
      await client.close();
      return JSON.parse(got.body.toString()).echo.headers.cookie;
    };
    expect(await cookieOf('session=cfg')).toBe('c=a; c=b; d=1; c=c; session=cfg');
    expect(await cookieOf('c=cfg')).toBe('c=cfg; d=1');
  });

  test('sends credentials of the base URL as Basic auth and never shows them', async () => {
    const withUser = upstream.url.replace('http://', 'http://ad%40min:pa%3Ass@');
    const client = new ApiClient(`${withUser}/v1`);
    expect(client.baseUrl).toBe(`${upstream.url}/v1`);
    const got = await client.request('GET', '/users');
    const echo = JSON.parse(got.body.toString()).echo;
    expect(echo.headers.authorization).toBe(`Basic ${Buffer.from('ad@min:pa:ss').toString('base64')}`);
    await client.close();
    // A configured Authorization header is kept.
    const configured = new ApiClient(`${withUser}/v1`, undefined, { Authorization: 'Bearer t' });
    expect(JSON.parse((await configured.request('GET', '/users')).body.toString()).echo.headers.authorization).toBe('Bearer t');
    await configured.close();
    // Broken percent-encoding in the credentials: sent as written, not a failed start.
    const broken = new ApiClient(upstream.url.replace('http://', 'http://a%zz:b@'));
    expect(JSON.parse((await broken.request('GET', '/users')).body.toString()).echo.headers.authorization).toBe(`Basic ${Buffer.from('a%zz:b').toString('base64')}`);
    await broken.close();
    const refused = new ApiClient('http://user:secret-pw@127.0.0.1:9/v1');
    const error = await rejection(refused.request('GET', '/x'));
    expect(error).toMatchObject({ code: 'NETWORK_ERROR' });
    expect(String((error as Error).message)).not.toContain('secret-pw');
    await refused.close();
  });
});

describe('ApiClient: codings, redirects, base URLs', () => {
  test('decodes gzip, deflate (zlib or raw), br and stacked codings; refuses one it does not know, naming it', async () => {
    const client = new ApiClient(upstream.url);
    for (const codings of ['gzip', 'deflate', 'raw-deflate', 'br', 'gzip,br']) {
      const got = await client.request('GET', `/coded/${codings}`);
      expect(got.headers['content-encoding']).toBeUndefined();
      expect(JSON.parse(got.body.toString()).echo.url).toBe(`/coded/${codings}`);
    }
    expect(await rejection(client.request('GET', '/coded/zstd'))).toMatchObject({ code: 'UPSTREAM_ERROR', message: expect.stringContaining("encoded with 'zstd'") });
    await client.close();
  });

  test('caps what a small compressed body decodes to at maxResponseBytes', async () => {
    const client = new ApiClient(upstream.url, undefined, undefined, { maxResponseBytes: 1024 * 1024 });
    const got = await client.request('GET', '/coded/gzip?bomb');
    expect(got.body.length).toBe(1024 * 1024);
    expect(got.truncated).toBe(true);
    await client.close();
  });

  test('a redirect that leaves the base URL\'s path is answered as itself, not followed with the credentials', async () => {
    const base = new URL(`${upstream.url}/api/v1`);
    base.username = 'apiuser';
    base.password = 'S3CRET';
    const client = new ApiClient(base.href, undefined, { 'X-Api-Key': 'k', Cookie: 'sid=s' });
    const before = upstream.requests.length;
    // /api/v1/redirect/1 answers 302 with Location /echo, on the same origin but outside /api/v1.
    const answer = await client.request('GET', '/redirect/1');
    expect(answer).toMatchObject({ status: 302, headers: { location: '/echo' } });
    expect(upstream.requests.slice(before).map((r) => r.url)).toEqual(['/api/v1/redirect/1']);
    expect((responseToResult(answer).content[0] as { text: string }).text).toBe(`HTTP 302: redirect to ${upstream.url}/echo (outside the API's base URL: not followed, so the API's credentials are not sent there)`);
    await client.close();
  });

  test('a HEAD redirected with 303 stays a HEAD; a POST becomes a GET', async () => {
    const client = new ApiClient(upstream.url);
    const before = upstream.requests.length;
    expect((await client.request('HEAD', '/see-other')).method).toBe('HEAD');
    expect((await client.request('POST', '/see-other', { a: 1 })).method).toBe('GET');
    expect(upstream.requests.slice(before).map((r) => `${r.method} ${r.url}`)).toEqual(['HEAD /see-other', 'HEAD /echo?after=303', 'POST /see-other', 'GET /echo?after=303']);
    await client.close();
  });

  test('keeps the query of the base URL on every request, and refuses a fragment', async () => {
    const client = new ApiClient(`${upstream.url}/v1?api-version=2024`);
    const got = await client.request('GET', '/users', { page: 2 });
    expect(JSON.parse(got.body.toString()).echo.url).toBe('/v1/users?api-version=2024&page=2');
    const before = upstream.requests.length;
    expect(await client.testConnection()).toBe(true);
    expect(upstream.requests[before].url).toBe('/v1/?api-version=2024');
    await client.close();
    expect(() => new ApiClient(`${upstream.url}/v1#frag`)).toThrow('may not have a #fragment');
  });
});

describe('results', () => {
  const response = (status: number, type: string, body: Buffer | string, more: Partial<ApiResponse> = {}): ApiResponse => ({ status, method: 'GET', headers: type ? { 'content-type': type } : {}, body: Buffer.from(body), truncated: false, url: 'http://x/', ...more });
  test('read JSON past a byte order mark, and an untyped body that is text as text', () => {
    expect(responseToResult(response(200, 'application/json', '\ufeff{"a":1}')).structuredContent).toEqual({ a: 1 });
    expect(responseToResult(response(200, '', 'plain words\n')).content).toEqual([{ type: 'text', text: 'plain words\n' }]);
    expect(responseToResult(response(200, '', Buffer.from([0, 1, 2, 0xff]))).content[0]).toEqual({ type: 'text', text: 'binary response: unknown type, 4 bytes' });
  });
  test('add the headers that carry meaning in a block of their own; all but Set-Cookie for HEAD; Retry-After in errors', () => {
    const headers = { 'content-type': 'application/json', location: '/things/7', link: '</things?page=2>; rel="next"', 'set-cookie': 'sid=secret', etag: '"e"' };
    const created = responseToResult(response(201, 'application/json', '{"id":7}', { headers }));
    expect(created.structuredContent).toEqual({ id: 7 });
    expect(JSON.parse((created.content[0] as { text: string }).text)).toEqual({ id: 7 });
    expect(created.content[1]).toEqual({ type: 'text', text: 'response headers (HTTP 201):\nlocation: /things/7\nlink: </things?page=2>; rel="next"\netag: "e"' });
    const head = responseToResult(response(200, '', '', { method: 'HEAD', headers }));
    expect((head.content[1] as { text: string }).text).toContain('etag: "e"');
    expect((head.content[1] as { text: string }).text).not.toContain('secret');
    expect(responseToResult(response(200, 'application/json', '{}')).content).toHaveLength(1);
    const busy = responseToResult(response(429, 'text/plain', 'slow down', { headers: { 'content-type': 'text/plain', 'retry-after': '30' } }));
    expect(busy.isError).toBe(true);
    expect((busy.content[0] as { text: string }).text).toBe('UPSTREAM_ERROR: HTTP 429: slow down [retry-after: 30]');
    // A value no valid one comes near (seconds or a 29-character date) is cut.
    const endless = responseToResult(response(429, 'text/plain', 'slow down', { headers: { 'content-type': 'text/plain', 'retry-after': '9'.repeat(10_000) } }));
    expect((endless.content[0] as { text: string }).text).toBe(`UPSTREAM_ERROR: HTTP 429: slow down [retry-after: ${'9'.repeat(64)}…]`);
  });
  test('say when a result cut for maxResultBytes came from a response already cut', () => {
    const cut = responseToResult(response(200, 'text/plain', 'x'.repeat(5000), { truncated: true }), 2_000);
    expect((cut.content[0] as { text: string }).text).toMatch(/\[result cut at 2000 of \d+ bytes \(the response itself was cut at 5000 bytes, maxResponseBytes\)/);
  });
  test('turn JSON into pretty text plus structuredContent', () => {
    expect(responseToResult(response(200, 'application/json', '{"a":1}'))).toEqual({ content: [{ type: 'text', text: '{\n  "a": 1\n}' }], structuredContent: { a: 1 } });
    expect(responseToResult(response(200, 'application/json', '[1]')).structuredContent).toEqual({ result: [1] });
  });
  test('keep numbers as written: an integer past 2^53 stays exact in the text, and no structuredContent carries another', () => {
    const big = responseToResult(response(200, 'application/json', '{"id":12345678901234567890,"ratio":1.10,"list":[],"o":{"s":"a,b}"}}'));
    expect(big).toEqual({ content: [{ type: 'text', text: '{\n  "id": 12345678901234567890,\n  "ratio": 1.10,\n  "list": [],\n  "o": {\n    "s": "a,b}"\n  }\n}' }] });
    // Long digit runs that parse exactly keep their structuredContent.
    expect(responseToResult(response(200, 'application/json', '{"id":9007199254740991,"s":"12345678901234567890"}')).structuredContent).toEqual({ id: 9007199254740991, s: '12345678901234567890' });
    // Other forms parsing changes: out of a double's range, more digits than it holds.
    expect(responseToResult(response(200, 'application/json', '[1e400, 12345678901234567890e0]')).structuredContent).toBeUndefined();
    expect(responseToResult(response(200, 'application/json', '[0.30000000000000004, 1234567890123456]')).structuredContent).toEqual({ result: [0.30000000000000004, 1234567890123456] });
  });
  test.each([
    ['1234567890123456', true],
    ['x1234567890123456', true],
    ['[123456789012345, 1234567890123456]', true],
    ['123456789012345', false],
    ['12345678.90123456', false],
    ['123456789012345a1234567890', false],
    ['', false],
  ])('find a run of 16 digits in %j: %s', (text, found) => {
    expect(hasDigitRun(text, 16)).toBe(found);
  });
  test('show valid JSON nested deeper than JSON.stringify recurses as it came, not as "not valid JSON", without structuredContent', () => {
    const body = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    expect(responseToResult(response(200, 'application/json', body), 100_000)).toEqual({ content: [{ type: 'text', text: body }] });
  });
  test('keep a deeply nested body with long numbers to the budget: as it came, not indented into gigabytes', () => {
    const body = `${'['.repeat(16_000)}12345678901234567890${']'.repeat(16_000)}`;
    const before = process.memoryUsage().rss;
    const result = responseToResult(response(200, 'application/json', body), 100_000);
    expect(result).toEqual({ content: [{ type: 'text', text: body }] });
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
  });
  test('send JSON as it came when only its indented copy is over maxResultBytes', () => {
    const compact = JSON.stringify(Array.from({ length: 300 }, (_, i) => [i, i]));
    const result = responseToResult(response(200, 'application/json', compact), compact.length + 200);
    expect((result.content[0] as { text: string }).text).toBe(compact);
    expect(result.structuredContent).toBeUndefined();
  });
  test('name an exhausted rate limit in an error, with its reset time', () => {
    const limited = responseToResult(response(403, 'application/json', '{"message":"API rate limit exceeded"}', { headers: { 'content-type': 'application/json', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1800000000' } }));
    expect((limited.content[0] as { text: string }).text).toMatch(/HTTP 403: .*rate limit exceeded.* \[rate limit exhausted, resets at 2027-01-15T08:00:00.000Z, in \d+ s\]$/);
    const draft = responseToResult(response(429, '', '', { headers: { 'ratelimit-remaining': '0', 'ratelimit-reset': '12', 'retry-after': '12' } }));
    expect((draft.content[0] as { text: string }).text).toBe('UPSTREAM_ERROR: HTTP 429 [retry-after: 12] [rate limit exhausted, resets in 12 s]');
    expect((responseToResult(response(403, '', 'no', { headers: { 'x-ratelimit-remaining': '10' } })).content[0] as { text: string }).text).toBe('UPSTREAM_ERROR: authentication error: HTTP 403: no');
    expect((responseToResult(response(403, '', 'no', { headers: { 'x-ratelimit-remaining': '' } })).content[0] as { text: string }).text).toBe('UPSTREAM_ERROR: authentication error: HTTP 403: no');
  });
  test('answer a 304 or a 3xx without a location as what it is, not an error', () => {
    expect(responseToResult(response(304, '', ''))).toEqual({ content: [{ type: 'text', text: 'HTTP 304' }] });
    expect((responseToResult(response(304, '', '', { headers: { location: 'https://elsewhere.example/x' } })).content[0] as { text: string }).text).toBe('HTTP 304');
  });
  test('return text as text, summarise binary and report an empty body', () => {
    expect(responseToResult(response(200, 'text/plain', 'hi')).content).toEqual([{ type: 'text', text: 'hi' }]);
    expect(responseToResult(response(200, 'application/octet-stream', Buffer.alloc(10))).content[0]).toEqual({ type: 'text', text: 'binary response: application/octet-stream, 10 bytes' });
    expect(responseToResult(response(204, '', '')).content[0]).toEqual({ type: 'text', text: 'HTTP 204' });
  });
  test('decode text in the charset the response names', () => {
    expect(responseToResult(response(200, 'text/plain; charset=iso-8859-1', Buffer.from([0x68, 0xe9]))).content).toEqual([{ type: 'text', text: 'h\u00e9' }]);
    expect(responseToResult(response(200, 'text/plain; charset="Shift_JIS"', Buffer.from([0x82, 0xa0]))).content).toEqual([{ type: 'text', text: '\u3042' }]);
    expect(responseToResult(response(200, 'text/plain; charset=no-such-charset', 'caf\u00e9')).content).toEqual([{ type: 'text', text: 'caf\u00e9' }]);
  });
  test('stay within maxResultBytes: structuredContent goes first, then the text is cut, saying so', () => {
    const json = JSON.stringify({ data: 'x'.repeat(3000) });
    const both = responseToResult(response(200, 'application/json', json), 10_000);
    expect(both.structuredContent).toEqual({ data: 'x'.repeat(3000) });
    const textOnly = responseToResult(response(200, 'application/json', json), 4_000);
    expect(textOnly.structuredContent).toBeUndefined();
    expect(JSON.parse((textOnly.content[0] as { text: string }).text)).toEqual({ data: 'x'.repeat(3000) });
    const cut = responseToResult(response(200, 'application/json', json), 2_000);
    const text = (cut.content[0] as { text: string }).text;
    expect(cut.structuredContent).toBeUndefined();
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(2_000);
    expect(text).toMatch(/\n\[result cut at 2000 of \d+ bytes: ask for less/);
    // Counted as written: a control character is six bytes of JSON.
    const controls = responseToResult(response(200, 'text/plain', '\u0001'.repeat(3000)), 2_000);
    const written = JSON.stringify((controls.content[0] as { text: string }).text).length - 2;
    expect(written).toBeLessThanOrEqual(2_000);
    expect(written).toBeGreaterThan(1_500);
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(2992, 1)]);
    const image = responseToResult(response(200, 'image/png', png), 2_000);
    expect(image.content[0]).toEqual({ type: 'text', text: 'image response: image/png, 3000 bytes, over maxResultBytes (2000) as base64' });
    const multibyte = responseToResult(response(200, 'text/plain', '\u00e9'.repeat(3000)), 2_000);
    expect(Buffer.byteLength((multibyte.content[0] as { text: string }).text)).toBeLessThanOrEqual(2_000);
    expect((multibyte.content[0] as { text: string }).text).not.toContain('\ufffd');
  });
  test('make HTTP errors isError results with the status and a bounded excerpt', () => {
    const result = responseToResult(response(500, 'application/json', 'e'.repeat(10_000)));
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('UPSTREAM_ERROR');
    const text = (result.content[0] as { text: string }).text;
    expect(text.startsWith('UPSTREAM_ERROR: HTTP 500: eee')).toBe(true);
    expect(text.length).toBeLessThan(2100);
  });
});
