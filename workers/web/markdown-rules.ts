import { strikethrough } from '@joplin/turndown-plugin-gfm';
import TurndownService from 'turndown';
import { isLayoutTable, tableRules } from './markdown-tables';

interface El {
  nodeName: string;
  nodeType: number;
  nodeValue: string | null;
  textContent: string | null;
  childNodes: ArrayLike<El>;
  parentNode: El | null;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  querySelector(selector: string): El | null;
}

/** One line of code as a code span (empty for a blank line), its fence longer than any run of backticks in it. */
function inlineCode(line: string): string {
  if (line.trim() === '') return '';
  let longest = 0;
  for (const run of line.matchAll(/`+/g)) longest = Math.max(longest, run[0].length);
  const fence = '`'.repeat(longest + 1);
  const pad = line.startsWith('`') || line.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${line}${pad}${fence}`;
}

/** Whether a `<dl>` has a `<dt>` of its own (checked per `<dd>`, stopping at the first). */
function hasTerm(list: El | null): boolean {
  if (!list) return false;
  const children = list.childNodes;
  for (let i = 0; i < children.length; i++) if (children[i]!.nodeName === 'DT') return true;
  return false;
}

/** Elements that end a line inside `<pre>` (editors and blog engines write one per line). */
const LINE_ELEMENTS = new Set(['DIV', 'P', 'LI', 'TR']);

/**
 * The text of a code block as a browser shows it: text nodes as they are, a newline for each
 * `<br>` and after each line-level element (a `<div>` per line). `textContent` ran such lines
 * together. A `<pre>` holding several `<code>` blocks (the Node.js docs' ES module and CommonJS
 * variants of each example, one shown at a time) has them apart, after a blank line: the last
 * line of one and the first of the next ran together. Walks with an explicit stack (no recursion).
 */
export function codeText(pre: El): string {
  let text = '';
  let codes = 0;
  const stack: Array<El | 'end-line'> = [pre];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node === 'end-line') {
      if (text !== '' && !text.endsWith('\n')) text += '\n';
      continue;
    }
    if (node.nodeType === 3) {
      text += node.nodeValue ?? '';
      continue;
    }
    if (node.nodeType !== 1 && node !== pre) continue;
    if (node.nodeName === 'BR') {
      text += '\n';
      continue;
    }
    if (node.nodeName === 'CODE' && node.parentNode === pre && codes++ > 0 && text !== '' && !text.endsWith('\n')) text += '\n\n';
    if (node !== pre && LINE_ELEMENTS.has(node.nodeName)) stack.push('end-line');
    const children = node.childNodes;
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return text;
}

/**
 * The converter: turndown (ATX headings, fenced code, `-` bullets, `_` emphasis), GFM
 * strikethrough, and our rules for what turndown and the GFM plugin wrote wrong:
 * - every `<pre>` is a fenced block (with or without `<code>`), its language from the
 *   `language-…` class page-cleanup wrote, its lines as shown (codeText); in a data table's
 *   cell, a code span per line (a fence cannot be in a GFM cell);
 * - tables (markdown-tables.ts);
 * - links: to a place in this page (`#…`) or `javascript:` written as their text; with no text
 *   (page-cleanup gave icon links their label), dropped; around a heading or other blocks (a
 *   card), the link goes on its first heading, else its first line (`### [Title](url)`), where
 *   it was `[\n\n### Title\n\n](url)`;
 *   no tooltip titles (MediaWiki titles every link with its target's name);
 * - images: a `data:` URI (kilobytes of base64) is left out, the alt text kept;
 * - TeX from page-cleanup's math spans, unescaped; `<sup>`/`<sub>` kept as HTML (E=mc² read
 *   as "E=mc2"); task-list checkboxes from the `checked` attribute (linkedom has no `.checked`,
 *   so every item read unchecked);
 * - headings on one line; `<q>` in quotation marks;
 * - definition lists as Pandoc writes them (`Term` / `:   definition`);
 * - `_` between letters or digits is not escaped (`snake_case` stays copyable: it cannot start
 *   emphasis there).
 */
export function createConverter(): TurndownService {
  const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_' });
  turndown.use(strikethrough);
  for (const [name, rule] of Object.entries(tableRules)) turndown.addRule(name, rule as TurndownService.Rule);
  turndown.remove(['script', 'style', 'noscript', 'template'] as never);
  const escape = turndown.escape.bind(turndown);
  turndown.escape = (text: string) => escape(text).replace(/(?<=[\p{L}\p{N}])\\_(?=[\p{L}\p{N}])/gu, '_');

  turndown.addRule('codeBlock', {
    filter: 'pre',
    replacement: (_content, node) => {
      const pre = node as unknown as El;
      const code = codeText(pre).replace(/\n$/, '');
      if (code.trim() === '') return '';
      const cell = (pre as unknown as { closest(selector: string): { closest(selector: string): object | null } | null }).closest('td, th');
      const table = cell?.closest('table');
      if (table && !isLayoutTable(table)) return `\n${code.split('\n').map(inlineCode).join('\n')}\n`;
      const language = /(?:^|\s)language-([\w+#.-]+)/.exec(pre.getAttribute('class') ?? '')?.[1] ?? /(?:^|\s)language-([\w+#.-]+)/.exec(pre.querySelector('code')?.getAttribute('class') ?? '')?.[1] ?? '';
      // Longer than any run of backticks in the code. A loop: a spread of every run overflowed
      // the stack at 300,000 of them (a 1.2 MB page), and the whole page failed.
      let longest = 2;
      for (const run of code.matchAll(/`{3,}/g)) longest = Math.max(longest, run[0].length);
      const fence = '`'.repeat(longest + 1);
      return `\n\n${fence}${language}\n${code}\n${fence}\n\n`;
    },
  });

  turndown.addRule('link', {
    filter: (node) => node.nodeName === 'A' && node.hasAttribute('href'),
    replacement: (content, node) => {
      const link = node as unknown as El;
      const href = (link.getAttribute('href') ?? '').trim();
      if (href === '' || href.startsWith('#') || /^javascript:/i.test(href)) return content;
      const destination = href.replace(/([<>()])/g, '\\$1').replace(/ /g, '%20');
      let text = content.trim();
      if (text === '') return '';
      if (!content.includes('\n')) return `${content.startsWith(' ') ? ' ' : ''}[${text}](${destination})${content.endsWith(' ') ? ' ' : ''}`;
      // Blocks in the link (a card: image, heading, teaser): its first heading is linked, else
      // its first line; a heading keeps its marks.
      const lines = text.split('\n');
      const heading = lines.findIndex((line) => /^#{1,6} /.test(line));
      const first = heading >= 0 ? heading : lines.findIndex((line) => line.trim() !== '');
      const [, marks = '', words = ''] = /^(#{1,6} |[-*] |\d+\. )?(.*)$/.exec(lines[first]!.trim())!;
      lines[first] = `${marks}[${words}](${destination})`;
      text = lines.join('\n');
      return `\n\n${text}\n\n`;
    },
  });

  turndown.addRule('image', {
    filter: 'img',
    replacement: (_content, node) => {
      const img = node as unknown as El;
      const alt = turndown.escape((img.getAttribute('alt') ?? '').replace(/\s+/g, ' ').trim());
      const src = (img.getAttribute('src') ?? '').trim();
      if (!src || /^data:/i.test(src)) return alt ? `![${alt}]()` : '';
      return `![${alt}](${src.replace(/([<>()])/g, '\\$1').replace(/ /g, '%20')})`;
    },
  });

  turndown.addRule('math', {
    filter: (node) => node.nodeName === 'SPAN' && node.hasAttribute('data-math'),
    replacement: (_content, node) => {
      const tex = ((node as unknown as El).textContent ?? '').trim();
      return (node as unknown as El).getAttribute('data-math') === 'block' ? `\n\n$$${tex}$$\n\n` : `$${tex}$`;
    },
  });

  // Definition lists in Pandoc's syntax: the term on its line, each definition after `:   `,
  // indented below it (a nested list stays nested). A `<dl>` without terms (MediaWiki's indent)
  // is its definitions as blocks.
  turndown.addRule('definitionTerm', {
    filter: 'dt',
    replacement: (content) => `\n\n${content.trim()}\n`,
  });
  turndown.addRule('definition', {
    filter: 'dd',
    replacement: (content, node) => {
      const text = content.replace(/^\n+|\n+$/g, '').trim();
      if (!hasTerm(node.parentNode as unknown as El | null)) return `\n\n${text}\n\n`;
      return `\n:   ${text.replace(/\n(?=[^\n])/g, '\n    ')}\n`;
    },
  });

  // A heading is one line: a <br> or a block inside it (a subtitle) ended the heading there and
  // left the rest as a paragraph.
  turndown.addRule('heading', {
    filter: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'],
    replacement: (content, node) => {
      const text = content.replace(/\s*\n\s*/g, ' ').trim();
      return text ? `\n\n${'#'.repeat(Number(node.nodeName.charAt(1)))} ${text}\n\n` : '';
    },
  });

  // Browsers show <q> in quotation marks (single ones inside another <q>); turndown wrote none.
  turndown.addRule('quotation', {
    filter: 'q',
    replacement: (content, node) => ((node.parentNode as unknown as { closest?(selector: string): unknown } | null)?.closest?.('q') ? `‘${content}’` : `“${content}”`),
  });

  turndown.addRule('supSub', {
    filter: ['sup', 'sub'],
    replacement: (content, node) => (content.trim() === '' ? content : `<${node.nodeName.toLowerCase()}>${content}</${node.nodeName.toLowerCase()}>`),
  });

  turndown.addRule('taskListItem', {
    filter: (node) => node.nodeName === 'INPUT' && node.getAttribute('type') === 'checkbox' && !!node.parentNode && (node.parentNode.nodeName === 'LI' || node.parentNode.parentNode?.nodeName === 'LI'),
    replacement: (_content, node) => ((node as unknown as El).hasAttribute('checked') ? '[x] ' : '[ ] '),
  });

  return turndown;
}
