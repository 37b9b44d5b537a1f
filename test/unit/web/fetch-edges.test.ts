import zlib from 'node:zlib';
import type { IncomingHttpHeaders } from 'node:http';
import { httpFetch } from '../../../workers/web/http-fetch';
import { htmlToMarkdown } from '../../../workers/web/html-to-markdown';
import { startSite, type LocalSite } from '../../fixtures/web/local-site';

const open = { allowPrivateNetwork: true, timeoutMs: 5000 };
const page = '<html><head><title>Coded</title></head><body><p>compressed words</p></body></html>';
let home: LocalSite;
let other: LocalSite;
const seen: Record<string, IncomingHttpHeaders> = {};

beforeAll(async () => {
  other = await startSite({
    '/landing': (req, res) => {
      seen.other = req.headers;
      res.writeHead(200, { 'content-type': 'text/plain' }).end('landed');
    },
  });
  home = await startSite({
    '/away': (_req, res) => res.writeHead(302, { location: `http://localhost:${other.port}/landing` }).end(),
    '/here': (_req, res) => res.writeHead(302, { location: '/echo' }).end(),
    '/echo': (req, res) => {
      seen.home = req.headers;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ raw: req.rawHeaders }));
    },
    '/gzip': (_req, res) => res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(zlib.gzipSync(page)),
    '/br': (_req, res) => res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'br' }).end(zlib.brotliCompressSync(page)),
    '/zstd': (_req, res) => res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'zstd' }).end('xx'),
    '/utf16-bom-labelled-utf8': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Привет, мир', 'utf16le')])),
    '/utf8-bom-labelled-1251': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain; charset=windows-1251' }).end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('Привет, мир', 'utf8')])),
    '/bomb': (_req, res) => res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(zlib.gzipSync(Buffer.alloc(8 * 1024 * 1024))),
  });
});
afterAll(async () => {
  await home.close();
  await other.close();
});

describe('httpFetch', () => {
  const secrets = { Authorization: 'Bearer SECRET-TOKEN', Cookie: 'sid=SECRET-COOKIE', 'Proxy-Authorization': 'Basic x' };

  it('drops Authorization and Cookie on a redirect to another origin, and keeps them on the same origin', async () => {
    expect((await httpFetch(`${home.origin}/away`, { ...open, headers: secrets })).text).toBe('landed');
    expect(seen.other.authorization).toBeUndefined();
    expect(seen.other.cookie).toBeUndefined();
    expect(seen.other['proxy-authorization']).toBeUndefined();
    await httpFetch(`${home.origin}/here`, { ...open, headers: secrets });
    expect(seen.home).toMatchObject({ authorization: 'Bearer SECRET-TOKEN', cookie: 'sid=SECRET-COOKIE' });
  });

  it('lets a caller\'s header replace a default whatever its case: one User-Agent, the caller\'s', async () => {
    const raw = JSON.parse((await httpFetch(`${home.origin}/echo`, { ...open, headers: { 'User-Agent': 'MyUA/1.0', ACCEPT: 'text/html' } })).text).raw as string[];
    const values = (name: string) => raw.filter((_v, i) => i % 2 === 1 && raw[i - 1].toLowerCase() === name);
    expect(values('user-agent')).toEqual(['MyUA/1.0']);
    expect(values('accept')).toEqual(['text/html']);
  });

  it('decodes gzip and br bodies, refuses a coding it does not know, and caps what a body decompresses to', async () => {
    for (const coding of ['gzip', 'br']) expect((await httpFetch(`${home.origin}/${coding}`, open)).text).toBe(page);
    await expect(httpFetch(`${home.origin}/zstd`, open)).rejects.toMatchObject({ code: 'UNSUPPORTED_TYPE', message: expect.stringContaining("'zstd'") });
    await expect(httpFetch(`${home.origin}/bomb`, { ...open, maxBodyBytes: 1024 * 1024 })).rejects.toMatchObject({ code: 'TOO_LARGE' });
  });
});

describe('decoding', () => {
  it.each(['/utf16-bom-labelled-utf8', '/utf8-bom-labelled-1251'])('lets a byte order mark win over the Content-Type charset (%s)', async (path) => {
    const response = await httpFetch(`${home.origin}${path}`, open);
    expect(response.text).toBe('Привет, мир');
  });
});

describe('htmlToMarkdown, as real pages write it', () => {
  it('writes <pre> without <code> (Sphinx, Pygments) as a fenced block, unescaped', () => {
    const html = '<html><body><h1>Docs</h1><p>Intro text.</p><div class="highlight"><pre><span class="k">def</span> total(*args):\n    my_list = list(args)\n    return sum(my_list)\n</pre></div></body></html>';
    expect(htmlToMarkdown(html, 'http://x.example/').markdown).toContain('```\ndef total(*args):\n    my_list = list(args)\n    return sum(my_list)\n```');
  });

  it('keeps a code block\'s language on an article page, which Readability would strip with its classes', () => {
    const paragraph = '<p>' + 'Installing the tool takes a minute and needs nothing but a shell and a network connection to the registry. '.repeat(6) + '</p>';
    const html = `<html><head><title>Install</title></head><body><nav>menu</nav><div class="post"><h2>Install</h2>${paragraph}<pre><code class="language-bash">npm install --global tool</code></pre>${paragraph}</div></body></html>`;
    const { markdown, article } = htmlToMarkdown(html, 'http://x.example/');
    expect(article).toBe(true);
    expect(markdown).toContain('```bash\nnpm install --global tool\n```');
  });

  it('resolves links and images against <base href>', () => {
    const html = '<html><head><base href="https://docs.example.com/v2/"></head><body><p>See <a href="guide.html">guide</a> <img src="img/diagram.png" alt="d"></p></body></html>';
    const { markdown } = htmlToMarkdown(html, 'http://127.0.0.1:9/page');
    expect(markdown).toContain('[guide](https://docs.example.com/v2/guide.html)');
    expect(markdown).toContain('![d](https://docs.example.com/v2/img/diagram.png)');
  });

  it('reads meta names whatever their case, and a JSON-LD author given by @id', () => {
    const html = '<html><head><META NAME="Description" CONTENT="Upper description"><meta name="Author" content="Ann Author"></head><body><p>x</p></body></html>';
    expect(htmlToMarkdown(html, 'http://x.example/').metadata).toMatchObject({ description: 'Upper description', author: 'Ann Author' });
    const yoast = { '@context': 'https://schema.org', '@graph': [{ '@type': 'Article', headline: 'H', author: { '@id': 'https://x.example/#/person/1' } }, { '@type': 'Person', '@id': 'https://x.example/#/person/1', name: 'Yoast Person' }] };
    const ld = `<html><head><script type="application/ld+json">${JSON.stringify(yoast)}</script></head><body><p>x</p></body></html>`;
    expect(htmlToMarkdown(ld, 'http://x.example/').metadata.author).toBe('Yoast Person');
  });
});
