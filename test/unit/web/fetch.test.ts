import iconv from 'iconv-lite';
import { McpvisorError } from '../../../protocol/errors';
import { isBlockedAddress } from '../../../workers/common/address-guard';
import { fetchWebContent } from '../../../workers/web/content';
import { WebContentFetcher } from '../../../workers/web/web-content-fetcher';
import { HttpClient } from '../../../workers/web/http-client';
import { fixtureText, send, startSite, type LocalSite } from '../../fixtures/web/local-site';

let site: LocalSite;
const open = { allowPrivateNetwork: true, timeoutMs: 5000 };

beforeAll(async () => {
  site = await startSite({
    '/article': send(fixtureText('article.html')),
    '/links': send(fixtureText('no-article.html')),
    '/div-article': send(fixtureText('article.html').replace('<article>', '<div class="post-body">').replace('</article>', '</div>')),
    '/text': send('plain words\nsecond line', 'text/plain'),
    '/json': send('{"a":1,"b":[2]}', 'application/json'),
    '/json-deep': send(`${'['.repeat(4_000)}${']'.repeat(4_000)}`, 'application/json'),
    '/json-wrapped': send(`${'['.repeat(100)}${JSON.stringify(Array(20_000).fill(1))}${']'.repeat(100)}`, 'application/json'),
    '/image': send(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]), 'image/png'),
    // No Content-Type header at all.
    '/untyped-image': (_req, res) => res.writeHead(200).end(Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64)])),
    '/untyped-pdf': (_req, res) => res.writeHead(200).end('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n'),
    '/untyped-text': (_req, res) => res.writeHead(200).end('plain words\r\n\tindented'),
    '/untyped-utf16': (_req, res) => res.writeHead(200).end(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('wide words', 'utf16le')])),
    '/missing': send('<html><body>gone</body></html>', 'text/html', 404),
    '/server-error': send('oops', 'text/plain', 500),
    '/latin1': send(iconv.encode('<html><head><title>Caf\u00e9</title></head><body><p>Cr\u00e8me br\u00fbl\u00e9e \u00e0 la carte</p></body></html>', 'latin1'), 'text/html; charset=ISO-8859-1'),
    '/meta-charset': send(iconv.encode('<html><head><meta charset="windows-1251"></head><body><p>\u041f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440</p></body></html>', 'win1251'), 'text/html'),
    '/redirect-1': (_req, res) => res.writeHead(302, { location: '/redirect-2' }).end(),
    '/redirect-2': (_req, res) => res.writeHead(301, { location: '/article' }).end(),
    '/loop': (_req, res) => res.writeHead(302, { location: '/loop' }).end(),
    '/to-metadata': (_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
    '/to-file': (_req, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end(),
    '/to-data': (_req, res) => res.writeHead(301, { location: 'data:text/html,<p>hi</p>' }).end(),
    '/slow': (_req, res) => {
      const timer = setTimeout(() => res.end('late'), 3000);
      res.on('close', () => clearTimeout(timer));
    },
    '/huge': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      let sent = 0;
      const pump = () => {
        while (sent < 64 * 1024 * 1024) {
          sent += 64 * 1024;
          if (!res.write(Buffer.alloc(64 * 1024, 0x61))) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => (sent = Number.POSITIVE_INFINITY));
      pump();
    },
  });
});

afterAll(() => site.close());

describe('fetchWebContent', () => {
  it('turns an article into Markdown with headings and a GFM table, without nav, aside or footer text', async () => {
    const result = await fetchWebContent(`${site.origin}/article`, open);
    expect(result.success).toBe(true);
    const content = result.data!.content;
    expect(content).toMatch(/^# Token buckets explained/m);
    expect(content).toMatch(/^## Comparison table/m);
    expect(content).toMatch(/\| Algorithm \| Bursts \|/);
    expect(content).toMatch(/\| --- \| --- \|/);
    expect(content).toContain(`[the limits page](${site.origin}/docs/limits)`);
    for (const noise of ['NAVIGATION-LINK-ABOUT', 'SIDEBAR-TEXT', 'FOOTER-TEXT', 'tracking', 'color: red']) expect(content).not.toContain(noise);
  });

  it('finds the article with Readability when the page has no <article> element', async () => {
    const result = await fetchWebContent(`${site.origin}/div-article`, open);
    const content = result.data!.content;
    expect(content).toMatch(/^# Token buckets explained/m);
    expect(content).toMatch(/\| Algorithm \| Bursts \|/);
    expect(content).toContain('Paragraph 6 of the article');
    for (const noise of ['NAVIGATION-LINK-ABOUT', 'SIDEBAR-TEXT', 'FOOTER-TEXT']) expect(content).not.toContain(noise);
  });

  it('reads the metadata from meta tags, OpenGraph and JSON-LD, with the final URL', async () => {
    const result = await fetchWebContent(`${site.origin}/redirect-1`, open);
    expect(result.data?.metadata).toEqual({
      title: 'Token buckets explained',
      description: 'How token buckets limit request rates.',
      author: 'Ada Example',
      publishDate: '2024-03-05T10:00:00Z',
      url: `${site.origin}/article`,
    });
  });

  it('falls back to the body less navigation and footer when there is no article', async () => {
    const result = await fetchWebContent(`${site.origin}/links`, open);
    expect(result.success).toBe(true);
    expect(result.data!.content).toContain(`[Alpha](${site.origin}/a)`);
    expect(result.data!.content).not.toContain('NAVIGATION-ONLY');
    expect(result.data!.content).not.toContain('FOOTER-TEXT');
  });

  it('returns plain text as it is and JSON pretty-printed', async () => {
    expect((await fetchWebContent(`${site.origin}/text`, open)).data?.content).toBe('plain words\nsecond line');
    expect((await fetchWebContent(`${site.origin}/json`, open)).data?.content).toBe('{\n  "a": 1,\n  "b": [\n    2\n  ]\n}');
  });

  it('returns JSON as it came when indenting it would more than quadruple it', async () => {
    // 8 KB nested 4,000 deep was indented into 32,000,000 characters; 20,000 numbers 100 deep, into 4 MB.
    for (const [route, body] of [['/json-deep', `${'['.repeat(4_000)}${']'.repeat(4_000)}`], ['/json-wrapped', `${'['.repeat(100)}${JSON.stringify(Array(20_000).fill(1))}${']'.repeat(100)}`]]) {
      const content = (await fetchWebContent(`${site.origin}${route}`, open)).data!.content;
      expect(content.length).toBe(body.length);
      expect(content).toBe(body);
    }
  });

  it('decodes a charset from the header and from a meta tag', async () => {
    expect((await fetchWebContent(`${site.origin}/latin1`, open)).data?.content).toContain('Cr\u00e8me br\u00fbl\u00e9e \u00e0 la carte');
    expect((await fetchWebContent(`${site.origin}/meta-charset`, open)).data?.content).toContain('\u041f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440');
  });

  it.each([
    ['an invalid URL', 'not a url', 'INVALID_URL', /invalid URL/],
    ['a file: URL', 'file:///etc/passwd', 'INVALID_URL', /unsupported URL scheme/],
    ['a 404', '/missing', 'HTTP_ERROR', /HTTP 404/],
    ['a 500', '/server-error', 'HTTP_ERROR', /HTTP 500/],
    ['a redirect loop', '/loop', 'TOO_MANY_REDIRECTS', /more than 5 redirects/],
    ['a body over the cap', '/huge', 'TOO_LARGE', /over the 1048576-byte cap/],
    ['a slow server', '/slow', 'TIMEOUT', /did not answer within 300 ms/],
  ])('fails without throwing on %s', async (_name, target, code, message) => {
    const url = target.startsWith('/') ? `${site.origin}${target}` : target;
    const result = await fetchWebContent(url, { ...open, maxBodyBytes: 1024 * 1024, timeoutMs: 300 });
    expect(result).toMatchObject({ success: false, code });
    expect(result.error).toMatch(message);
    if (code === 'HTTP_ERROR') expect(result.status).toBe(Number(target === '/missing' ? 404 : 500));
  });

  it.each([
    ['a binary type', '/image', 'image/png', '[image/png: binary data, 8 bytes. Not text: only this summary is returned.]'],
    ['binary bytes without a Content-Type', '/untyped-image', 'image/png', '[image/png: PNG image, 72 bytes, no Content-Type. Not shown as an image: its header gives no pixel size; only this summary is returned.]'],
    // Whether pdf.js is installed or not (ts-jest cannot import it), this is no PDF it can read.
    ['a PDF without a Content-Type', '/untyped-pdf', 'application/pdf', /^\[application\/pdf: PDF document, version 1\.7, 45 bytes, no Content-Type\. Its text is not extracted \([^)]+\): only this summary is returned\.\]$/],
  ])('summarises %s, naming its type and size', async (_name, target, contentType, summary) => {
    const result = await fetchWebContent(`${site.origin}${target}`, open);
    expect(result).toMatchObject({ success: true, data: { content: typeof summary === 'string' ? summary : expect.stringMatching(summary), metadata: { contentType } } });
  });

  it('returns an untyped body that is text, UTF-16 with a BOM included', async () => {
    expect((await fetchWebContent(`${site.origin}/untyped-text`, open)).data?.content).toBe('plain words\r\n\tindented');
    expect((await fetchWebContent(`${site.origin}/untyped-utf16`, open)).data?.content).toBe('wide words');
  });

  it("answers TIMEOUT, not CANCELLED, when the caller's signal ends the fetch at the call's deadline", async () => {
    const deadline = new AbortController();
    const cancel = new AbortController();
    const [timedOut, cancelled] = [
      fetchWebContent(`${site.origin}/slow`, { ...open, signal: deadline.signal }),
      fetchWebContent(`${site.origin}/slow`, { ...open, signal: cancel.signal }),
    ];
    // As a pool thread aborts a call at its deadline (protocol/thread-runtime.ts), and as a cancel does.
    setTimeout(() => deadline.abort(new McpvisorError('TIMEOUT', 'the call ran past its 500 ms deadline')), 100);
    setTimeout(() => cancel.abort(new McpvisorError('CANCELLED', 'the call was cancelled')), 100);
    expect(await timedOut).toMatchObject({ success: false, code: 'TIMEOUT', error: `${site.origin}/slow did not answer before the call's deadline` });
    expect(await cancelled).toMatchObject({ success: false, code: 'CANCELLED' });
  });

  it('fails on a refused connection and on a name that does not resolve', async () => {
    const closed = await startSite({});
    await closed.close();
    expect(await fetchWebContent(`${closed.origin}/`, open)).toMatchObject({ success: false, code: 'CONNECTION_REFUSED' });
    expect(await fetchWebContent('http://no-such-host.invalid/', open)).toMatchObject({ success: false, code: 'DNS_FAILURE' });
  });
});

describe('the SSRF guard', () => {
  it.each([
    ['a loopback IP', () => `${site.origin}/article`],
    ['localhost by name', () => `http://localhost:${site.port}/article`],
    ['an IPv6 loopback', () => `http://[::1]:${site.port}/`],
    ['the metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ['a private address', () => 'http://10.1.2.3/'],
  ])('refuses %s by default', async (_name, url) => {
    const result = await fetchWebContent(url(), { timeoutMs: 2000 });
    expect(result).toMatchObject({ success: false, code: 'BLOCKED' });
    expect(result.error).toMatch(/private, loopback, link-local or metadata address; refused/);
    // The way to open the guard where the caller is: a library user's fetcher never reads the variable.
    expect(result.error).toContain('web.fetch.allowPrivateNetwork in a config file, an option of WebContentFetcher and HttpClient in the library');
  });

  it.each([
    ['127.0.0.1', true], ['127.1.2.3', true], ['0.0.0.0', true], ['10.9.8.7', true], ['172.31.0.1', true], ['192.168.1.1', true],
    ['169.254.169.254', true], ['100.64.0.1', true], ['224.0.0.1', true], ['255.255.255.255', true],
    ['::', true], ['::1', true], ['[::1]', true], ['::ffff:127.0.0.1', true], ['::ffff:7f00:1', true], ['::ffff:a00:1', true],
    ['::7f00:1', true], ['::127.0.0.1', true], ['fd00::1', true], ['fe80::1', true], ['ff02::1', true], ['64:ff9b::7f00:1', true],
    ['64:ff9b:1::1', true], ['::ffff:0:7f00:1', true], ['::ffff:0:a9fe:a9fe', true], ['fec0::1', true], ['2001:0:4136:e378::1', true], ['2002:7f00:1::1', true], ['100::1', true], ['2001:db8::1', true],
    ['not-an-ip', true], ['8.8.8.8', false], ['93.184.216.34', false], ['2606:4700:4700::1111', false], ['::ffff:8.8.8.8', false],
  ])('judges %s as blocked: %s', (address, blocked) => {
    expect(isBlockedAddress(address)).toBe(blocked);
  });

  it('refuses a fetch that would redirect to the metadata address, and follows it only with the guard open', async () => {
    // Refused here at its first hop, loopback: a redirect after an allowed hop needs a public
    // address, which tests may not reach. Each hop passes the same check (httpFetch's loop) and
    // the guarded lookup at connect time.
    const result = await fetchWebContent(`${site.origin}/to-metadata`, { timeoutMs: 2000 });
    expect(result.code).toBe('BLOCKED');
    const hop = await fetchWebContent(`${site.origin}/to-metadata`, { ...open, timeoutMs: 300 });
    expect(hop.code).not.toBe('BLOCKED');
  });

  it.each([
    ['/to-file', 'file:', 'file:///etc/passwd'],
    ['/to-data', 'data:', 'data:text/html,<p>hi</p>'],
  ])('refuses a redirect (%s) to a %s URL as BLOCKED, saying a redirect led there', async (path, scheme, target) => {
    const result = await fetchWebContent(`${site.origin}${path}`, open);
    expect(result).toMatchObject({ success: false, code: 'BLOCKED' });
    expect(result.error).toBe(`${site.origin}${path} redirected to a ${scheme} URL ('${target}'); refused (reached by a redirect): only http and https are followed`);
  });
});

describe('WebContentFetcher', () => {
  it('waits for its rate limit instead of failing', async () => {
    const before = site.countHits('/text');
    const fetcher = new WebContentFetcher(1, 300, { allowPrivateNetwork: true });
    const started = Date.now();
    const results = await Promise.all([1, 2, 3].map(() => fetcher.fetch(`${site.origin}/text`)));
    expect(results.every((result) => result.success)).toBe(true);
    expect(site.countHits('/text') - before).toBe(3);
    const times = site.hits.filter((hit) => hit.path === '/text').slice(-3).map((hit) => hit.at - started);
    expect(times[2] - times[0]).toBeGreaterThanOrEqual(550);
    expect(fetcher.getRateLimitStatus()).toMatchObject({ limit: 1, interval: 300 });
  });

  it('answers an invalid URL at once with a descriptive error', async () => {
    expect(await new WebContentFetcher().fetch('::')).toEqual({ success: false, error: "invalid URL: '::'", code: 'INVALID_URL' });
  });

  it('refuses a URL that is not http(s) without spending a token', async () => {
    const fetcher = new WebContentFetcher(1, 60_000);
    expect(await fetcher.fetch('ftp://example.com/file')).toMatchObject({ success: false, code: 'INVALID_URL', error: expect.stringMatching(/unsupported URL scheme ftp:/) });
    expect(fetcher.getRateLimitStatus()).toMatchObject({ requests: 0, waiting: 0 });
  });

  it.each([
    [-1, 'timeout must be a positive number of milliseconds up to 4294967295, got -1'],
    [0, 'timeout must be a positive number of milliseconds up to 4294967295, got 0'],
    [Number.NaN, 'timeout must be a positive number of milliseconds up to 4294967295, got NaN'],
    [2 ** 32, 'timeout must be a positive number of milliseconds up to 4294967295, got 4294967296'],
    ['5000', 'timeout must be a positive number of milliseconds up to 4294967295, got string "5000"'],
  ])('refuses a timeout of %p as INVALID_OPTIONS naming it, without spending a token', async (timeout, error) => {
    const fetcher = new WebContentFetcher(1, 60_000, { allowPrivateNetwork: true });
    expect(await fetcher.fetch(`${site.origin}/text`, { timeout: timeout as number })).toEqual({ success: false, code: 'INVALID_OPTIONS', error });
    expect(fetcher.getRateLimitStatus()).toMatchObject({ requests: 0, waiting: 0 });
  });

  it('rounds a fractional timeout up instead of failing, and takes null options as none', async () => {
    const fetcher = new WebContentFetcher(10, 1000, { allowPrivateNetwork: true });
    expect(await fetcher.fetch(`${site.origin}/text`, { timeout: 2500.5 })).toMatchObject({ success: true, data: { content: 'plain words\nsecond line' } });
    expect(await fetcher.fetch(`${site.origin}/text`, null)).toMatchObject({ success: true, data: { content: 'plain words\nsecond line' } });
  });

  it('reports a header it cannot send (a line break in its value) as INVALID_OPTIONS, not a network error', async () => {
    const fetcher = new WebContentFetcher(10, 1000, { allowPrivateNetwork: true });
    const result = await fetcher.fetch(`${site.origin}/text`, { headers: { 'X-Note': 'a\r\nX-Injected: 1' } });
    expect(result).toMatchObject({ success: false, code: 'INVALID_OPTIONS', error: expect.stringMatching(/^the request to http:\/\/127\.0\.0\.1:\d+\/text was not sent: .*header/) });
  });
});

describe('HttpClient', () => {
  it('is a singleton that GETs and POSTs through the guard', async () => {
    const client = HttpClient.getInstance();
    expect(HttpClient.getInstance()).toBe(client);
    await expect(client.get(`${site.origin}/text`)).rejects.toMatchObject({ code: 'BLOCKED' });
    client.configure({ allowPrivateNetwork: true });
    const got = await client.get(`${site.origin}/json`);
    expect(got).toMatchObject({ status: 200, text: '{"a":1,"b":[2]}' });
    const posted = await client.post(`${site.origin}/json`, { q: 1 });
    expect(posted.status).toBe(200);
    await expect(client.get(`${site.origin}/missing`)).rejects.toMatchObject({ code: 'HTTP_ERROR', status: 404 });
    await expect(client.get(`${site.origin}/text`, { timeoutMs: -5 })).rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: 'timeoutMs must be a positive number of milliseconds up to 4294967295, got -5' });
  });
});
