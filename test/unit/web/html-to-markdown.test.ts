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
    expect(lines[301]).toBe('| r299 | 299 |');
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
