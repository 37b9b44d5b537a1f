/**
 * The parsed page made ready for extraction and conversion, in one pass per selector (linear in
 * the page): what a reader of the page in a browser does not see, or sees as something else, is
 * removed or rewritten before Readability and turndown read it.
 */

import { absolutise, admonitionsToQuotes, codeLanguage, isHidden, markAnswers, mathToTex, resolveLazyImages, type PageDoc as Doc, type PageNode as Node } from './page-rewrites';

/** Page chrome, never content. */
const CHROME = [
  'script, style, noscript, template, svg, iframe, canvas, nav, aside, footer, form',
  '[role="navigation"], [role="banner"], [role="contentinfo"], [role="complementary"], [aria-hidden="true"]',
  // Controls: "Copy", "Share", "Accept all cookies", a <select>'s every option, run into the text.
  'button, select, textarea, clipboard-copy, video, audio',
  // MediaWiki's "[edit]" beside each heading: a link in the heading's wrapper, dense enough in
  // links that Readability dropped the wrapper with the heading, so every section title was lost.
  '.mw-editsection',
  // Line numbers beside code (Pygments tables and inline spans, Prism, highlight.js/Hexo, Rouge).
  'td.linenos, .linenodiv, pre span.linenos, pre .lineno, .line-numbers-rows, td.gutter, td.rouge-gutter',
].join(', ');

/**
 * `id`/`class` names of cookie and consent banners (OneTrust, Cookiebot, site-made): "cookie"
 * with a banner word (a `cookie-recipe` card is content), or a consent platform's own name.
 */
const CONSENT = /(^|[\s_-])(cookies?[-_]?(banner|notice|bar|popup|pop-up|modal|dialog|wall|law|consent|message|alert|overlay|container)|[\w-]*consent[\w-]*|gdpr[\w-]*|onetrust[\w-]*|cookiebot[\w-]*)(\s|$)/i;
/** A consent banner is short; a longer block naming cookies is taken as content (an article about them). */
const CONSENT_MAX_CHARS = 1_500;

/** Symbols sites put in a heading's permalink: ¶ (Sphinx), # (many), § , 🔗, ⚓. */
const PERMALINK_TEXT = /^[\s¶#§🔗⚓\uFE0F]*$/u;

/**
 * Rewrites `document` in place, in this order (each step needs the one before):
 * 1. MathML becomes TeX (`$…$`, `$$…$$` on its own line), from its TeX annotation or `alttext`;
 *    MediaWiki hides the MathML (display:none) beside an image the next steps remove.
 * 2. Lazy images take their real address (`data-src`…) over a placeholder or none; tracking
 *    pixels (1×1) are removed.
 * 3. Links and images are made absolute (see absolutise).
 * 4. Hidden elements are removed: `hidden` (but `until-found`, which a page search reveals), and
 *    inline `display:none` / `visibility:hidden`, but for panels a button or tab of the page opens
 *    (revealable). Decision: the reader does not see them, and
 *    hidden text is the usual carrier of instructions planted for AI readers; Readability
 *    already dropped them from articles, so pages without one now match.
 * 5. Advertisement slots and newsletter sign-up boxes are removed (removeBoxes); buttons inside
 *    headings and `<summary>` (accordions) give way to their text (isDisclosure), as do buttons
 *    that open a panel of content (keepDisclosureButtons); overlays are removed
 *    (removeOverlays); then chrome, controls, consent banners, edit links and line-number
 *    gutters.
 * 6. Permalink anchors in headings (¶, #, an icon, or empty) are removed; icon links (an
 *    element, no text) take their `aria-label` or `title`; share links (X, Facebook…) are
 *    removed; admonitions become quotes; Q&A answers are labelled (markAnswers); each code
 *    block's language is written on its `<pre>` as `language-…` (see codeLanguage).
 */
export function preparePage(document: Doc, pageUrl: string): void {
  mathToTex(document);
  resolveLazyImages(document);
  absolutise(document, pageUrl);
  removeHidden(document, revealable(document));
  removeBoxes(document);
  for (const button of Array.from(document.querySelectorAll('h1 button, h2 button, h3 button, h4 button, h5 button, h6 button, summary button'))) {
    if (isDisclosure(button)) button.replaceWith(...Array.from(button.childNodes));
  }
  keepDisclosureButtons(document);
  removeOverlays(document);
  // A <noscript> image stands for the one scripts would show: kept where no image precedes it
  // (a lazy <img> before it was resolved above). Its other content ("enable JavaScript") goes.
  for (const noscript of Array.from(document.querySelectorAll('noscript'))) {
    const before = noscript.previousElementSibling;
    if (before && (before.tagName === 'IMG' || before.tagName === 'PICTURE' || before.querySelector('img'))) continue;
    const images = Array.from(noscript.querySelectorAll('img'));
    if (images.length > 0) noscript.replaceWith(...images);
  }
  // A control's label goes with the control ("Sorted by:" was left without its <select>).
  const controls = new Set(Array.from(document.querySelectorAll('select[id], textarea[id], input[id]:not([type="checkbox"]):not([type="radio"])'), (control) => control.getAttribute('id')));
  for (const label of Array.from(document.querySelectorAll('label[for]'))) if (controls.has(label.getAttribute('for'))) label.remove();
  // An icon's own name (`aria-label`, `<title>`) names its link when the link has none.
  for (const svg of Array.from(document.querySelectorAll('a[href] svg'))) {
    const link = svg.closest('a');
    const name = (svg.getAttribute('aria-label') ?? svg.querySelector('title')?.textContent ?? '').replace(/\s+/g, ' ').trim();
    if (link && name && !link.hasAttribute('aria-label') && !link.hasAttribute('title')) link.setAttribute('aria-label', name);
  }
  // Links holding an element (an <svg>, an icon font's <i>), before chrome removes the <svg>s.
  const iconLinks = Array.from(document.querySelectorAll('a[href][aria-label], a[href][title]')).filter((link) => link.querySelector('*') !== null);
  for (const node of Array.from(document.querySelectorAll(CHROME))) node.remove();
  for (const node of Array.from(document.querySelectorAll('[id*="ookie" i], [class*="ookie" i], [id*="onsent" i], [class*="onsent" i], [id*="gdpr" i], [class*="gdpr" i], [id*="onetrust" i], [id*="Cookiebot" i]'))) {
    if (/^(HTML|BODY|MAIN|ARTICLE)$/.test(node.tagName)) continue;
    if (!CONSENT.test(`${node.getAttribute('id') ?? ''} ${node.getAttribute('class') ?? ''}`)) continue;
    if (!textLonger(node, CONSENT_MAX_CHARS)) node.remove();
  }
  for (const link of Array.from(document.querySelectorAll('h1 a[href], h2 a[href], h3 a[href], h4 a[href], h5 a[href], h6 a[href], dt a[href], a.headerlink, a.anchor, a.header-anchor, a.anchor-link, a.hash-link'))) {
    const href = link.getAttribute('href') ?? '';
    if (href.startsWith('#') && PERMALINK_TEXT.test(link.textContent ?? '') && !link.querySelector('img')) link.remove();
  }
  // An icon link (its <svg> removed above) is named by its label, as a screen reader names it.
  // Not an empty one: rustdoc's "Run code" beside each example (a CSS arrow) is not an icon,
  // and named it made Readability drop the short examples as "linky", for a line of URL.
  for (const link of iconLinks) {
    if ((link.textContent ?? '').trim() === '' && !link.querySelector('img')) link.textContent = (link.getAttribute('aria-label') ?? link.getAttribute('title') ?? '').replace(/\s+/g, ' ').trim();
  }
  for (const link of Array.from(document.querySelectorAll('a[href]'))) {
    if (SHARE.test(link.getAttribute('href') ?? '')) removeWithEmptyItem(link);
  }
  admonitionsToQuotes(document);
  markAnswers(document);
  for (const pre of Array.from(document.querySelectorAll('pre'))) {
    const language = codeLanguage(pre);
    if (!language) continue;
    pre.setAttribute('class', `language-${language}`);
    // The language's name shown above the block (MDN's "js", VitePress's "ts") is in the fence.
    const label = pre.previousElementSibling;
    if (label && /^(DIV|SPAN|SMALL)$/.test(label.tagName) && !textLonger(label, 20) && (label.textContent ?? '').trim().toLowerCase() === language) label.remove();
  }
}

/**
 * Whether a button in a heading or `<summary>` is the heading's own text (an accordion: it opens
 * a panel, or holds all the text) rather than a control beside it: rustdoc's "Copy item path"
 * in every item's title was written into the `#` heading.
 */
function isDisclosure(button: Node): boolean {
  if (button.hasAttribute('aria-expanded') || button.hasAttribute('aria-controls')) return true;
  const holder = button.closest('h1, h2, h3, h4, h5, h6, summary');
  const letters = (node: Node | null) => (node?.textContent ?? '').replace(/\s+/g, '').length;
  return letters(holder) <= letters(button);
}

/**
 * Hidden elements removed (see preparePage, step 4), but for one holding more than half the
 * page's text: a page that hides its body until its scripts reveal it (an anti-flicker snippet,
 * an app shell) is read as shown after that. Decision: such a page read as empty was worse.
 * Text is measured up to the limit (textLonger), for the outermost hidden elements and at most
 * MAX_KEPT_LARGE nested large ones.
 */
function removeHidden(document: Doc, keep: Set<string>): void {
  const total = (document.body?.textContent ?? '').length;
  let removed: Node | undefined;
  let keptLarge = 0;
  for (const node of Array.from(document.querySelectorAll('[hidden], [style]'))) {
    if (!isHidden(node) || /^(HTML|BODY)$/.test(node.tagName) || removed?.contains(node)) continue;
    if (keep.has(node.getAttribute('id') ?? '')) {
      // Shown, so that Readability (which drops hidden nodes) keeps it too.
      node.removeAttribute('hidden');
      node.removeAttribute('style');
      continue;
    }
    if (keptLarge < MAX_KEPT_LARGE && textLonger(node, total / 2)) {
      keptLarge++;
      continue;
    }
    node.remove();
    removed = node;
  }
}

/**
 * Hidden elements each holding more than half the page's text nest (two such cannot be apart):
 * past this many, the next is removed unmeasured, so a page nesting hundreds of them is not
 * measured hundreds of times over.
 */
const MAX_KEPT_LARGE = 8;

/**
 * Whether `node` holds more than `limit` characters of text, counted by walking its text nodes
 * and stopping past the limit: a check on a short box costs what the box holds up to the limit,
 * not its whole subtree (nested boxes each kept for being long were measured in full).
 */
function textLonger(node: Node, limit: number): boolean {
  let length = 0;
  const stack: Node[] = [node];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (next.nodeType === 3) {
      length += (next.nodeValue ?? '').length;
      if (length > limit) return true;
      continue;
    }
    const children = next.childNodes as ArrayLike<Node>;
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return false;
}

/**
 * The ids of panels a control of the page opens (`aria-controls` on a button or tab): a closed
 * accordion's answer or an inactive tab is hidden until clicked, content one click away, as in a
 * closed `<details>`; such panels are kept.
 */
function revealable(document: Doc): Set<string> {
  const ids = new Set<string>();
  for (const control of Array.from(document.querySelectorAll('button[aria-controls], [role="tab"][aria-controls], [role="button"][aria-controls]'))) {
    for (const id of (control.getAttribute('aria-controls') ?? '').split(/\s+/)) if (id) ids.add(id);
  }
  return ids;
}

/**
 * A button that opens a panel of the page's content (an FAQ accordion without headings: the
 * button holds the question) becomes a paragraph of its bold text; other buttons are removed
 * with the chrome. Told by `aria-controls` naming an element of the page outside navigation,
 * menus and dialogs (a menu toggle names its menu).
 */
function keepDisclosureButtons(document: Doc): void {
  const buttons = Array.from(document.querySelectorAll('button[aria-controls]'));
  if (buttons.length === 0) return;
  const byId = new Map<string, Node>();
  for (const node of Array.from(document.querySelectorAll('[id]'))) if (!byId.has(node.getAttribute('id')!)) byId.set(node.getAttribute('id')!, node);
  for (const button of buttons) {
    const panel = byId.get((button.getAttribute('aria-controls') ?? '').trim());
    const text = (button.textContent ?? '').replace(/\s+/g, ' ').trim();
    if (!panel || !text || panel.closest('nav, aside, header, footer, [role="navigation"], [role="menu"], [role="dialog"], [role="listbox"]')) continue;
    const paragraph = button.ownerDocument.createElement('p');
    const strong = button.ownerDocument.createElement('strong');
    strong.textContent = text;
    paragraph.append(strong);
    button.replaceWith(paragraph);
  }
}

/**
 * Overlays over the page (cookie and newsletter pop-ups, dialogs), but for one holding more than
 * half the page's text: some sites show a post in a dialog over its list (see removeHidden).
 */
function removeOverlays(document: Doc): void {
  const total = (document.body?.textContent ?? '').length;
  let removed: Node | undefined;
  for (const node of Array.from(document.querySelectorAll('[role="dialog"], [role="alertdialog"], [aria-modal="true"]'))) {
    if (removed?.contains(node) || textLonger(node, total / 2)) continue;
    node.remove();
    removed = node;
  }
}

/** Links that share the page (X, Facebook, LinkedIn, Reddit, WhatsApp, Pinterest, e-mail). */
const SHARE = /^(https?:\/\/([\w-]+\.)*(twitter\.com\/(intent|share)|x\.com\/(intent|share)|facebook\.com\/(sharer|share\.php|dialog\/share)|linkedin\.com\/(sharing|shareArticle)|reddit\.com\/submit|pinterest\.[a-z.]+\/pin\/create|api\.whatsapp\.com\/send|wa\.me\/\?|t\.me\/share|bsky\.app\/intent)|whatsapp:\/\/send|mailto:\?)/i;

/** `node` removed, and the list item (and list) it leaves with nothing to show. */
function removeWithEmptyItem(node: Node): void {
  let item = node.closest('li');
  node.remove();
  while (item && (item.textContent ?? '').trim() === '' && !item.querySelector('img')) {
    const list = item.parentElement;
    item.remove();
    item = list && /^(UL|OL)$/.test(list.tagName) && list.querySelector('li') === null ? list : null;
  }
}

/** `id`/`class` names of advertisement slots and of newsletter sign-up boxes. */
const AD = /(^|\s)(ad|ads|advert[\w-]*|ad[-_][\w-]+|[\w-]+[-_]ads?|adsbygoogle|sponsored[\w-]*)(\s|$)/i;
const NEWSLETTER = /newsletter|subscribe|sign-?up/i;
/** Ad slots hold a label ("Advertisement") and an empty frame; a longer block is content. */
const AD_MAX_CHARS = 200;
/** A sign-up box is a heading, a sentence and its form. */
const NEWSLETTER_MAX_CHARS = 600;

/**
 * Advertisement slots (their "Advertisement" labels were left between paragraphs) and newsletter
 * sign-up boxes (their heading and pitch were left without the form). Both by `id`/`class` and
 * only when short, so a block of content named so is kept. Before forms are removed: a sign-up
 * box is told by the form it holds.
 */
function removeBoxes(document: Doc): void {
  for (const node of Array.from(document.querySelectorAll('[class*="ad" i], [id*="ad" i], [data-ad-slot], ins.adsbygoogle, [class*="sponsor" i]'))) {
    if (/^(HTML|BODY|MAIN|ARTICLE)$/.test(node.tagName)) continue;
    const names = `${node.getAttribute('id') ?? ''} ${node.getAttribute('class') ?? ''}`;
    if ((AD.test(names) || node.hasAttribute('data-ad-slot')) && !textLonger(node, AD_MAX_CHARS)) node.remove();
  }
  for (const node of Array.from(document.querySelectorAll('[class*="newsletter" i], [id*="newsletter" i], [class*="subscribe" i], [id*="subscribe" i], [class*="signup" i], [class*="sign-up" i]'))) {
    if (/^(HTML|BODY|MAIN|ARTICLE|FORM)$/.test(node.tagName) || !NEWSLETTER.test(`${node.getAttribute('id') ?? ''} ${node.getAttribute('class') ?? ''}`)) continue;
    if (node.querySelector('form, input[type="email"]') && !textLonger(node, NEWSLETTER_MAX_CHARS)) node.remove();
  }
}

