/**
 * Rewrites of the parsed page that keep its content but change its form, for page-cleanup.ts:
 * math as TeX, lazy images resolved, links made absolute, admonitions as quotes, Q&A answers
 * labelled, code blocks' languages named. Each is one pass over a selector (linear).
 */

export interface PageNode {
  nodeName: string;
  nodeType: number;
  nodeValue: string | null;
  tagName: string;
  parentElement: PageNode | null;
  previousElementSibling: PageNode | null;
  textContent: string | null;
  childNodes: ArrayLike<unknown>;
  ownerDocument: { createElement(name: string): PageNode; createTextNode(text: string): unknown };
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  hasAttribute(name: string): boolean;
  removeAttribute(name: string): void;
  querySelector(selector: string): PageNode | null;
  querySelectorAll(selector: string): ArrayLike<PageNode>;
  closest(selector: string): PageNode | null;
  contains(node: unknown): boolean;
  append(...nodes: unknown[]): void;
  prepend(...nodes: unknown[]): void;
  replaceWith(...nodes: unknown[]): void;
  remove(): void;
}

export type PageDoc = { querySelectorAll(selector: string): ArrayLike<PageNode>; body?: PageNode | null };
/**
 * Admonitions (Sphinx and MkDocs `.admonition`, Docusaurus `.theme-admonition`, GitHub
 * `.markdown-alert`) as quotes with their title in bold: "Note" read as a paragraph of its own,
 * apart from what it qualifies. Rewritten here because Readability drops the classes.
 */
export function admonitionsToQuotes(document: PageDoc): void {
  for (const box of Array.from(document.querySelectorAll('div.admonition, aside.admonition, div.theme-admonition, div.markdown-alert'))) {
    const title = box.querySelector('.admonition-title, .markdown-alert-title, [class*="admonitionHeading"]');
    if (title) {
      const strong = box.ownerDocument.createElement('strong');
      strong.textContent = (title.textContent ?? '').replace(/\s+/g, ' ').trim();
      const paragraph = box.ownerDocument.createElement('p');
      paragraph.append(strong);
      title.replaceWith(paragraph);
    }
    const quote = box.ownerDocument.createElement('blockquote');
    quote.append(...Array.from(box.childNodes));
    box.replaceWith(quote);
  }
}

/**
 * Q&A pages marked up with schema.org's QAPage (Stack Exchange, many forums): a vote count read
 * as a bare number between paragraphs, and nothing told the accepted answer (a green tick) or
 * where one answer ended. Each count becomes "Score: N"; each answer opens with a rule and
 * "**Accepted answer**" or "**Answer**".
 */
export function markAnswers(document: PageDoc): void {
  for (const count of Array.from(document.querySelectorAll('[itemprop="upvoteCount"]'))) {
    const value = (count.getAttribute('content') ?? count.textContent ?? '').trim();
    if (/^-?[\d.,]+[kKmM]?$/.test(value)) count.textContent = `Score: ${value}`;
  }
  for (const answer of Array.from(document.querySelectorAll('[itemprop="acceptedAnswer"], [itemprop="suggestedAnswer"]'))) {
    const label = answer.ownerDocument.createElement('p');
    const strong = answer.ownerDocument.createElement('strong');
    strong.textContent = answer.getAttribute('itemprop') === 'acceptedAnswer' ? 'Accepted answer' : 'Answer';
    label.append(strong);
    answer.prepend(answer.ownerDocument.createElement('hr'), label);
  }
}

export function isHidden(node: PageNode): boolean {
  if (node.hasAttribute('hidden') && node.getAttribute('hidden')?.toLowerCase() !== 'until-found') return true;
  const style = node.getAttribute('style');
  return !!style && /(^|;)\s*(display\s*:\s*none|visibility\s*:\s*hidden)\s*(!important\s*)?(;|$)/i.test(style);
}

/** Sphinx's default/none lexers and the like: no language to name. */
const NO_LANGUAGE = new Set(['default', 'none', 'text', 'plain', 'plaintext', 'nohighlight', 'notranslate', 'source']);

/**
 * A code block's language from the first that names one: `language-X`/`lang-X` classes on the
 * `<pre>` or its `<code>`, `lang`/`data-lang`/`data-language` on either, SyntaxHighlighter's
 * `brush: X`, then `highlight-X` (Sphinx), `highlight-source-X` (GitHub) or `language-X` (MkDocs
 * Material, VitePress) on one of its six
 * nearest ancestors. '' when none does.
 */
export function codeLanguage(pre: PageNode): string {
  const code = pre.querySelector('code');
  for (const node of code ? [pre, code] : [pre]) {
    const found = /(?:^|\s)(?:language|lang)-([\w+#.-]+)/.exec(node.getAttribute('class') ?? '')?.[1] ?? /brush:\s*([\w+#.-]+)/.exec(node.getAttribute('class') ?? '')?.[1] ?? node.getAttribute('data-lang') ?? node.getAttribute('data-language') ?? node.getAttribute('lang');
    const language = clean(found);
    if (language) return language;
  }
  let ancestor = pre.parentElement;
  for (let level = 0; ancestor && level < 6; level++, ancestor = ancestor.parentElement) {
    const classes = ancestor.getAttribute('class') ?? '';
    const language = clean(/(?:^|\s)highlight-(?:source-|text-)?([\w+#.-]+)/.exec(classes)?.[1] ?? /(?:^|\s)language-([\w+#.-]+)/.exec(classes)?.[1]);
    if (language) return language;
  }
  return '';
}

function clean(language: string | null | undefined): string {
  const name = (language ?? '').trim().toLowerCase();
  return /^[\w+#.-]{1,30}$/.test(name) && !NO_LANGUAGE.has(name) ? name : '';
}

/** Attributes lazy-loading scripts read the real address from. */
const LAZY_SOURCES = ['data-src', 'data-lazy-src', 'data-original', 'data-lazy', 'data-url'];

export function resolveLazyImages(document: PageDoc): void {
  for (const img of Array.from(document.querySelectorAll('img'))) {
    const src = img.getAttribute('src') ?? '';
    if (!src || src.startsWith('data:') || /(^|\/)(blank|spacer|pixel|placeholder|transparent)\.(gif|png|svg)/i.test(src)) {
      const lazy = LAZY_SOURCES.map((name) => img.getAttribute(name)).find((value) => value && !value.startsWith('data:')) ?? firstSrcset(img.getAttribute('data-srcset') ?? img.getAttribute('srcset'));
      if (lazy) img.setAttribute('src', lazy);
    }
    // A 1×1 image is a tracking pixel (or a spacer): nothing a reader sees.
    if (/^[01](px)?$/.test(img.getAttribute('width') ?? '') && /^[01](px)?$/.test(img.getAttribute('height') ?? '')) img.remove();
  }
}

function firstSrcset(srcset: string | null): string | undefined {
  const first = srcset?.trim().split(/\s+/)[0];
  return first && !first.startsWith('data:') ? first.replace(/,$/, '') : undefined;
}

/**
 * Each `<math>` replaced by `<span data-math="inline|block">TeX</span>`, which the converter
 * writes as `$TeX$` or `$$TeX$$` unescaped. Its hidden wrappers (MediaWiki's display:none span,
 * and the `mwe-math-element` holding the fallback image) are replaced with it, up to 3 levels.
 */
export function mathToTex(document: PageDoc): void {
  for (const math of Array.from(document.querySelectorAll('math'))) {
    const annotation = math.querySelector('annotation[encoding="application/x-tex"]')?.textContent;
    let tex = (annotation ?? math.getAttribute('alttext') ?? (math.textContent ?? '').replace(/\s+/g, ' ')).trim();
    const wrapped = /^\{\\displaystyle\s*([\s\S]*)\}$/.exec(tex);
    if (wrapped) tex = wrapped[1]!.trim();
    let block = math.getAttribute('display') === 'block';
    let target = math;
    for (let level = 0; level < 3; level++) {
      const parent = target.parentElement;
      const classes = parent?.getAttribute('class') ?? '';
      if (!parent || !(isHidden(parent) || /(^|\s)mwe-math-element(\s|$)/.test(classes))) break;
      if (/mwe-math-mathml-display/.test(classes)) block = true;
      target = parent;
    }
    if (!tex) {
      target.remove();
      continue;
    }
    const span = math.ownerDocument.createElement('span');
    span.setAttribute('data-math', block ? 'block' : 'inline');
    span.textContent = tex;
    target.replaceWith(span);
  }
}

/**
 * Links and images made absolute against the document's base URL: the first `<base href>`,
 * itself resolved against the page's URL (HTML, "document base URL"), else the page's URL.
 */
export function absolutise(document: PageDoc, pageUrl: string): void {
  let base = pageUrl;
  for (const node of Array.from(document.querySelectorAll('base[href]'))) {
    try {
      base = new URL(node.getAttribute('href') ?? '', pageUrl).href;
    } catch {
      // An unparsable base is ignored, as browsers do.
    }
    break;
  }
  for (const [selector, attribute] of [['a[href]', 'href'], ['img[src]', 'src']] as const) {
    for (const node of Array.from(document.querySelectorAll(selector))) {
      const value = node.getAttribute(attribute);
      if (!value || value.startsWith('#') || /^(data|javascript|mailto|tel):/i.test(value)) continue;
      try {
        node.setAttribute(attribute, new URL(value, base).href);
      } catch {
        // Leave a value URL cannot parse as it is.
      }
    }
  }
}
