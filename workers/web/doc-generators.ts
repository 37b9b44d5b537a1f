/**
 * Pages a documentation generator wrote, told by its own markers, whose content element is known:
 * it is taken as the article, less the generator's chrome, and Readability does not read them.
 *
 * Why: Readability removes every element whose class names "header" (its unlikely candidates,
 * before scoring), and rustdoc (std, docs.rs) classes its headings `section-header` and
 * `code-header`: "Implementations", each variant, every method's signature and every `impl`
 * line were lost. Renaming the classes kept them, but Readability then scored a trait page's
 * list of implementors above its documentation (most of `Display`'s docs were lost).
 */

/**
 * The content element of a rustdoc item or module page (`<meta name="generator"
 * content="rustdoc">`, `<body class="rustdoc …">`, `#main-content`), made ready; undefined for
 * other pages. Source-view pages (`body.src`) are left to the usual path: their content is a
 * file of code beside a column of line numbers.
 */
export function generatorContent(document: Document): Element | undefined {
  const generator = document.querySelector('meta[name="generator"]')?.getAttribute('content') ?? '';
  const body = document.body;
  const classes = ` ${body?.getAttribute('class') ?? ''} `;
  if (generator.trim() !== 'rustdoc' || !classes.includes(' rustdoc ') || classes.includes(' src ')) return undefined;
  const main = document.querySelector('#main-content');
  if (!main || (main.textContent ?? '').trim() === '') return undefined;
  cleanRustdoc(main);
  return main;
}

/**
 * rustdoc's chrome inside its content: the breadcrumbs (the title names the path), the
 * "Expand description" and "Show 76 methods" toggles' labels, the ⓘ that opens a notable
 * trait's pop-up, and each "Source" link with its " · " separator. Signatures (`.code-header`)
 * become code. The "since" version floated right of a signature goes after it, so it does not
 * stand above the heading as a line of its own. The `<h1>` becomes an `<h2>`, as Readability
 * made it: the page's title is written above it as the `#` heading.
 */
function cleanRustdoc(main: Element): void {
  for (const node of Array.from(main.querySelectorAll('.rustdoc-breadcrumbs, details.top-doc > summary.hideme, details.type-contents-toggle > summary.hideme, a.tooltip[data-notable-ty], rustdoc-toolbar'))) node.remove();
  for (const link of Array.from(main.querySelectorAll('a.src'))) {
    const before = link.previousSibling;
    if (before && before.nodeType === 3 && /^\s*·\s*$/.test(before.nodeValue ?? '')) before.remove();
    link.remove();
  }
  for (const side of Array.from(main.querySelectorAll('.rightside'))) {
    const heading = side.parentElement?.querySelector(':scope > .code-header');
    if ((side.textContent ?? '').trim() === '') side.remove();
    else if (heading) heading.after(side);
  }
  // A signature reads as code, without a link on each type in it (the types' pages are a
  // search away; a trait's hundreds of implementors linked three times each were most of it).
  for (const heading of Array.from(main.querySelectorAll('.code-header'))) {
    // A `where` clause is a block of its own on the page ("IntoIter<T>where T: Clone" run on).
    for (const clause of Array.from(heading.querySelectorAll('.where, br'))) clause.before(main.ownerDocument.createTextNode(' '));
    const code = main.ownerDocument.createElement('code');
    code.textContent = (heading.textContent ?? '').replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/,? \)/g, ')').trim();
    heading.replaceChildren(code);
  }
  for (const h1 of Array.from(main.querySelectorAll('h1'))) {
    const h2 = main.ownerDocument.createElement('h2');
    h2.append(...Array.from(h1.childNodes));
    h1.replaceWith(h2);
  }
}
