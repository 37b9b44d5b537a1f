import { errorCodeOf } from '../../../protocol/results';
import { formatFetchResult, runFetchTool } from '../../../workers/web/fetch-tool';
import { PAGE_REQUEST_ARG, type KeptPage } from '../../../workers/web/fetch-window';
import { startSite } from '../../fixtures/web/local-site';
import { IMAGES } from '../../fixtures/web/non-html-site';

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

  describe('never splits a character written as a surrogate pair (an emoji)', () => {
    // The emoji takes code units 9,999 and 10,000: a 10,000-unit window would end in its middle.
    const emoji = { success: true, data: { content: `${'a'.repeat(9_999)}😀${'b'.repeat(100)}` } };
    const isWhole = (text: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);

    it('ends the window before the pair and starts the next part with it', () => {
      const first = formatFetchResult(emoji, 0, 10_000).structuredContent as { content: string; endIndex: number; nextStartIndex: number };
      expect(first).toMatchObject({ endIndex: 9_999, nextStartIndex: 9_999 });
      expect(isWhole(first.content)).toBe(true);
      const second = formatFetchResult(emoji, first.nextStartIndex, 10_000).structuredContent as { content: string; startIndex: number };
      expect(second.startIndex).toBe(9_999);
      expect(second.content.startsWith('😀b')).toBe(true);
      expect(first.content + second.content).toBe(emoji.data.content);
    });

    it('starts at the whole character when start_index points into the pair', () => {
      const result = formatFetchResult(emoji, 10_000, 10).structuredContent as { content: string; startIndex: number; endIndex: number };
      expect(result).toMatchObject({ startIndex: 9_999, endIndex: 10_009, content: `😀${'b'.repeat(8)}` });
    });

    it('returns the whole pair when the window is one code unit long', () => {
      const result = formatFetchResult(emoji, 9_999, 1).structuredContent as { content: string; endIndex: number; nextStartIndex: number };
      expect(result).toMatchObject({ content: '😀', endIndex: 10_001, nextStartIndex: 10_001 });
    });
  });

  it('refuses a start_index past the end', () => {
    const result = formatFetchResult(page, 30_000, 10);
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('BAD_INPUT');
  });

  it.each([
    ['BLOCKED', 'BLOCKED'],
    ['HTTP_ERROR', 'UPSTREAM_ERROR'],
    ['TIMEOUT', 'TIMEOUT'],
    ['CONNECTION_REFUSED', 'NETWORK_ERROR'],
    ['INVALID_URL', 'BAD_INPUT'],
  ] as const)('maps a %s fetch failure to the %s code', (fetchCode, code) => {
    const result = formatFetchResult({ success: false, error: 'why', code: fetchCode }, 0, 10);
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe(code);
    expect((result.content[0] as { text: string }).text).toBe(`${code}: why`);
  });
});

describe('runFetchTool', () => {
  it('reports a server that does not answer within the fetch timeout with code TIMEOUT, not NETWORK_ERROR', async () => {
    // Holds every request until the client goes away.
    const site = await startSite({ '/silent': () => {} });
    try {
      const config = { timeoutMs: 200, maxBodyBytes: 1024, maxRedirects: 0, allowPrivateNetwork: true, maxOutputChars: 10_000 };
      const result = await runFetchTool({ url: `${site.origin}/silent` }, config, { signal: new AbortController().signal, deadlineMs: 10_000 });
      expect(result.isError).toBe(true);
      expect(errorCodeOf(result)).toBe('TIMEOUT');
      expect((result.content[0] as { text: string }).text).toMatch(/^TIMEOUT: .*did not answer within 200 ms/);
    } finally {
      await site.close();
    }
  });
});

describe('runFetchTool with an image', () => {
  const config = { timeoutMs: 10_000, maxBodyBytes: 1024 * 1024, maxRedirects: 0, allowPrivateNetwork: true, maxOutputChars: 10_000 };
  const context = () => ({ signal: new AbortController().signal, deadlineMs: 30_000 });
  const image = { type: 'image', data: IMAGES.png.toString('base64'), mimeType: 'image/png' };

  it("carries the image to the pager's whole page and into the windows the thread cuts itself", async () => {
    const site = await startSite({ '/img.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(IMAGES.png) });
    try {
      const url = `${site.origin}/img.png`;
      const whole = await runFetchTool({ url, [PAGE_REQUEST_ARG]: { maxEntryBytes: 1_000_000 } }, config, context());
      const page = whole.structuredContent?.page as KeptPage;
      expect(page.image).toEqual({ data: image.data, mimeType: 'image/png' });
      // The kept size leaves the image out: the pager does not keep it.
      expect(page.bytes).toBeLessThan(2_000);
      // A page over maxEntryBytes (a cache turned off) is answered as a window by the thread.
      const windowed = await runFetchTool({ url, [PAGE_REQUEST_ARG]: { maxEntryBytes: 0 } }, config, context());
      expect(windowed.content).toEqual([expect.objectContaining({ type: 'text' }), image]);
      expect(JSON.stringify(windowed.structuredContent)).not.toContain(image.data.slice(0, 40));
      expect((await runFetchTool({ url }, config, context())).content).toEqual([expect.objectContaining({ type: 'text' }), image]);
      expect((await runFetchTool({ url, start_index: 5 }, config, context())).content).toEqual([expect.objectContaining({ type: 'text' })]);
    } finally {
      await site.close();
    }
  });
});

describe('fetch_web_content metadata caps', () => {
  const config = { timeoutMs: 10_000, maxBodyBytes: 10 * 1024 * 1024, maxRedirects: 0, allowPrivateNetwork: true, maxOutputChars: 10_000 };
  const run = (url: string) => runFetchTool({ url }, config, { signal: new AbortController().signal, deadlineMs: 30_000 });
  const isWhole = (text: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);

  it('cuts a hostile page\'s title, description and author so the answer stays near 10,000 characters', async () => {
    const hostile = '<html><head>'
      + `<title>${'T'.repeat(2_000_000)}</title>`
      + `<meta name="description" content="${'D'.repeat(3_000_000)}">`
      + `<meta name="author" content="${'A'.repeat(1_000_000)}">`
      + `<meta name="date" content="${'9'.repeat(100_000)}">`
      + '</head><body><p>body text</p></body></html>';
    const site = await startSite({ '/hostile': (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(hostile) });
    try {
      const result = await run(`${site.origin}/hostile`);
      expect(result.isError).toBeFalsy();
      const text = (result.content[0] as { text: string }).text;
      const metadata = (result.structuredContent as { metadata: Record<string, string> }).metadata;
      expect(text.length).toBeLessThan(12_000);
      expect(JSON.stringify(metadata).length).toBeLessThan(2_000);
      for (const field of ['title', 'description', 'author', 'publishDate']) expect(metadata[field]).toMatch(/^(.)\1+\u2026$/);
      expect(text).toContain(`Title: ${metadata.title}\n`);
      expect(metadata.url).toBe(`${site.origin}/hostile`);
    } finally {
      await site.close();
    }
  });

  it('cuts an article\'s long Readability excerpt, and never inside an emoji', async () => {
    const emojis = '\u{1F600}'.repeat(400);
    const paragraph = `<p>${'Long words of the first paragraph. '.repeat(2_000)}</p>`;
    const page = `<html><head><title>${emojis}</title></head><body><div class="post">${paragraph}${'<p>More text of the article body here, enough to read.</p>'.repeat(30)}</div></body></html>`;
    const site = await startSite({ '/article': (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page) });
    try {
      const result = await run(`${site.origin}/article`);
      const metadata = (result.structuredContent as { metadata: Record<string, string> }).metadata;
      expect(metadata.title.endsWith('\u2026')).toBe(true);
      expect(metadata.title.length).toBeLessThanOrEqual(300);
      expect(isWhole(metadata.title)).toBe(true);
      expect(metadata.description.length).toBeLessThanOrEqual(600);
      expect(metadata.description.startsWith('Long words of the first paragraph.')).toBe(true);
    } finally {
      await site.close();
    }
  });
});
