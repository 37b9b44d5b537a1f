import { ERROR_META_KEY, errorCodeOf } from '../../../protocol/results';
import { runFetchTool } from '../../../workers/web/fetch-tool';
import { flattenDeepNesting } from '../../../workers/web/flatten-nesting';
import * as converter from '../../../workers/web/html-to-markdown';
import { nativeRequire } from '../../../workers/web/native-require';
import type * as Linkedom from 'linkedom' with { 'resolution-mode': 'import' };
import { startSite, type LocalSite } from '../../fixtures/web/local-site';

// Unclosed <div>/<font> tags on old pages nest thousands deep; turndown recursed past the stack.
const nested = (depth: number) =>
  `<html><body>${'<div>'.repeat(depth)}deep <b>bold</b> text<p>next paragraph</p><a href="/x">a link</a>${'</div>'.repeat(depth)}<p>after the nesting</p></body></html>`;

const config = { timeoutMs: 10_000, maxBodyBytes: 10 * 1024 * 1024, maxRedirects: 0, allowPrivateNetwork: true, maxOutputChars: 10_000 };
const text = (result: { content: Array<{ type: string; text?: string }> }) => (result.content[0] as { text: string }).text;
let site: LocalSite;

beforeAll(async () => {
  site = await startSite({
    '/deep': (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(nested(10_000)),
    '/plain': (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><p>fine</p></body></html>'),
  });
});
afterAll(() => site.close());
afterEach(() => jest.restoreAllMocks());

describe('deeply nested pages', () => {
  it.each([1_500, 10_000])('converts %i nested <div>s, keeping the text, a bold run, a paragraph, a link and what follows', (depth) => {
    const { markdown } = converter.htmlToMarkdown(nested(depth), 'http://x.example/');
    expect(markdown).toBe('deep **bold** text\n\nnext paragraph\n\n[a link](http://x.example/x)\n\nafter the nesting');
  });

  it('answers fetch_web_content for a 10,000-deep page with its content', async () => {
    const result = await runFetchTool({ url: `${site.origin}/deep` }, config, { signal: new AbortController().signal, deadlineMs: 30_000 });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toContain('deep **bold** text');
    expect(text(result)).toContain('after the nesting');
  });

  it('reports a page the converter cannot handle as a conversion failure, not a NETWORK_ERROR', async () => {
    jest.spyOn(converter, 'htmlToMarkdown').mockImplementation(() => {
      throw new RangeError('Maximum call stack size exceeded');
    });
    const result = await runFetchTool({ url: `${site.origin}/plain` }, config, { signal: new AbortController().signal, deadlineMs: 30_000 });
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('UPSTREAM_ERROR');
    expect(result._meta?.[ERROR_META_KEY]).toMatchObject({ data: { fetchError: 'CONVERSION_FAILED' } });
    expect(text(result)).toBe(`UPSTREAM_ERROR: ${site.origin}/plain was fetched but could not be converted to Markdown: Maximum call stack size exceeded`);
  });
});

describe('flattenDeepNesting on a wide element below the limit', () => {
  it('unwraps a paragraph of 150,000 inline elements, keeping each of them and its text', () => {
    const { parseHTML } = nativeRequire('linkedom') as typeof Linkedom;
    const { document } = parseHTML(`<html><body><div><p>${'<i>a</i> '.repeat(150_000)}</p></div></body></html>`);
    flattenDeepNesting(document.documentElement, 2);
    expect(document.querySelectorAll('p')).toHaveLength(0);
    expect(document.querySelectorAll('div > i')).toHaveLength(150_000);
    expect((document.body.textContent ?? '').replace(/\s+/g, '')).toBe('a'.repeat(150_000));
  });
});
