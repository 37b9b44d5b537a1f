/**
 * Tables as GFM pipe tables, replacing the GFM plugin's table rules, which wrote:
 * - tables holding a list, heading, rule, quote or code block as raw HTML
 *   (`<div class="joplin-table-wrapper"><table>…`), attributes and all;
 * - a broken delimiter row under a header with `colspan`, and one under each `<thead>` row;
 * - cells after a `rowspan` shifted one column left in every row it spans;
 * - `a || b` as `a \| b`.
 * Here each cell's Markdown is kept as turndown writes it (cell rule), and the table rule lays
 * the cells out on a grid from the DOM: a spanned cell's text in its first slot, the slots it
 * covers empty, so every row has the table's column count. The first row is the header when it
 * is in `<thead>` or all `<th>`; otherwise the header row is empty (GFM needs one).
 *
 * A table holding another table or a heading is layout, not data (a page laid out in a table):
 * its cells are written one after another as blocks. So is a table of one cell (a code listing
 * whose line-number gutter page-cleanup removed).
 */

interface Cell {
  nodeName: string;
  getAttribute(name: string): string | null;
}

interface Table {
  rows: ArrayLike<{ children: ArrayLike<Cell> }>;
  querySelector(selector: string): unknown;
}

/** The Markdown of each cell in the current conversion (cells are converted before their table). */
let cellMarkdown = new WeakMap<object, string>();

/** HTML caps `colspan` at 1,000 and `rowspan` at 65,534; within a table, our grid is capped too. */
const MAX_COLSPAN = 1_000;
/** Past this many grid slots per cell of the table, spans are ignored: the output stays linear. */
const MAX_SLOTS_PER_CELL = 4;

export const tableRules = {
  tableCell: {
    filter: ['th', 'td'],
    replacement: (content: string, node: object) => {
      cellMarkdown.set(node, content);
      return ` ${content} `;
    },
  },
  tableSection: { filter: ['thead', 'tbody', 'tfoot', 'tr'], replacement: (content: string) => `\n${content}\n` },
  tableCaption: { filter: ['caption'], replacement: (content: string) => `\n\n${content}\n\n` },
  tableColumns: { filter: ['colgroup', 'col'], replacement: () => '' },
  table: {
    filter: 'table',
    replacement: (_content: string, node: object) => {
      const table = node as Table;
      const rows = cellsOf(table);
      const cells = rows.reduce((sum, row) => sum + row.length, 0);
      const caption = captionOf(node);
      if (isLayoutTable(table)) {
        const blocks = rows.flat().map((cell) => (cellMarkdown.get(cell) ?? '').trim()).filter((text) => text !== '');
        return `\n\n${[caption, ...blocks].filter(Boolean).join('\n\n')}\n\n`;
      }
      const maxSlots = cells * MAX_SLOTS_PER_CELL + 64;
      const grid = layout(rows, maxSlots) ?? layout(rows, Infinity, true)!;
      const width = grid.reduce((max, row) => Math.max(max, row.length), 0);
      // Rows are padded to the table's width unless that would pass the bound (one row of 1,000
      // cells over 10,000 rows of one): GFM renderers pad short rows themselves.
      const pad = grid.length * width <= maxSlots;
      const header = rows[0]!.length > 0 && (isHeadSection(rows[0]![0]!) || rows[0]!.every((cell) => cell.nodeName === 'TH'));
      const line = (row: string[]) => `| ${Array.from({ length: pad ? width : Math.max(1, row.length) }, (_, i) => row[i] ?? '').join(' | ')} |`;
      const alignments = Array.from({ length: width }, (_, i) => alignment(header ? grid.cells[0]?.[i] : undefined));
      const out = [header ? line(grid[0]!) : line([]), `| ${alignments.join(' | ')} |`, ...(header ? grid.slice(1) : grid).map(line)];
      return `\n\n${caption ? `${caption}\n\n` : ''}${out.join('\n')}\n\n`;
    },
  },
};

/** Starts a conversion: cells of an earlier one are not read again. */
export function resetTables(): void {
  cellMarkdown = new WeakMap();
  layoutSeen = new WeakMap();
}

/** Per table of the current conversion, whether it is layout (asked by its code blocks too). */
let layoutSeen = new WeakMap<object, boolean>();

function cellsOf(table: Table): Cell[][] {
  return Array.from(table.rows).map((row) => Array.from(row.children).filter((cell) => cell.nodeName === 'TD' || cell.nodeName === 'TH'));
}

/**
 * Whether a table is layout: it holds another table or a heading, or has at most one cell (a code
 * listing whose line-number gutter was removed). A code block in a data table's cell is written
 * inline there (markdown-rules.ts), one code span per line.
 */
export function isLayoutTable(table: object): boolean {
  let layout = layoutSeen.get(table);
  if (layout === undefined) {
    const cells = cellsOf(table as Table).reduce((sum, row) => sum + row.length, 0);
    layout = cells <= 1 || !!(table as Table).querySelector('table, h1, h2, h3, h4, h5, h6');
    layoutSeen.set(table, layout);
  }
  return layout;
}

type Grid = string[][] & { cells: Array<Array<Cell | undefined>> };

/**
 * Cells placed on rows × columns, skipping slots taken by rowspans above. `undefined` when the
 * grid would pass `maxSlots`; with `flat`, spans are ignored.
 */
function layout(rows: Cell[][], maxSlots: number, flat = false): Grid | undefined {
  const grid = [] as unknown as Grid;
  grid.cells = [];
  /** Per column, how many more rows a rowspan above still covers. */
  const covered: number[] = [];
  let slots = 0;
  for (let r = 0; r < rows.length; r++) {
    const line: string[] = [];
    const owners: Array<Cell | undefined> = [];
    let column = 0;
    for (const cell of rows[r]!) {
      while ((covered[column] ?? 0) > 0) {
        line[column] = '';
        column++;
      }
      const colspan = flat ? 1 : span(cell.getAttribute('colspan'), MAX_COLSPAN);
      const rowspan = flat ? 1 : span(cell.getAttribute('rowspan'), rows.length - r);
      line[column] = cellText(cell);
      owners[column] = cell;
      for (let i = 0; i < colspan; i++) {
        if (i > 0) line[column + i] = '';
        if (rowspan > 1) covered[column + i] = Math.max(covered[column + i] ?? 0, rowspan);
      }
      column += colspan;
      slots += colspan * rowspan;
      if (slots > maxSlots) return undefined;
    }
    for (let c = 0; c < covered.length; c++) {
      if ((covered[c] ?? 0) > 0) {
        if (line[c] === undefined) line[c] = '';
        covered[c]!--;
      }
    }
    // Spent spans leave the end, so later rows do not walk a wide span's columns again.
    while (covered.length > 0 && !covered[covered.length - 1]) covered.pop();
    grid.push(Array.from(line, (text) => text ?? ''));
    grid.cells.push(owners);
  }
  return grid;
}

/** `colspan`/`rowspan` as a browser reads it: a positive integer, 1 when missing or invalid. */
function span(value: string | null, max: number): number {
  const n = Number.parseInt(value ?? '', 10);
  return Number.isFinite(n) && n > 1 ? Math.min(n, Math.max(1, max)) : 1;
}

/** A cell's Markdown on one line: line breaks as `<br>`, pipes escaped. */
function cellText(cell: Cell): string {
  return (cellMarkdown.get(cell) ?? '')
    .trim()
    .replace(/[ \t]*(?:\r?\n[ \t]*)+/g, (breaks: string) => (breaks.indexOf('\n') === breaks.lastIndexOf('\n') ? '<br>' : '<br><br>'))
    .replace(/\|/g, '\\|');
}

function isHeadSection(cell: Cell): boolean {
  return (cell as unknown as { parentNode?: { parentNode?: { nodeName?: string } } }).parentNode?.parentNode?.nodeName === 'THEAD';
}

function alignment(cell: Cell | undefined): string {
  const align = (cell?.getAttribute('align') ?? /text-align\s*:\s*(left|right|center)/i.exec(cell?.getAttribute('style') ?? '')?.[1] ?? '').toLowerCase();
  return align === 'left' ? ':---' : align === 'right' ? '---:' : align === 'center' ? ':---:' : '---';
}

function captionOf(table: object): string {
  const caption = (table as { querySelector(selector: string): { textContent: string | null; parentNode: unknown } | null }).querySelector('caption');
  return caption && caption.parentNode === table ? (caption.textContent ?? '').replace(/\s+/g, ' ').trim() : '';
}
