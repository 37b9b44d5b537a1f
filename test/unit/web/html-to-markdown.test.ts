import { Readability } from '@mozilla/readability';
import { htmlToMarkdown } from '../../../workers/web/html-to-markdown';

const page = (head: string, body: string) => `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;

/** The Markdown table lines of a page, with cell padding collapsed. */
const tableLines = (html: string) =>
  htmlToMarkdown(html, 'http://example.test/')
    .markdown.split('\n')
    .filter((line) => line.startsWith('|'))
    .map((line) => line.replace(/\s+/g, ' '));

describe('htmlToMarkdown tables', () => {
  it('writes a GFM table from thead and tbody, and from a table whose first row holds th cells', () => {
    expect(tableLines(page('', '<table><thead><tr><th>name</th><th>count</th></tr></thead><tbody><tr><td>a</td><td>1</td></tr><tr><td>b</td><td>2</td></tr></tbody></table>'))).toEqual([
      '| name | count |',
      '| --- | --- |',
      '| a | 1 |',
      '| b | 2 |',
    ]);
    expect(tableLines(page('', '<table><tr><th>h1</th><th>h2</th></tr><tr><td>a</td><td>b</td></tr></table>'))).toEqual(['| h1 | h2 |', '| --- | --- |', '| a | b |']);
  });

  it('keeps every row of a long table, with the widest row setting the column count', () => {
    const rows = Array.from({ length: 300 }, (_, i) => `<tr><td>r${i}</td><td>${i}</td>${i === 150 ? '<td>extra</td>' : ''}</tr>`).join('');
    const lines = tableLines(page('', `<table><thead><tr><th>k</th><th>v</th></tr></thead><tbody>${rows}</tbody></table>`));
    expect(lines).toHaveLength(302);
    expect(lines[1]).toBe('| --- | --- | --- |');
    expect(lines[152]).toBe('| r150 | 150 | extra |');
    // Every row has the table's column count (GFM renderers pad short rows; now they need not).
    expect(lines[301]).toBe('| r299 | 299 | |');
  });

  it('places cells by the children left after whitespace between rows and cells is collapsed', () => {
    const spaced = '<table>\n  <tr>\n    <th>h1</th>\n    <th>h2</th>\n  </tr>\n  <tr>\n    <td>a</td>\n    <td>b</td>\n  </tr>\n</table>';
    expect(tableLines(page('', spaced))).toEqual(['| h1 | h2 |', '| --- | --- |', '| a | b |']);
  });

  it('reads each conversion\'s own rows (none are kept from the one before)', () => {
    expect(tableLines(page('', '<table><thead><tr><th>k</th></tr></thead><tbody><tr><td>v1</td></tr></tbody></table>'))).toEqual(['| k |', '| --- |', '| v1 |']);
    expect(tableLines(page('', '<table><thead><tr><th>k</th></tr></thead><tbody><tr><td>v2</td></tr><tr><td>v3</td></tr></tbody></table>'))).toEqual(['| k |', '| --- |', '| v2 |', '| v3 |']);
  });
});

describe('htmlToMarkdown metadata', () => {
  it('prefers OpenGraph to plain meta tags, and takes names in their order', () => {
    const { metadata } = htmlToMarkdown(
      page(
        `<title>Title tag</title><meta name="description" content="plain description"><meta property="og:description" content="og description">
         <meta name="author" content="Plain Author"><meta name="date" content="2024-01-02"><meta property="article:published_time" content="2024-05-06">`,
        '<p>text</p>',
      ),
      'http://example.test/',
    );
    expect(metadata).toMatchObject({ title: 'Title tag', description: 'og description', author: 'Plain Author', publishDate: '2024-05-06' });
  });

  it('takes the first tag of a name, skips empty values, and reads itemprop when nothing else has the name', () => {
    const { metadata } = htmlToMarkdown(
      page(
        `<meta property="og:title" content="First"><meta property="og:title" content="Second"><meta name="author" content="  ">
         <meta name="dc.creator" content="Creator">`,
        '<span><meta itemprop="datePublished" content="2023-03-04"></span><p>text</p>',
      ),
      'http://example.test/',
    );
    expect(metadata).toMatchObject({ title: 'First', author: 'Creator', publishDate: '2023-03-04' });
  });

  it('lets JSON-LD win over meta tags', () => {
    const ld = JSON.stringify({ '@type': 'NewsArticle', headline: 'LD headline', author: { name: 'LD Author' } });
    const { metadata } = htmlToMarkdown(page(`<meta property="og:title" content="OG"><script type="application/ld+json">${ld}</script>`, '<p>text</p>'), 'http://example.test/');
    expect(metadata).toMatchObject({ title: 'LD headline', author: 'LD Author' });
  });
});

describe('htmlToMarkdown on a page that is a list of links', () => {
  // Readability removes blocks this dense in links and starts over from a re-parsed page, four
  // passes in all: 20,000 links in one <p> took seconds. Such a page is converted whole instead.
  afterEach(() => jest.restoreAllMocks());
  const grabs = () => jest.spyOn(Readability.prototype as unknown as { _grabArticle(page: unknown): unknown }, '_grabArticle');

  it('converts the body of 2,000 links in one paragraph without running Readability, every link kept', () => {
    const grab = grabs();
    const links = Array.from({ length: 2_000 }, (_, i) => `<a href="/item/${i}">item ${i}</a>`).join(' ');
    const { markdown, article } = htmlToMarkdown(page('<title>Index</title>', `<p>Everything we have:</p><p>${links}</p>`), 'http://example.test/');
    expect(grab).not.toHaveBeenCalled();
    expect(article).toBe(false);
    expect(markdown).toContain('[item 0](http://example.test/item/0) [item 1](http://example.test/item/1)');
    expect(markdown).toContain('[item 1999](http://example.test/item/1999)');
    expect(markdown.match(/\]\(http:\/\/example\.test\/item\//g)).toHaveLength(2_000);
  });

  it('still finds an article with Readability when links are a small part of its text', () => {
    const grab = grabs();
    const text = Array.from({ length: 12 }, (_, i) => `<p>Paragraph ${i} of a long article with enough words in it to count for a reader, and <a href="/see">a link</a> in it, as articles have; more words follow here.</p>`).join('');
    const { markdown, article } = htmlToMarkdown(page('<title>Story</title>', `<div class="menu"><a href="/">Home</a></div><div class="post">${text}</div>`), 'http://example.test/');
    expect(grab).toHaveBeenCalledTimes(1);
    expect(article).toBe(true);
    expect(markdown).toContain('Paragraph 11 of a long article');
  });
});

describe('htmlToMarkdown on pages made to exhaust the stack', () => {
  it('fences a <pre> holding 300,000 runs of backticks with a longer run', () => {
    const { markdown } = htmlToMarkdown(page('', `<pre><span>${'``` '.repeat(299_999)}\`\`\`\`</span></pre>`), 'http://example.test/');
    expect(markdown.startsWith('`````\n``` ``` ')).toBe(true);
    expect(markdown.endsWith(' ````\n`````')).toBe(true);
  });

  it.each([
    ['arrays', `${'['.repeat(5_000)}${']'.repeat(5_000)}`],
    ['@graph lists', `${'{"@graph":['.repeat(5_000)}{"@type":"Article","headline":"Deep headline"}${']}'.repeat(5_000)}`],
    ['author lists', `{"@type":"Article","headline":"Deep headline","author":${'['.repeat(5_000)}"Deep Author"${']'.repeat(5_000)}}`],
  ])('reads the page and its metadata when its JSON-LD nests 5,000 %s deep', (_what, ld) => {
    const { markdown, metadata } = htmlToMarkdown(page(`<title>Title tag</title><script type="application/ld+json">${ld}</script>`, '<p>text</p>'), 'http://example.test/');
    expect(markdown).toBe('text');
    expect(metadata.title).toBe(ld.includes('Deep headline') ? 'Deep headline' : 'Title tag');
    expect(metadata.author).toBeUndefined();
  });
});
