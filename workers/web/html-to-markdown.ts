import { isProbablyReaderable, Readability } from '@mozilla/readability';
import type TurndownService from 'turndown';
import { generatorContent } from './doc-generators';
import { flattenDeepNesting } from './flatten-nesting';
import { createConverter } from './markdown-rules';
import { resetTables } from './markdown-tables';
import { preparePage } from './page-cleanup';
import { cutAtNodes, maxPageNodes } from './node-budget';
import { capMetadata, extractMetadata, type PageMetadata } from './metadata';
import { nativeRequire } from './native-require';
import type * as Linkedom from 'linkedom' with { 'resolution-mode': 'import' };

const { parseHTML } = nativeRequire('linkedom') as typeof Linkedom;

export interface Converted {
  markdown: string;
  metadata: PageMetadata;
  /** Whether Readability found an article (otherwise the cleaned body was converted). */
  article: boolean;
}

/** Also removed when there is no article; an article's own `<header>` often holds its title. */
const BODY_NOISE = 'header';

let turndown: TurndownService | undefined;

function converter(): TurndownService {
  return (turndown ??= createConverter());
}

/** A lone `<article>` with at least this many characters of text is taken as the content. */
const SEMANTIC_ARTICLE_MIN_CHARS = 500;

type Root = { querySelectorAll(selector: string): ArrayLike<unknown>; textContent: string | null };

/**
 * HTML to Markdown: linkedom parses, metadata is read first, the page is cleaned of what a
 * reader does not see (page-cleanup.ts: chrome, controls, hidden elements, permalinks; links and
 * images made absolute against `url`), the main content is found, and turndown with our rules
 * (markdown-rules.ts, markdown-tables.ts) writes Markdown.
 *
 * Finding the main content, in order:
 * 0. A documentation generator's page (rustdoc) is its content element (see doc-generators.ts):
 *    Readability drops the generator's headings for their class names.
 * 1. Decision (speed): a page with exactly one `<article>` holding 500+ characters is its own
 *    answer; Readability would pick the same block at several times the cost (276 ms of 683 ms
 *    on a 300 KB article here).
 * 2. Readability, when its own `isProbablyReaderable` says the page has an article.
 * 3. Otherwise the whole body, less its `<header>`: Readability's "best candidate" on such pages
 *    (result lists, link pages) is often a navigation block. A page whose text is mostly link
 *    text is such a page and skips Readability (see isLinkList).
 *
 * A page of more than `maxNodes` elements and character references (default maxPageNodes: what
 * the thread's heap holds) is converted up to there, and the Markdown says where it was cut.
 */
export function htmlToMarkdown(html: string, url: string, maxNodes = maxPageNodes()): Converted {
  const budgeted = cutAtNodes(html, maxNodes);
  const source = ensureDocument(budgeted.html);
  let document = parseFlat(source);
  const metadata = extractMetadata(document as never);
  const clean = (doc: typeof document) => preparePage(doc as never, url);
  clean(document);
  // The page's own headline, read before Readability changes the page: MediaWiki's <h1> sits
  // outside the content Readability keeps, and the title tag adds " - Wikipedia" to it.
  const headline = (document.querySelector('h1')?.textContent ?? '').replace(/\s+/g, ' ').trim();
  let root: Root | undefined;
  let article = false;
  const articles = document.querySelectorAll('article');
  const generated = generatorContent(document as unknown as Document);
  if (generated) {
    root = generated as unknown as Root;
    article = true;
  } else if (articles.length === 1 && (articles[0].textContent ?? '').replace(/\s+/g, ' ').length >= SEMANTIC_ARTICLE_MIN_CHARS) {
    root = articles[0] as unknown as Root;
    article = true;
  } else if (!isLinkList(document) && isProbablyReaderable(document as unknown as Document, { minContentLength: 100, minScore: 20 })) {
    let parsed: ReturnType<Readability['parse']> = null;
    try {
      // Readability changes the document it reads; the fallback below parses the page again.
      parsed = new Readability(document as unknown as Document, { charThreshold: 200, classesToPreserve: codeLanguageClasses(document) }).parse();
    } catch {
      parsed = null;
    }
    if (parsed?.content && (parsed.textContent ?? '').trim().length > 0) {
      root = parseHTML(`<!doctype html><html><body>${parsed.content}</body></html>`).document.body as unknown as Root;
      article = true;
      if (!metadata.title && parsed.title) metadata.title = parsed.title;
      if (!metadata.author && parsed.byline) metadata.author = parsed.byline;
      if (!metadata.description && parsed.excerpt) metadata.description = parsed.excerpt;
    } else {
      document = parseFlat(source);
      clean(document);
    }
  }
  if (!root) {
    const body = document.body ?? document.documentElement;
    for (const node of Array.from(body.querySelectorAll(BODY_NOISE))) node.remove();
    root = body as unknown as Root;
  }
  addTableRows(root);
  let markdown = convert(root).replace(/\n{3,}/g, '\n\n').trim();
  // Readability's title, byline and excerpt are as long as the page makes them.
  const capped = capMetadata(metadata);
  if (capped.title && article && !hasTitleHeading(markdown, capped.title)) {
    markdown = `# ${titleWithoutSite(capped.title, headline)}\n\n${markdown}`;
  }
  if (budgeted.cut) markdown += `\n\n[Page cut: it has more than ${maxNodes} elements and character references, more than this server converts at once; the rest is left out.]`;
  return { markdown, metadata: { ...capped, url }, article };
}

/**
 * The page's headline where the title is it plus a site name ("Pythagorean theorem - Wikipedia"):
 * the title starts with the headline, then a separator and a shorter rest. Otherwise the title
 * (a logo's <h1>, "Site - Page", is no shorter than the page's name after it, and is not taken).
 */
function titleWithoutSite(title: string, headline: string): string {
  if (!headline || !title.startsWith(headline)) return title;
  const rest = /^\s*[-|–—·•:]\s*(.+)$/.exec(title.slice(headline.length))?.[1];
  return rest && rest.length < headline.length ? headline : title;
}

/**
 * Whether the Markdown opens with its title as a heading already: the first line, or a `# `
 * heading near the top that the title holds or that holds it ("Title | Site"). News pages put
 * a kicker link ("Local news") above the headline, and the title was written twice.
 */
function hasTitleHeading(markdown: string, title: string): boolean {
  if (markdown.startsWith('# ')) return true;
  const heading = /^# (.+)$/m.exec(markdown.slice(0, 1_000))?.[1];
  const words = (text: string) => text.replace(/[\\*_`]/g, '').replace(/\s+/g, ' ').trim().toLowerCase();
  return !!heading && (words(title).includes(words(heading)) || words(heading).includes(words(title)));
}

/** Past this share of its text in links, a page is a list of links, not an article. */
const LINK_LIST_DENSITY = 0.5;

/**
 * Whether most of the body's text is link text. Readability removes every block that dense in
 * links, finds too little text left and starts again from a re-parsed copy of the page with fewer
 * rules, up to four passes: 20,000 links in one `<p>` (371 KB) took 3.4-6.3 s, 0.9 s without,
 * for the body it then returned anyway.
 */
function isLinkList(document: { body: { textContent: string | null; querySelectorAll(selector: string): ArrayLike<{ textContent: string | null }> } | null }): boolean {
  const body = document.body;
  if (!body) return false;
  const total = (body.textContent ?? '').replace(/\s+/g, '').length;
  if (total === 0) return false;
  let linked = 0;
  for (const link of Array.from(body.querySelectorAll('a'))) linked += (link.textContent ?? '').replace(/\s+/g, '').length;
  return linked / total > LINK_LIST_DENSITY;
}

/**
 * The `language-…`/`lang-…` classes of the page's code blocks: Readability drops every class it
 * is not told to keep, and the fenced block's language (```` ```bash ````) comes from them.
 */
function codeLanguageClasses(document: { querySelectorAll(selector: string): ArrayLike<{ getAttribute(name: string): string | null }> }): string[] {
  const kept = new Set<string>();
  for (const node of Array.from(document.querySelectorAll('pre[class], code[class]'))) {
    for (const name of (node.getAttribute('class') ?? '').split(/\s+/)) if (/^(language|lang)-/.test(name)) kept.add(name);
  }
  return [...kept];
}

/** Rows found per table during one turndown run (tables do not change while it writes). */
let rowsSeen: WeakMap<object, Element[]> | undefined;

/**
 * turndown with `table.rows` memoised for the run (the GFM plugin reads it O(rows²) times), on
 * `root` itself: turndown clones its input to leave it unchanged, but this document is thrown
 * away afterwards, and the clone cost a tenth of a page's conversion.
 */
function convert(root: Root): string {
  Object.defineProperty(root, 'cloneNode', { value: () => root, configurable: true });
  rowsSeen = new WeakMap();
  resetTables();
  // linkedom ends a text node at each character reference ("5 ", ">", " 3"), and turndown
  // escapes each node as if it began a line: "5 &gt; 3" came out "5 \> 3", "a&nbsp;- b" as
  // "a \- b", while "&#49;. text" was left to start a list. Adjacent text is joined first.
  (root as unknown as { normalize?(): void }).normalize?.();
  memoiseChildNodes(root);
  childNodesSeen = new WeakMap();
  try {
    return converter().turndown(root as unknown as HTMLElement);
  } finally {
    rowsSeen = undefined;
    childNodesSeen = undefined;
  }
}

/** Child lists per node during one turndown run; a new map after any removal. */
let childNodesSeen: WeakMap<object, unknown> | undefined;

/**
 * linkedom builds `childNodes` anew, walking the children, on every read, and the GFM plugin
 * reads it twice per child in its loops over a table's rows (`for (i < node.childNodes.length)
 * … node.childNodes[i]`), several times per table: a table of 2,000 rows took 4 s, of 8,000 rows
 * 34 s (the fetch timed out). During a run the lists are kept; turndown changes the tree only
 * with `removeChild` (collapsing whitespace, before it converts), which drops them all. Installed
 * once, on the prototype that holds both (linkedom's ParentNode mixin).
 */
function memoiseChildNodes(root: Root): void {
  let proto = Object.getPrototypeOf(root) as object | null;
  while (proto && !Object.prototype.hasOwnProperty.call(proto, 'childNodes')) proto = Object.getPrototypeOf(proto) as object | null;
  if (!proto || (proto as { [MEMOISED]?: true })[MEMOISED]) return;
  const childNodes = Object.getOwnPropertyDescriptor(proto, 'childNodes')!.get!;
  const removeChild = (proto as { removeChild?: (node: unknown) => unknown }).removeChild;
  if (!removeChild) return;
  Object.defineProperties(proto, {
    childNodes: {
      configurable: true,
      get(this: object) {
        if (!childNodesSeen) return childNodes.call(this);
        let list = childNodesSeen.get(this);
        if (list === undefined) childNodesSeen.set(this, (list = childNodes.call(this)));
        return list;
      },
    },
    removeChild: {
      configurable: true,
      writable: true,
      value(this: object, node: unknown) {
        if (childNodesSeen) childNodesSeen = new WeakMap();
        return removeChild.call(this, node);
      },
    },
    [MEMOISED]: { value: true },
  });
}

const MEMOISED = Symbol('childNodes memoised');

/**
 * linkedom has no `HTMLTableElement.rows`, which the GFM table rule needs. Turndown clones its
 * input, so the getter goes on the table prototype (once). Rows are, as in the DOM, those of its
 * `<thead>`s, then its own `<tr>` children and those of its `<tbody>`s, then those of its
 * `<tfoot>`s, found by walking children (a selector per read cost an eighth of a 300 KB page's
 * conversion).
 */
function addTableRows(root: { querySelectorAll(selector: string): ArrayLike<unknown> }): void {
  const table = root.querySelectorAll('table')[0] as object | undefined;
  if (!table || 'rows' in table) return;
  Object.defineProperty(Object.getPrototypeOf(table), 'rows', {
    get(this: Element) {
      let rows = rowsSeen?.get(this);
      if (rows) return rows;
      const head: Element[] = [];
      const body: Element[] = [];
      const foot: Element[] = [];
      const sections = { THEAD: head, TBODY: body, TFOOT: foot } as Record<string, Element[] | undefined>;
      for (const child of Array.from(this.children)) {
        if (child.tagName === 'TR') body.push(child);
        else {
          const into = sections[child.tagName];
          if (into) for (const row of Array.from(child.children)) if (row.tagName === 'TR') into.push(row);
        }
      }
      rows = [...head, ...body, ...foot];
      rowsSeen?.set(this, rows);
      return rows;
    },
  });
}

/** The page parsed, with nesting too deep to convert flattened (see flatten-nesting). */
function parseFlat(source: string) {
  const { document } = parseHTML(source);
  flattenDeepNesting(document.documentElement);
  return document;
}

function ensureDocument(html: string): string {
  return /<html[\s>]/i.test(html.slice(0, 4096)) ? html : `<!doctype html><html><head></head><body>${html}</body></html>`;
}
