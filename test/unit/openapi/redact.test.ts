import type { ApiResponse } from '../../../workers/openapi/api-client';
import { isCredentialName, Redaction, secretForms, type SentCredential } from '../../../workers/openapi/redact';
import { bodyShownAsText, responseToResult } from '../../../workers/openapi/results';

const TOKEN = 'tok-3f9a1c7e5b2d4068';
const BEARER: SentCredential = { name: 'authorization', value: `Bearer ${TOKEN}`, in: 'header' };

function header(name: string, value: string): SentCredential {
  return { name, value, in: 'header' };
}

function response(body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }, extra: Partial<ApiResponse> = {}): ApiResponse {
  return { status: 200, method: 'GET', headers, body: typeof body === 'string' ? Buffer.from(body) : body, truncated: false, url: 'http://api.example/v1/things', ...extra };
}

/** What a tool result would show of `res` once redacted. */
function shown(sent: SentCredential[], res: ApiResponse): string {
  const redaction = new Redaction(sent);
  return JSON.stringify(responseToResult(redaction.response(res, bodyShownAsText(res))));
}

describe('isCredentialName', () => {
  test.each([
    ['Authorization', true], ['Proxy-Authorization', true], ['Cookie', true], ['X-Api-Key', true], ['PRIVATE-TOKEN', true],
    ['Ocp-Apim-Subscription-Key', true], ['X-Session-Id', true], ['appid', true], ['code', true], ['X-Custom', true],
    ['Accept', false], ['Accept-Language', false], ['Content-Type', false], ['User-Agent', false], ['X-Request-Id', false],
    ['X-Correlation-Id', false], ['X-GitHub-Api-Version', false], ['api-version', false], ['traceparent', false], ['If-None-Match', false],
  ])('%s: %s', (name, want) => {
    expect(isCredentialName(name)).toBe(want);
  });
});

describe('secretForms', () => {
  const texts = (c: SentCredential) => secretForms(c).map((f) => f.text);

  test('a scheme\'s token counts alone, longest form first, each with a marker naming the header', () => {
    const forms = secretForms(BEARER);
    expect(forms.map((f) => f.text)).toEqual([`Bearer%20${TOKEN}`, `Bearer ${TOKEN}`, `Bearer+${TOKEN}`, TOKEN]);
    expect(new Set(forms.map((f) => f.marker))).toEqual(new Set(['[redacted: Authorization]']));
  });

  test('Basic credentials count as sent, decoded and as the password alone, never the user name alone', () => {
    const basic = (pair: string) => texts(header('Authorization', `Basic ${Buffer.from(pair).toString('base64')}`));
    const long = basic('bot-user:pa55word-long');
    expect(long).toEqual(expect.arrayContaining([Buffer.from('bot-user:pa55word-long').toString('base64'), 'bot-user:pa55word-long', 'bot-user%3Apa55word-long', 'pa55word-long']));
    expect(long).not.toContain('bot-user');
    // A password under 8 characters alone would mangle text: only with its user.
    expect(basic('bot:short1')).toContain('bot:short1');
    expect(basic('bot:short1')).not.toContain('short1');
    // Not base64 of text: no decoded forms.
    expect(texts(header('Authorization', 'Basic not/base64!!'))).toEqual(['Basic%20not%2Fbase64!!', 'Basic+not%2Fbase64!!', 'Basic not\\/base64!!', 'Basic not/base64!!', 'not%2Fbase64!!', 'not\\/base64!!', 'not/base64!!']);
  });

  test('percent-encoded, JSON-escaped (with PHP\'s \\/) and HTML-escaped forms', () => {
    expect(texts(header('X-Api-Key', 'ab/cd+ef"gh&=='))).toEqual(
      expect.arrayContaining(['ab/cd+ef"gh&==', 'ab%2Fcd%2Bef%22gh%26%3D%3D', 'ab/cd+ef\\"gh&==', 'ab\\/cd+ef\\"gh&==', 'ab/cd+ef&quot;gh&amp;==']),
    );
  });

  test('nothing under 8 characters, and nothing of a header that is no credential', () => {
    expect(texts(header('X-Api-Key', '1234567'))).toEqual([]);
    expect(texts(header('Authorization', 'Bearer abc'))).toEqual(['Bearer%20abc', 'Bearer abc', 'Bearer+abc']);
    expect(texts(header('Accept', 'application/vnd.github+json'))).toEqual([]);
    expect(texts(header('X-GitHub-Api-Version', '2022-11-28'))).toEqual([]);
  });

  test('each cookie\'s value counts alone; a base URL query parameter is named as one', () => {
    expect(texts(header('Cookie', 'theme=dark; session=s3ss10n-value'))).toEqual(expect.arrayContaining(['s3ss10n-value', 'theme=dark; session=s3ss10n-value']));
    expect(texts(header('Cookie', 'theme=dark; session=s3ss10n-value'))).not.toContain('dark');
    expect(secretForms({ name: 'api_key', value: 'qk-0a1b2c3d', in: 'query' })[0]).toMatchObject({ text: 'qk-0a1b2c3d', marker: '[redacted: query api_key]' });
  });
});

describe('Redaction', () => {
  test('returns the same text and response when no credential occurs', () => {
    const redaction = new Redaction([BEARER, header('X-Api-Key', 'key-8c1d2e3f')]);
    const text = 'nothing secret here';
    expect(redaction.text(text)).toBe(text);
    const res = response('{"a":1}', { 'content-type': 'application/json', link: '</x?page=2>' });
    expect(redaction.response(res, true)).toBe(res);
    expect(redaction.names).toEqual([]);
    expect(new Redaction([]).response(res, true)).toBe(res);
  });

  test('replaces the whole value before its token, in one pass', () => {
    const redaction = new Redaction([BEARER]);
    expect(redaction.text(`sent "Bearer ${TOKEN}", token ${TOKEN}; Bearer%20${TOKEN}`)).toBe('sent "[redacted: Authorization]", token [redacted: Authorization]; [redacted: Authorization]');
    expect(redaction.names).toEqual(['Authorization']);
  });

  test('takes credentials out of JSON text and structuredContent, keys included, and keeps the rest', () => {
    const body = JSON.stringify({ headers: { authorization: `Bearer ${TOKEN}` }, [TOKEN]: true, note: 'model-words-9876543210', url: `/x?key=${encodeURIComponent('ab/cd+ef')}` });
    const out = shown([BEARER, header('X-Key', 'ab/cd+ef')], response(body));
    expect(out).not.toContain(TOKEN);
    expect(out).not.toContain('ab%2Fcd%2Bef');
    const result = JSON.parse(out) as { structuredContent: Record<string, unknown> };
    expect(result.structuredContent).toEqual({ headers: { authorization: '[redacted: Authorization]' }, '[redacted: Authorization]': true, note: 'model-words-9876543210', url: '/x?key=[redacted: X-Key]' });
  });

  test('a numeric credential echoed as a bare JSON number becomes the marker as a string, so the body stays JSON', () => {
    const account = header('X-Account', '1234567890');
    // Bare, inside a longer number, in an array, as a string, inside a string with commas around it, and with quotes and escapes before it.
    const body = '{"q": "say \\"hi\\"", "account": 1234567890, "big": 991234567890.5e3, "list": [1234567890,2], "text": "1234567890", "note": "a, 1234567890, b"}';
    const out = JSON.parse(shown([account], response(body))) as { structuredContent?: Record<string, unknown>; content: Array<{ text: string }> };
    expect(out.structuredContent).toEqual({
      q: 'say "hi"',
      account: '[redacted: X-Account]',
      big: '[redacted: X-Account]',
      list: ['[redacted: X-Account]', 2],
      text: '[redacted: X-Account]',
      note: 'a, [redacted: X-Account], b',
    });
    expect(out.content[0].text).not.toContain('1234567890');
    // Not JSON: the value is replaced where it stands, no quotes added.
    expect(shown([account], response('account 1234567890.', { 'content-type': 'text/plain' }))).toContain('account [redacted: X-Account].');
  });

  test('redacts before an error excerpt is cut, so no half token shows', () => {
    const page = `${'x'.repeat(1990)} Authorization: Bearer ${TOKEN}`;
    const out = shown([BEARER], response(page, { 'content-type': 'text/plain' }, { status: 500 }));
    expect(out).toContain('UPSTREAM_ERROR');
    expect(out).not.toContain(TOKEN.slice(0, 6));
  });

  test('redacts response headers and the URL; leaves a binary body it will not show unread', () => {
    const redaction = new Redaction([BEARER]);
    const res = response(Buffer.from(`bytes ${TOKEN}`), { 'content-type': 'application/zip', link: `</next?t=${TOKEN}>; rel="next"` }, { url: `http://api.example/x?t=${TOKEN}` });
    expect(bodyShownAsText(res)).toBe(false);
    const out = redaction.response(res, bodyShownAsText(res));
    expect(out.headers.link).toBe('</next?t=[redacted: Authorization]>; rel="next"');
    expect(out.url).toBe('http://api.example/x?t=[redacted: Authorization]');
    expect(out.body).toBe(res.body);
    expect(JSON.stringify(responseToResult(out))).not.toContain(TOKEN);
  });

  test('redacts an application/octet-stream body, which is shown when it is text', () => {
    const res = response(Buffer.from(`{"echo":"${TOKEN}"}`), { 'content-type': 'application/octet-stream' });
    expect(bodyShownAsText(res)).toBe(true);
    const result = responseToResult(new Redaction([BEARER]).response(res, bodyShownAsText(res)));
    expect(result.structuredContent).toEqual({ echo: '[redacted: Authorization]' });
    expect(JSON.stringify(result)).not.toContain(TOKEN);
  });

  test('replaces bytes in any ASCII-compatible charset, the rest as it was', () => {
    const latin1 = Buffer.concat([Buffer.from([0x68, 0xe9, 0x20]), Buffer.from(TOKEN)]);
    const out = new Redaction([BEARER]).response(response(latin1, { 'content-type': 'text/plain; charset=ISO-8859-1' }), true);
    expect(JSON.stringify(responseToResult(out))).toContain('h\u00e9 [redacted: Authorization]');
  });

  test('a body cut at maxResponseBytes inside a credential loses its start too', () => {
    const cut = response(`{"auth":"Bearer ${TOKEN.slice(0, 12)}`, { 'content-type': 'application/json' }, { truncated: true });
    const redaction = new Redaction([BEARER]);
    expect(redaction.response(cut, true).body.toString()).toBe('{"auth":"[redacted: Authorization]');
    // Under 8 characters of it: left, as any text.
    expect(redaction.response(response('{"auth":"Bearer', undefined, { truncated: true }), true).body.toString()).toBe('{"auth":"Bearer');
  });

  test('a long cut body that ends in the start of a credential: only its tail changes, and one that does not is not copied', () => {
    const redaction = new Redaction([BEARER]);
    const filler = 'x'.repeat(100_000);
    const cut = redaction.response(response(`${filler}${TOKEN.slice(0, 10)}`, undefined, { truncated: true }), true);
    expect(cut.body.toString()).toBe(`${filler}[redacted: Authorization]`);
    const clean = response(`${filler}.`, undefined, { truncated: true });
    expect(redaction.response(clean, true).body).toBe(clean.body);
  });

  test('an auth provider\'s token and a configured one of the same value: one marker', () => {
    const redaction = new Redaction([BEARER, header('Authorization', `Bearer ${TOKEN}`), header('X-Request-Id', 'req-0000001234')]);
    expect(redaction.text(`${TOKEN} req-0000001234`)).toBe('[redacted: Authorization] req-0000001234');
  });
});
