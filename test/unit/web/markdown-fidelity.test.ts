import { fixtureText } from '../../fixtures/web/local-site';
import { htmlToMarkdown } from '../../../workers/web/html-to-markdown';

/** Element by element, the Markdown a reader of the page in a browser would write. */
const md = (body: string, url = 'https://site.example/dir/page.html') => htmlToMarkdown(`<!doctype html><html><head><title>t</title></head><body>${body}</body></html>`, url).markdown;

describe('tables', () => {
  it.each([
    [
      'a header row with colspan gets one delimiter row, and a second <thead> row is a body row',
      '<table><thead><tr><td></td><th colspan="2">Desktop</th><th colspan="2">Mobile</th></tr><tr><td></td><th>Chrome</th><th>Firefox</th><th>Android</th><th>iOS</th></tr></thead><tbody><tr><th>map</th><td>1</td><td>1.5</td><td>18</td><td>1</td></tr></tbody></table>',
      '|  | Desktop |  | Mobile |  |\n| --- | --- | --- | --- | --- |\n|  | Chrome | Firefox | Android | iOS |\n| map | 1 | 1.5 | 18 | 1 |',
    ],
    [
      'cells after a rowspan stay in their columns',
      '<table><tr><th>year</th><th>q</th><th>sales</th></tr><tr><td rowspan="2">2023</td><td>Q1</td><td>5</td></tr><tr><td>Q2</td><td>7</td></tr><tr><td>2024</td><td>Q1</td><td>9</td></tr></table>',
      '| year | q | sales |\n| --- | --- | --- |\n| 2023 | Q1 | 5 |\n|  | Q2 | 7 |\n| 2024 | Q1 | 9 |',
    ],
    [
      'a table holding a list is a pipe table, not raw HTML',
      '<table><tr><th>k</th><th>list</th></tr><tr><td>x</td><td><ul><li>one</li><li>two</li></ul></td></tr></table>',
      '| k | list |\n| --- | --- |\n| x | -   one<br>-   two |',
    ],
    [
      'pipes are each escaped, a <br> is one <br>, and a table without <th> gets an empty header',
      '<table><tr><td>a || b</td><td>line<br>break</td></tr><tr><td>c</td><td>d</td></tr></table>',
      '|  |  |\n| --- | --- |\n| a \\|\\| b | line<br>break |\n| c | d |',
    ],
  ])('%s', (_what, html, want) => {
    expect(md(html)).toBe(want);
  });

  it('writes a code block in a data table\'s cell as a code span per line', () => {
    expect(md('<table><tr><th>option</th><th>example</th></tr><tr><td>pipe</td><td><pre>a | b\n\nuse `x`</pre></td></tr></table>')).toBe(
      '| option | example |\n| --- | --- |\n| pipe | `a \\| b`<br><br>`` use `x` `` |',
    );
  });

  it('writes a layout table (a cell holding a heading) as its cells, one block each', () => {
    expect(md('<table><tr><td><h2>Title</h2><p>Body text.</p></td><td><p>Side</p></td></tr></table>')).toBe('## Title\n\nBody text.\n\nSide');
  });

  it('does not pad 2,000 one-cell rows to the width of a first row spanning 1,000 columns', () => {
    const lines = md(`<table><tr><th colspan="1000">wide</th></tr>${'<tr><td>x</td></tr>'.repeat(2_000)}</table>`).split('\n');
    expect(lines).toHaveLength(2_002);
    expect(lines[2]).toBe('| x |');
    expect(lines[1]!.split('---')).toHaveLength(1_001);
  });

  it('bounds the grid of a table whose cells span thousands of columns and rows', () => {
    const rows = '<tr><td colspan="1000" rowspan="1000">x</td></tr>'.repeat(200);
    const lines = md(`<table>${rows}</table>`).split('\n');
    expect(lines).toHaveLength(202);
    expect(lines[2]).toBe('| x |');
  });
});

describe('code blocks', () => {
  it.each([
    ['Sphinx: highlight-X on the wrapper', '<div class="highlight-toml notranslate"><div class="highlight"><pre><span></span><span class="k">[server]</span>\nport = 1\n</pre></div></div>', '```toml\n[server]\nport = 1\n```'],
    [
      'Sphinx: a line-number gutter table',
      '<div class="highlight-python"><table class="highlighttable"><tr><td class="linenos"><div class="linenodiv"><pre>1\n2</pre></div></td><td class="code"><div class="highlight"><pre><span>import</span> frob\nfrob.load()\n</pre></div></td></tr></table></div>',
      '```python\nimport frob\nfrob.load()\n```',
    ],
    ['Pygments inline line numbers', '<pre class="language-sh"><span class="linenos">1</span>ls\n<span class="linenos">2</span>pwd</pre>', '```sh\nls\npwd\n```'],
    ['GitHub: lang on <pre>', '<pre lang="python"><code>import x</code></pre>', '```python\nimport x\n```'],
    ['GitHub: highlight-source-X', '<div class="highlight highlight-source-shell"><pre>npm i</pre></div>', '```shell\nnpm i\n```'],
    ['SyntaxHighlighter: brush', '<pre class="brush: ruby; gutter: false">puts 1</pre>', '```ruby\nputs 1\n```'],
    ['MkDocs Material: language-X on the wrapper, line anchors in the code', '<div class="language-python highlight"><pre><span></span><code><a id="l1" href="#l1"></a>x = 1\n<a id="l2" href="#l2"></a>y = 2\n</code></pre></div>', '```python\nx = 1\ny = 2\n```'],
    ['the language name shown above a block (MDN, VitePress)', '<div class="code-example"><div class="example-header"><span class="language-name">js</span></div><pre class="brush: js notranslate"><code>f()</code></pre></div><div class="language-ts"><span class="lang">ts</span><pre><code>let x: number;</code></pre></div>', '```js\nf()\n```\n\n```ts\nlet x: number;\n```'],
    ['but a heading naming the language stays', '<h3>Go</h3><pre class="language-go">fmt.Println()</pre>', '### Go\n\n```go\nfmt.Println()\n```'],
    ['a <br> per line', '<pre><code>a = 1<br>b = 2<br></code></pre>', '```\na = 1\nb = 2\n```'],
    ['a <div> per line', '<pre><div class="line">a = 1</div><div class="line">b = 2</div></pre>', '```\na = 1\nb = 2\n```'],
    ['a copy button', '<div><pre><code class="language-js">x()</code></pre><button>Copy</button><clipboard-copy>Copy</clipboard-copy></div>', '```js\nx()\n```'],
    [
      'Node.js docs: the ES module and CommonJS variants in one <pre>, apart',
      '<pre class="with-40-chars"><input class="js-flavor-toggle" type="checkbox" checked aria-label="Show modern ES modules syntax"><code class="language-js mjs">import fs from \'node:fs\';\nfs.statSync(\'.\');</code><code class="language-js cjs">const fs = require(\'node:fs\');\nfs.statSync(\'.\');</code><button class="copy-button">copy</button></pre>',
      "```js\nimport fs from 'node:fs';\nfs.statSync('.');\n\nconst fs = require('node:fs');\nfs.statSync('.');\n```",
    ],
    ['but a <code> per line keeps its lines', '<pre><code>a = 1</code>\n<code>b = 2</code></pre>', '```\na = 1\nb = 2\n```'],
    ['rustdoc: a "Run code" link beside an example is not written', '<div class="example-wrap"><pre class="rust rust-example-rendered"><code>f(1);</code></pre><a class="test-arrow" target="_blank" title="Run code" href="https://play.rust-lang.org/?code=fn+main()+%7B+f(1);+%7D"></a></div>', '```\nf(1);\n```'],
  ])('%s', (_what, html, want) => {
    expect(md(html)).toBe(want);
  });
});

describe('headings and links', () => {
  it.each([
    ['a Sphinx ¶ permalink', '<h2 id="x">Settings<a class="headerlink" href="#x" title="Permalink">¶</a></h2>', '## Settings'],
    ['a GitHub icon permalink', '<div class="markdown-heading"><h2>Install</h2><a class="anchor" aria-label="Permalink: Install" href="#install"><svg></svg></a></div>', '## Install'],
    ['a heading that links to itself', '<h2 id="try_it"><a href="#try_it">Try it</a></h2>', '## Try it'],
    ['a heading inside a link', '<a href="/post/1"><h3>Post title</h3><p>Teaser.</p></a>', '### [Post title](https://site.example/post/1)\n\nTeaser.'],
    ['a card link: the heading is linked, not its image', '<a href="/news/a"><img src="/img/a.jpg" alt=""><h3>New library opens</h3><p>Teaser.</p></a>', '![](https://site.example/img/a.jpg)\n\n### [New library opens](https://site.example/news/a)\n\nTeaser.'],
    ['javascript: and in-page links as text', '<p><a href="javascript:void(0)">Show more</a> and <a href="#cite_note-1">[1]</a>.</p>', 'Show more and \\[1\\].'],
    ['an icon link named by aria-label; an empty link dropped', '<p><a href="/rss" aria-label="RSS feed"><svg></svg></a> and <a href="/x"></a>end</p>', '[RSS feed](https://site.example/rss) and end'],
    ['an icon font\'s link named by its title', '<p><a href="/print.html" title="Print this book"><i class="fa fa-print"></i></a></p>', '[Print this book](https://site.example/print.html)'],
    ['an icon link named by its <svg>', '<p>Code on <a href="https://github.com/acme/w"><svg role="img"><title>GitHub</title><path d="M0"/></svg></a>.</p>', 'Code on [GitHub](https://github.com/acme/w).'],
    ['no tooltip titles', '<p><a href="/wiki/Square" title="Square">square</a></p>', '[square](https://site.example/wiki/Square)'],
    ['MediaWiki [edit] links', '<div class="mw-heading mw-heading2"><h2 id="Proofs">Proofs</h2><span class="mw-editsection">[<a href="/w/index.php?action=edit">edit</a>]</span></div><p>Text.</p>', '## Proofs\n\nText.'],
  ])('%s', (_what, html, want) => {
    expect(md(html)).toBe(want);
  });
});

describe('what a reader does not see', () => {
  it.each([
    ['hidden, display:none and visibility:hidden', '<p>seen</p><p hidden>h1</p><p style="color:red; display: none">h2</p><div style="visibility:hidden">h3</div><span style="display:none !important">h4</span>', 'seen'],
    ['hidden="until-found" (revealed by find in page) is kept', '<div hidden="until-found"><p>found text</p></div>', 'found text'],
    ['the label of a removed control', '<p><label for="sort">Sorted by:</label><select id="sort"><option>Score</option></select></p><p>Text.</p>', 'Text.'],
    ['buttons, selects and video fallbacks', '<p>Sort <select><option>Newest</option></select> <button>Share</button></p><video src="v.mp4">Your browser does not support video</video>', 'Sort'],
    [
      'an FAQ accordion: the buttons hold the questions, the closed panels the answers',
      '<div class="faq"><button aria-expanded="true" aria-controls="a1">Is it free?</button><div id="a1"><p>Yes.</p></div><button aria-expanded="false" aria-controls="a2">Can I self-host?</button><div id="a2" hidden><p>Yes, with Docker.</p></div></div>',
      '**Is it free?**\n\nYes.\n\n**Can I self-host?**\n\nYes, with Docker.',
    ],
    ['an inactive tab panel is kept', '<div role="tablist"><button role="tab" aria-controls="p-npm">npm</button><button role="tab" aria-controls="p-yarn">yarn</button></div><div id="p-npm" role="tabpanel"><pre>npm i x</pre></div><div id="p-yarn" role="tabpanel" style="display:none"><pre>yarn add x</pre></div>', '**npm**\n\n**yarn**\n\n```\nnpm i x\n```\n\n```\nyarn add x\n```'],
    ['a menu toggle is not kept', '<button aria-controls="menu" aria-expanded="false">Open menu</button><nav id="menu"><a href="/">Home</a></nav><p>Text.</p>', 'Text.'],
    ['a dialog holding most of the page is the page', `<div role="dialog" aria-modal="true"><p>${'The post shown over its list. '.repeat(10)}</p></div><p>list</p>`, `${'The post shown over its list. '.repeat(10).trim()}\n\nlist`],
    ['a button in a heading (an accordion) keeps its text', '<h3><button aria-expanded="false">What is it?</button></h3><p>An answer.</p>', '### What is it?\n\nAn answer.'],
    ['but a control beside a heading\'s text goes (rustdoc\'s "Copy item path")', '<h1>Enum <span class="enum">Status</span>&nbsp;<button id="copy-path" title="Copy item path to clipboard">Copy item path</button></h1>', '# Enum Status'],
    ['a cookie banner and a dialog', '<div id="cookie-banner"><p>We use cookies.</p><a href="/privacy">Settings</a></div><div role="dialog"><p>Subscribe!</p></div><p>Article text.</p>', 'Article text.'],
    ['a card named after cookies is content', '<div class="cookie-recipe"><p>Mix the flour.</p></div>', 'Mix the flour.'],
  ])('%s', (_what, html, want) => {
    expect(md(html)).toBe(want);
  });
});

describe('what a reader does not see, on news pages', () => {
  it.each([
    ['share links, and the list they leave empty', '<ul class="share"><li><a href="https://twitter.com/intent/tweet?url=x" aria-label="Share on X"><svg></svg></a></li><li><a href="https://www.facebook.com/sharer/sharer.php?u=x">Facebook</a></li></ul><p>Story.</p>', 'Story.'],
    ['advertisement slots', '<p>One.</p><div class="ad-slot inline-ad"><span class="ad-label">Advertisement</span></div><ins class="adsbygoogle"></ins><p>Two.</p>', 'One.\n\nTwo.'],
    ['a newsletter box', '<p>One.</p><div class="newsletter-signup"><h3>Get the briefing</h3><p>Every weekday.</p><form><input type="email"></form></div><p>Two.</p>', 'One.\n\nTwo.'],
    ['a long block named like an ad is content', `<div class="story-ads-free"><p>${'Words of the story. '.repeat(20)}</p></div>`, 'Words of the story. '.repeat(20).trim()],
  ])('%s', (_what, html, want) => {
    expect(md(html)).toBe(want);
  });

  it('measures at most 8 nested hidden blocks that each hold most of the text; the 9th is removed unmeasured', () => {
    const nest = (depth: number) => `${'<div style="display:none">'.repeat(depth)}<p>${'Deep text. '.repeat(20)}</p>${'</div>'.repeat(depth)}<p>end</p>`;
    expect(md(nest(8))).toBe(`${'Deep text. '.repeat(20).trim()}\n\nend`);
    expect(md(nest(300))).toBe('end');
  });

  it('keeps a page whose body its scripts reveal (display:none on the block holding most of the text)', () => {
    expect(md(`<div id="app" style="display:none"><p>${'The whole story. '.repeat(10)}</p><p style="display:none">a hidden note</p></div><p>footer line</p>`)).toBe(`${'The whole story. '.repeat(10).trim()}\n\nfooter line`);
  });
});

describe('the title heading an article', () => {
  const article = `<article><p>${'Words of the article, enough of them to be an article. '.repeat(12)}</p></article>`;
  it.each([
    ['the headline, without the site name the title adds', '<h1>Pythagorean theorem</h1>', 'Pythagorean theorem - Wikipedia', '# Pythagorean theorem'],
    ['not a logo <h1> that the title starts with', '<h1>Daily Example</h1>', 'Daily Example - City council approves new bike lanes', '# Daily Example - City council approves new bike lanes'],
  ])('%s', (_what, header, title, want) => {
    const markdown = htmlToMarkdown(`<!doctype html><html><head><title>${title}</title></head><body><header>${header}</header>${article}</body></html>`, 'https://site.example/').markdown;
    expect(markdown.split('\n')[0]).toBe(want);
  });
});

describe('blocks', () => {
  it.each([
    ['a definition list in Pandoc\'s syntax, nested', '<dl><dt><code>fn</code></dt><dd><p>A function, called with:</p><dl><dt>element</dt><dd>The element.</dd></dl></dd><dt>thisArg</dt><dd>This.</dd><dd>Or that.</dd></dl>', '`fn`\n:   A function, called with:\n\n    element\n    :   The element.\n\nthisArg\n:   This.\n:   Or that.'],
    ['a <dl> of definitions only (MediaWiki indentation) is its blocks', '<dl><dd>Indented text.</dd></dl>', 'Indented text.'],
    ['a Sphinx admonition as a quote with its title', '<div class="admonition note"><p class="admonition-title">Note</p><p>Restart after changes.</p></div>', '> **Note**\n> \n> Restart after changes.'],
    ['a GitHub alert', '<div class="markdown-alert markdown-alert-warning"><p class="markdown-alert-title"><svg></svg>Warning</p><p>Back up first.</p></div>', '> **Warning**\n> \n> Back up first.'],
  ])('%s', (_what, html, want) => {
    expect(md(html)).toBe(want);
  });
});

describe('images', () => {
  it.each([
    ['a lazy image takes data-src over its placeholder', '<p><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" data-src="real.jpg" alt="Photo"></p>', '![Photo](https://site.example/dir/real.jpg)'],
    ['a data: URI is left out, its alt text kept', `<p><img src="data:image/png;base64,${'A'.repeat(5_000)}" alt="inline dot"></p>`, '![inline dot]()'],
    ['a <noscript> image stands for the scripted one', '<figure><div class="js-image"></div><noscript><img src="/real.jpg" alt="Real photo"></noscript><figcaption>Caption</figcaption></figure>', '![Real photo](https://site.example/real.jpg)\n\nCaption'],
    ['but not beside a lazy image, and other <noscript> content goes', '<p><img data-src="/a.jpg" alt="A"><noscript><img src="/a.jpg" alt="A"></noscript></p><noscript><p>Please enable JavaScript.</p></noscript>', '![A](https://site.example/a.jpg)'],
    ['a 1×1 tracking pixel is removed', '<p>text<img src="https://tracker.example/p.gif" width="1" height="1" alt=""></p>', 'text'],
    ['<base href> is the base', '<base href="https://cdn.example/assets/"><p><img src="a b.png" alt="x"></p>', '![x](https://cdn.example/assets/a%20b.png)'],
  ])('%s', (_what, html, want) => {
    expect(md(html)).toBe(want);
  });
});

describe('text', () => {
  it.each([
    ['MathML as TeX', '<p>so <math><semantics><mrow><msup><mi>x</mi><mn>2</mn></msup></mrow><annotation encoding="application/x-tex">x^{2}</annotation></semantics></math> holds</p>', 'so $x^{2}$ holds'],
    [
      'MediaWiki display math, hidden beside its fallback image',
      '<dl><dd><span class="mwe-math-element"><span class="mwe-math-mathml-display mwe-math-mathml-a11y" style="display: none;"><math display="block" alttext="{\\displaystyle a^{2}+b^{2}=c^{2}.}"><mi>a</mi></math></span><img src="x.svg" class="mwe-math-fallback-image-display" aria-hidden="true" alt="{\\displaystyle a^{2}}"></span></dd></dl>',
      '$$a^{2}+b^{2}=c^{2}.$$',
    ],
    ['a heading with a <br> or a block inside stays one heading', '<h2>Main title<br>with a subtitle</h2><h3><span>Part</span><div>two</div></h3>', '## Main title with a subtitle\n\n### Part two'],
    ['<q> in quotation marks, nested ones single', '<p>He said <q>go <q>now</q></q>.</p>', 'He said “go ‘now’”.'],
    ['sup and sub', '<p>E=mc<sup>2</sup> and H<sub>2</sub>O</p>', 'E=mc<sup>2</sup> and H<sub>2</sub>O'],
    ['task list state', '<ul><li><input type="checkbox" checked disabled> done</li><li><input type="checkbox" disabled> todo</li></ul>', '-   [x]  done\n-   [ ]  todo'],
    ['text after a character reference is escaped as the middle of a line', '<p>x -&gt; y, n &gt;= 3, a&nbsp;- b</p><p>&#49;. not a list</p>', 'x -> y, n >= 3, a\u00a0- b\n\n1\\. not a list'],
    ['snake_case is not escaped; what could start emphasis is', '<p>_lead, snake_case_name, 2*3*4</p>', '\\_lead, snake_case_name, 2\\*3\\*4'],
  ])('%s', (_what, html, want) => {
    expect(md(html)).toBe(want);
  });
});

describe('realistic pages (test/fixtures/web/pages)', () => {
  const page = (name: string, url: string) => htmlToMarkdown(fixtureText(`pages/${name}`), url).markdown;

  it('a Sphinx page: no permalinks, code with its language and without line numbers, a clean table', () => {
    const markdown = page('sphinx-docs.html', 'https://frob.readthedocs.io/en/latest/config.html');
    expect(markdown).toContain('# Configuration\n\n');
    expect(markdown).toContain('> **Warning**\n> \n> Never commit `secret_key` to version control.');
    expect(markdown).toContain('```toml\n[server]\nhost = "127.0.0.1"\nport = 8080\n```');
    expect(markdown).toContain('```python\nimport frob\ncfg = frob.load("frob.toml")\nprint(cfg.port)\n```');
    expect(markdown).toContain('| `mode` | `a\\|b` | Either _a_ or _b_;<br>see below. |');
    expect(markdown).not.toMatch(/¶|Permalink|<br>1<br>|Edit on GitHub|Search docs/);
  });

  it('a Wikipedia article: section headings, infobox, math, footnote markers', () => {
    const markdown = page('wiki-article.html', 'https://en.wikipedia.org/wiki/Pythagorean_theorem');
    expect(markdown.startsWith('# Pythagorean theorem\n\n| Pythagorean theorem |')).toBe(true);
    expect(markdown).toContain('\n## Proofs\n');
    expect(markdown).toContain('\n## References\n');
    expect(markdown).toContain('| Pythagorean theorem |  |\n| --- | --- |');
    expect(markdown).toContain('| Symbolic statement | $a^{2}+b^{2}=c^{2}$ |');
    expect(markdown).toContain('\n$$a^{2}+b^{2}=c^{2}.$$\n');
    expect(markdown).toContain('other two sides.<sup>\\[1\\]</sup>');
    expect(markdown).not.toMatch(/\[edit\]|#cite_note|joplin|displaystyle|"Mathematics"\)/);
  });

  it('a Q&A thread: no cookie banner, no controls, code with its language, answers told apart with their scores', () => {
    const markdown = page('qa-thread.html', 'https://stackoverflow.com/questions/208105/x');
    expect(markdown.startsWith('# [How do I remove a property from an object?](https://stackoverflow.com/questions/208105/how-do-i-remove-a-property)')).toBe(true);
    expect(markdown).toContain('```js\ndelete myObject.regex;\n// or,\ndelete myObject[\'regex\'];\n```');
    expect(markdown).toContain('## 3 Answers\n\n* * *\n\n**Accepted answer**\n\nScore: 9845\n\nTo remove a property');
    expect(markdown).toContain('* * *\n\n**Answer**\n\nScore: 1234\n\nUse destructuring');
    expect(markdown).toContain('Score: 7281\n\nGiven an object:');
    expect(markdown).not.toMatch(/cookies|Highest score|Sorted by|3 Answers 3/);
  });

  it('a README view: no empty permalinks, languages, task state, aligned table', () => {
    const markdown = page('readme-view.html', 'https://github.com/acme/widget');
    expect(markdown).toContain('# Widget\n\n[![CI]');
    expect(markdown).toContain('```shell\nnpm install widget\n# or\nyarn add widget\n```\n\n```python\nimport widget\nwidget.make()\n```\n\n## Options');
    expect(markdown).toContain('| Option | Default |\n| :--- | ---: |\n| `size` | 10 |');
    expect(markdown).toContain('-   [x]  Done thing\n-   [ ]  Todo thing');
    expect(markdown).not.toMatch(/\[\]\(#|Copy/);
  });

  it('a news article: its headline once, no share links, ads or newsletter box', () => {
    const markdown = page('news-article.html', 'https://news.example/2024/06/03/bike-lanes');
    expect(markdown.match(/City council approves new bike lanes/g)).toHaveLength(1);
    expect(markdown).toContain('[Local news](https://news.example/news/local)\n\n# City council approves new bike lanes\n\nThe 12 km network');
    expect(markdown).toContain('![Cyclists on Main Street](https://news.example/img/lanes-800.jpg)\n\nCyclists on Main Street on Monday. Photo: Sam Lens');
    expect(markdown).toContain('## What changes for drivers');
    expect(markdown).not.toMatch(/Share on|Advertisement|morning briefing|Copy link|cookies|Accept/);
  });

  it('release notes: versions as headings with their links, breaking changes, nested items', () => {
    const markdown = page('changelog.html', 'https://widget.example/changelog');
    expect(markdown).toContain('## [2.0.0](https://github.com/acme/widget/compare/v1.4.2...v2.0.0) - 2024-05-01\n\n### ⚠ BREAKING CHANGES');
    expect(markdown).toContain('-   support `*.yaml` configs and `__init__` hooks');
    expect(markdown).toContain('-   Deprecated: `widget.old()`; use `widget.new()`.\n    -   It will be removed in 3.0.');
    expect(markdown).toContain('| 2.x | 2024-05-01 | _active_ |');
    expect(markdown).not.toMatch(/#\)|\]\(#/);
  });

  it('a rustdoc item: its examples without "Run code", its title without "Copy item path"', () => {
    const markdown = page('rustdoc-item.html', 'https://docs.rs/jobq/0.4.1/jobq/enum.Status.html');
    expect(markdown).toContain('\n## Enum Status\n');
    expect(markdown).toContain('\n```\nStatus::Done(7);\n```\n\nMatching on it');
    expect(markdown).toContain('##### Examples\n\n```\nlet s: Status<u8> = Status::Queued;\nassert!(!s.is_done());\n```');
    expect(markdown).not.toMatch(/Copy item path|Run code|play\.rust-lang\.org/);
  });

  it('a rustdoc item: its section headings, variants, impl lines and method signatures (classed "…-header")', () => {
    const markdown = page('rustdoc-item.html', 'https://docs.rs/jobq/0.4.1/jobq/enum.Status.html');
    expect(markdown).toContain('\n## Variants\n\n### `Done(T)`\n\nThe job ran to the end and gave this value.\n\n### `Queued`\n\nNo worker');
    expect(markdown).toContain('\n## Implementations\n\n### `impl<T> Status<T>`\n\n#### `pub const fn is_done(&self) -> bool`\n\nReturns `true` once');
    // The sidebar, the breadcrumbs and the toggles' and source links' chrome are not written.
    expect(markdown).not.toMatch(/0\.4\.1|Methods|is_done\]|Skip to main content|Expand description|Source/);
  });

  it('a rustdoc trait: its documentation, its methods, and its implementors after them', () => {
    const markdown = page('rustdoc-trait.html', 'https://docs.rs/tilemap/0.9.2/tilemap/trait.Render.html');
    expect(markdown).toMatch(/^# Render in tilemap - Rust\n\n## Trait Render\n\n0\.1\.0\n\n```\npub trait Render \{/);
    expect(markdown).toContain('\nSomething that can be drawn onto a canvas');
    expect(markdown).toContain('\n## Drawing order\n\nItems are drawn from the bottom layer');
    expect(markdown).toContain('\n## Required Methods\n\n#### `fn draw(&self, canvas: &mut Canvas)`\n\n0.1.0\n\nPaints the item onto the canvas');
    expect(markdown).toContain('\n## Provided Methods\n\n#### `fn draw_scaled(&self, canvas: &mut Canvas, factor: f32) where Self: Sized,`\n\n0.3.0\n\n');
    expect(markdown).toContain('\n## Implementors\n\n### `impl Render for Grid`\n\n0.1.0\n\n### `impl Render for Layer`');
    expect(markdown).toMatch(/### `impl Render for Yard`\n\n0\.3\.0$/);
    expect(markdown).not.toMatch(/Required Methods\]|Source|Expand description|tilemap\.rs/);
  });

  it('an MDN reference: headings without self-links, no copy buttons, a compatibility table that parses', () => {
    const markdown = page('mdn-reference.html', 'https://developer.mozilla.org/en-US/docs/Web/JavaScript/Reference/Global_Objects/Array/map');
    expect(markdown).toContain('\n## Try it\n');
    expect(markdown).toContain('```js\nconst array1 = [1, 4];');
    expect(markdown).toContain('|  | Desktop |  | Mobile |  |\n| --- | --- | --- | --- | --- |\n|  | Chrome | Firefox | Chrome Android | Safari on iOS |\n| `map` | 1 | 1.5 | 18 | 1 |');
    expect(markdown).toContain('`callbackFn`\n:   A function to execute for each element');
    expect(markdown).toContain('## Syntax\n\n```js\nmap(callbackFn)');
    expect(markdown).not.toMatch(/Copy to Clipboard|\]\(#|^js$/m);
  });
});
