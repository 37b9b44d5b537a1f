import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorCodeOf } from '../../../protocol/results';
import { writeConfig } from '../../helpers/config';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { startSite, type LocalSite } from '../../fixtures/web/local-site';
import { ARRAY_JSON, CSV, HUGE_JSON, IMAGES, LATIN1_BYTES, MARKDOWN, nonHtmlRoutes, PLAIN_TEXT, png, SMALL_JSON, SVG, XML } from '../../fixtures/web/non-html-site';

/**
 * What `fetch_web_content` answers for what is not an HTML page, through the built
 * web-search-mcp over stdio, against a local site: API answers, text formats, feeds, images,
 * PDFs, archives, mislabelled and compressed bodies. Each kind names its type
 * (`metadata.contentType`, a `Type:` line); none comes back as mojibake or a bare refusal.
 */
type Result = {
  content: Array<{ type: string; text?: string; data?: string; mimeType?: string }>;
  isError?: boolean;
  structuredContent?: { content: string; metadata: Record<string, string>; totalLength: number; nextStartIndex?: number; snapshot?: { cached: boolean } };
};

/** The body cap of this file's server: 2 MiB, so a larger image is cut rather than read. */
const CAP = 2 * 1024 * 1024;
const APP_SHELL = '<html><head><title>App</title><script src="/app.js"></script></head><body><div id="root"></div><noscript>Enable JavaScript</noscript></body></html>';
const BIG_PNG = Buffer.concat([png(4000, 3000), Buffer.alloc(CAP + 1000)]);
/** The bound on image content: 1 MiB of raw bytes. */
const IMAGE_BOUND = 1024 * 1024;
const AT_BOUND_PNG = Buffer.concat([png(800, 600), Buffer.alloc(IMAGE_BOUND - png(800, 600).length)]);
const OVER_BOUND_PNG = Buffer.concat([AT_BOUND_PNG, Buffer.alloc(1)]);

let site: LocalSite;
let server: StdioConnection;
let client: Client;
/** What the client could not read from the server's stdout. */
const clientErrors: string[] = [];

beforeAll(async () => {
  site = await startSite({
    ...nonHtmlRoutes(),
    '/mislabelled/png-as-octet': (_req, res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(IMAGES.png),
    '/mislabelled/jpeg-as-png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(IMAGES.jpeg),
    '/at-bound.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(AT_BOUND_PNG),
    '/over-bound.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(OVER_BOUND_PNG),
    '/big.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(BIG_PNG.length) }).end(BIG_PNG),
    '/empty.txt': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(),
    '/spaces.json': (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(' \n '),
    '/no-content': (_req, res) => res.writeHead(204).end(),
    '/app-shell': (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(APP_SHELL),
    '/quiet.rss': (_req, res) => res.writeHead(200, { 'content-type': 'application/rss+xml' }).end('<rss><channel><title>Quiet</title></channel></rss>'),
    // No Content-Length: read until the cap.
    '/big-chunked.png': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'transfer-encoding': 'chunked' });
      res.write(BIG_PNG.subarray(0, 1024));
      res.end(BIG_PNG.subarray(1024));
    },
  });
  const config = writeConfig({ web: { fetch: { allowPrivateNetwork: true, rateLimit: 1000, rateLimitIntervalMs: 1000, maxBodyBytes: CAP } } });
  server = await connectStdio('web-search-mcp', ['--config', config]);
  client = server.client;
  client.onerror = (error) => clientErrors.push(error.message);
});

afterAll(async () => {
  await server?.close();
  await site?.close();
});

async function fetchPage(route: string, args: Record<string, unknown> = {}): Promise<Result> {
  return (await client.callTool({ name: 'fetch_web_content', arguments: { url: `${site.origin}${route}`, ...args } })) as Result;
}

const pretty = (json: string) => JSON.stringify(JSON.parse(json), null, 2);

it.each([
  ['/api/small.json', SMALL_JSON, 'application/json'],
  ['/api/array.json', ARRAY_JSON, 'application/json'],
  ['/api/vendor', SMALL_JSON, 'application/vnd.example+json'],
  ['/gzip.json', SMALL_JSON, 'application/json'],
  // Through the HTML converter `[` came out as `\[`, on one line.
  ['/mislabelled/json-as-html', SMALL_JSON, 'application/json'],
  ['/untyped/json', SMALL_JSON, 'application/json'],
])('returns the JSON of %s indented, as JSON', async (route, json, contentType) => {
  const result = await fetchPage(route);
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toMatchObject({ content: pretty(json), metadata: { contentType } });
  expect(textOf(result)).toBe(`URL: ${site.origin}${route}\nType: ${contentType}\n\n---\n\n${pretty(json)}`);
});

it('reads a 600 KB one-line JSON answer in windows that join into the same JSON', async () => {
  let joined = '';
  for (let start = 0, calls = 0; calls < 20; calls++) {
    const result = await fetchPage('/api/huge.json', { start_index: start, max_length: 100_000 });
    expect(result.isError).toBeFalsy();
    joined += result.structuredContent!.content;
    if (result.structuredContent!.nextStartIndex === undefined) break;
    start = result.structuredContent!.nextStartIndex;
  }
  expect(JSON.parse(joined)).toEqual(JSON.parse(HUGE_JSON));
  expect(joined).toBe(pretty(HUGE_JSON));
});

it.each([
  ['/notes.txt', PLAIN_TEXT, 'text/plain'],
  ['/readme.md', MARKDOWN, 'text/markdown'],
  ['/data.csv', CSV, 'text/csv'],
  ['/data.xml', XML, 'application/xml'],
  ['/logo.svg', SVG, 'image/svg+xml'],
  ['/download.txt', PLAIN_TEXT, 'text/plain'],
  ['/mislabelled/html-as-text', '<!doctype html><html><head><title>Served as text</title></head><body><p>Hello <b>bold</b> world.</p></body></html>', 'text/plain'],
  ['/br.txt', PLAIN_TEXT, 'text/plain'],
  ['/deflate.md', MARKDOWN, 'text/markdown'],
  ['/latin1.txt', LATIN1_BYTES.toString('latin1').replace('\x97', '\u2014'), 'text/plain'],
  ['/latin1-unlabelled.txt', LATIN1_BYTES.toString('latin1').replace('\x97', '\u2014'), 'text/plain'],
  ['/shift-jis.txt', '\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8', 'text/plain'],
])('returns the text of %s as it is, with its type', async (route, text, contentType) => {
  const result = await fetchPage(route);
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toMatchObject({ content: text, metadata: { contentType } });
  expect(textOf(result)).toContain(`\nType: ${contentType}\n`);
});

it('lists the items of an RSS feed, served as application/rss+xml, text/xml or text/html', async () => {
  const items =
    '# Example News\n\nhttps://news.example.com/ - All the news\n\nRSS feed, 2 items:\n\n' +
    '1. [First & foremost](https://news.example.com/1) (Mon, 23 Nov 2026 10:00:00 GMT)\n   The first story.\n' +
    '2. [Second <story>](https://news.example.com/2) (Tue, 24 Nov 2026 08:30:00 GMT)\n   Plain summary.';
  const routes = [['/feed.rss', 'application/rss+xml'], ['/feed-as-xml.rss', 'text/xml'], ['/feed-as-html.rss', 'text/html']];
  for (const [route, contentType] of routes) {
    const result = await fetchPage(route);
    expect(result.structuredContent).toMatchObject({ content: items, metadata: { title: 'Example News', description: 'All the news', contentType } });
  }
});

it('lists the entries of an Atom feed, an HTML title as text', async () => {
  const result = await fetchPage('/feed.atom');
  expect(result.structuredContent).toMatchObject({
    content:
      '# Example Blog\n\nhttps://blog.example.com/\n\nAtom feed, 2 items:\n\n' +
      '1. [Atom entry one](https://blog.example.com/one) (2026-11-24T09:00:00Z)\n   Summary one.\n' +
      '2. [Atom two](https://blog.example.com/two) (2026-11-20T12:00:00Z)\n   Body two.',
    metadata: { title: 'Example Blog', contentType: 'application/atom+xml' },
  });
});

const NOT_TEXT = 'Not text: only this summary is returned.';
const SHOWN = 'The image itself follows as image content.';

it.each([
  ['/img.png', 'image/png', `PNG image, 640×480 pixels, 2,124 bytes. ${SHOWN}`],
  ['/img.jpg', 'image/jpeg', `JPEG image, 1024×768 pixels, 36 bytes. ${SHOWN}`],
  ['/img.gif', 'image/gif', `GIF image, 16×9 pixels, 35 bytes. ${SHOWN}`],
  ['/img.webp', 'image/webp', `WebP image, 300×200 pixels, 26 bytes. ${SHOWN}`],
  ['/gzip.png', 'image/png', `PNG image, 640×480 pixels, 2,124 bytes. ${SHOWN}`],
  ['/archive.zip', 'application/zip', `zip archive of 1 file: hello.txt, 139 bytes. ${NOT_TEXT}`],
  ['/blob', 'application/zip', `zip archive of 1 file: hello.txt, 139 bytes, served as application/octet-stream. ${NOT_TEXT}`],
  ['/download.bin', 'application/zip', `zip archive of 1 file: hello.txt, 139 bytes, served as application/octet-stream, sent as a download (data.zip). ${NOT_TEXT}`],
  // Its bytes were returned as 2,126 characters of mojibake.
  ['/mislabelled/png-as-html', 'image/png', `PNG image, 640×480 pixels, 2,124 bytes, served as text/html. ${SHOWN}`],
  ['/untyped/png', 'image/png', `PNG image, 640×480 pixels, 2,124 bytes, no Content-Type. ${SHOWN}`],
  ['/big.png', 'image/png', `binary data, ${(BIG_PNG.length / 1e6).toFixed(1)} MB, over the body cap: not read. ${NOT_TEXT}`],
  ['/big-chunked.png', 'image/png', `PNG image, 4000×3000 pixels, more than ${(CAP / 1e6).toFixed(1)} MB (read up to the body cap). Not shown as an image: it was not read whole; only this summary is returned.`],
])('summarises %s: its type, size and what its first bytes say', async (route, contentType, facts) => {
  const result = await fetchPage(route);
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toMatchObject({ content: `[${contentType}: ${facts}]`, metadata: { contentType } });
  expect(textOf(result)).toContain(`\nType: ${contentType}\n`);
});

/** A digest of `bytes`: jest's toEqual compares a 1 MiB Buffer in 15 s. */
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** The content blocks' types, and the image block's bytes (their SHA-256, base64 decoded) and type when there is one. */
function blocks(result: Result): { types: string[]; bytes?: string; mimeType?: string } {
  const image = result.content.find((item) => item.type === 'image');
  return { types: result.content.map((item) => item.type), ...(image ? { bytes: sha256(Buffer.from(image.data!, 'base64')), mimeType: image.mimeType } : {}) };
}

it.each([
  ['/img.png', IMAGES.png, 'image/png'],
  ['/img.jpg', IMAGES.jpeg, 'image/jpeg'],
  ['/img.gif', IMAGES.gif, 'image/gif'],
  ['/img.webp', IMAGES.webp, 'image/webp'],
  ['/gzip.png', IMAGES.png, 'image/png'],
])('gives %s as an image block after its summary, the same bytes', async (route, bytes, mimeType) => {
  const result = await fetchPage(route);
  expect(result.isError).toBeFalsy();
  expect(blocks(result)).toEqual({ types: ['text', 'image'], bytes: sha256(bytes), mimeType });
  expect(textOf(result)).toContain(`[${mimeType}: `);
});

it.each([
  ['/mislabelled/png-as-octet', IMAGES.png, 'image/png'],
  ['/mislabelled/png-as-html', IMAGES.png, 'image/png'],
  ['/untyped/png', IMAGES.png, 'image/png'],
  ['/mislabelled/jpeg-as-png', IMAGES.jpeg, 'image/jpeg'],
])("types the image block of %s by its bytes, not the site's label", async (route, bytes, mimeType) => {
  expect(blocks(await fetchPage(route))).toEqual({ types: ['text', 'image'], bytes: sha256(bytes), mimeType });
});

it('gives an image of exactly 1 MiB as an image block; one a byte larger keeps the summary only, saying why', async () => {
  expect(blocks(await fetchPage('/at-bound.png'))).toEqual({ types: ['text', 'image'], bytes: sha256(AT_BOUND_PNG), mimeType: 'image/png' });
  const over = await fetchPage('/over-bound.png');
  expect(blocks(over)).toEqual({ types: ['text'] });
  expect(over.structuredContent?.content).toBe('[image/png: PNG image, 800×600 pixels, 1.0 MB. Not shown as an image: over the 1 MiB (1,048,576-byte) bound on image content; only this summary is returned.]');
});

it('gives no image block for SVG (text that may carry scripts), a PDF, a zip or an image cut at the body cap, while a PNG beside them gets one', async () => {
  expect(blocks(await fetchPage('/img.png')).types).toEqual(['text', 'image']);
  for (const route of ['/logo.svg', '/report.pdf', '/archive.zip', '/big-chunked.png']) expect({ route, ...blocks(await fetchPage(route)) }).toEqual({ route, types: ['text'] });
});

it('gives the image block in the first window only: not with start_index > 0, from the kept page or fetched afresh', async () => {
  const [first, together] = await Promise.all([fetchPage('/img.png?paged'), fetchPage('/img.png?paged')]);
  // Both calls share one fetch of the whole page; each answer carries the image.
  expect(blocks(first)).toEqual({ types: ['text', 'image'], bytes: sha256(IMAGES.png), mimeType: 'image/png' });
  expect(blocks(together)).toEqual({ types: ['text', 'image'], bytes: sha256(IMAGES.png), mimeType: 'image/png' });
  const kept = await fetchPage('/img.png?paged', { start_index: 10 });
  expect(kept.structuredContent?.snapshot?.cached).toBe(true);
  expect(blocks(kept)).toEqual({ types: ['text'] });
  const afresh = await fetchPage('/img.png?unread', { start_index: 10 });
  expect(afresh.structuredContent?.snapshot?.cached).toBe(false);
  expect(blocks(afresh)).toEqual({ types: ['text'] });
});

it('returns the text of a PDF after its summary, under its own type or application/octet-stream', async () => {
  for (const [route, label] of [['/report.pdf', ''], ['/mislabelled/pdf-as-octet', ', served as application/octet-stream']]) {
    const result = await fetchPage(route);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      content: `[application/pdf: PDF document, version 1.4, 1 page, titled "Quarterly report", 687 bytes${label}. Its text follows, as pdf.js reads it: without layout, images or tables.]\n\nRevenue grew by 12 percent.`,
      metadata: { title: 'Quarterly report', contentType: 'application/pdf' },
    });
  }
});

it('reads the first 500 pages of a 600-page PDF, paged like any text, and says so', async () => {
  const first = await fetchPage('/long.pdf', { max_length: 400 });
  expect(first.structuredContent?.content).toMatch(/^\[application\/pdf: PDF document, version 1\.4, 600 pages, [\d,]+ bytes\. Its text follows \(pages 1-500 of 600\), as pdf\.js reads it: without layout, images or tables\.\]\n\nPage 1 of the long report\.\n\nPage 2 of/);
  const last = await fetchPage('/long.pdf', { start_index: first.structuredContent!.totalLength - 30 });
  expect(last.structuredContent?.content).toMatch(/Page 500 of the long report\.$/);
});

it('answers for a PDF nested 200,000 arrays deep and for one pdf.js cannot read, and the stdio stream stays clean', async () => {
  expect((await fetchPage('/deep.pdf')).structuredContent?.content).toMatch(/^\[application\/pdf: PDF document, version 1\.4, 1 page, titled "Quarterly report", [\d,]+ bytes\. /);
  expect((await fetchPage('/broken.pdf')).structuredContent?.content).toBe('[application/pdf: PDF document, version 1.7, 5,009 bytes. Its text is not extracted (pdf.js could not read it: Invalid PDF structure): only this summary is returned.]');
  // pdf.js prints its warnings with console.log, on the stdout that carries JSON-RPC.
  expect(clientErrors).toEqual([]);
});

it("names a Problem Details answer's title and detail in an HTTP error", async () => {
  const result = (await fetchPage('/api/problem-404')) as Result & { _meta?: unknown };
  expect(result.isError).toBe(true);
  expect(errorCodeOf(result as never)).toBe('UPSTREAM_ERROR');
  expect(textOf(result)).toBe(`UPSTREAM_ERROR: HTTP 404 from ${site.origin}/api/problem-404: Out of stock: Item 42 is no longer available.`);
});

it.each([
  ['/empty.txt', '[No content: HTTP 200 with an empty body, text/plain.]'],
  ['/spaces.json', '[No content: HTTP 200, a body of only whitespace (3 characters, application/json).]'],
  ['/no-content', '[No content: HTTP 204 with an empty body, no Content-Type.]'],
  // A script-rendered page's shell: its Markdown was empty, an answer of metadata alone.
  ['/app-shell', `[No text: the page's HTML (${APP_SHELL.length} characters) holds none outside scripts, styles, forms and navigation. Its content may be filled in by JavaScript, which this tool does not run.]`],
  ['/quiet.rss', '# Quiet\n\nRSS feed, no items.'],
])('says so when %s has nothing to read, rather than answer an empty window', async (route, content) => {
  const result = await fetchPage(route);
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent?.content).toBe(content);
});
