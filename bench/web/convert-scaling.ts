/**
 * HTML to Markdown on pages of one shape at two sizes, n and 8n: the larger page's time over 8
 * times the smaller's. 1 means linear; a conversion that grows with the square of a table's rows
 * or a list's items shows ~8. Shapes: a long table, a wide table, a page of links, paragraphs, a
 * long list. Each time is the best of `rounds`, converted in this process by htmlToMarkdown
 * (what a fetch thread runs). Target: <= 2 for every shape. Found this way: linkedom builds
 * `childNodes` anew on each read and the GFM plugin reads it in loops, so an 8,000-row table took
 * 34 s (8.6x its 1,000-row time per row).
 *   npx tsx bench/web/convert-scaling.ts [rounds, default 3]
 */
import { htmlToMarkdown } from '../../workers/web/html-to-markdown';

const page = (body: string) => `<!doctype html><html><head><title>t</title></head><body>${body}</body></html>`;

const SHAPES: Record<string, { n: number; html: (n: number) => string }> = {
  'long table (rows of 8 cells)': { n: 500, html: (n) => page(`<table><tr>${'<th>h</th>'.repeat(8)}</tr>${`<tr>${'<td>cell</td>'.repeat(8)}</tr>`.repeat(n)}</table>`) },
  'wide table (rows of 100 cells)': { n: 40, html: (n) => page(`<table>${`<tr>${'<td>c</td>'.repeat(100)}</tr>`.repeat(n)}</table>`) },
  'links in one paragraph': { n: 5_000, html: (n) => page(`<p>${'<a href="/x">link</a> '.repeat(n)}</p>`) },
  paragraphs: { n: 2_000, html: (n) => page('<p>Some words of a paragraph, <b>bold</b> and <i>not</i>.</p>\n'.repeat(n)) },
  'list items': { n: 2_000, html: (n) => page(`<ul>${'<li>an item <code>x</code></li>\n'.repeat(n)}</ul>`) },
};

function best(html: string, rounds: number): number {
  let fastest = Infinity;
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    htmlToMarkdown(html, 'http://127.0.0.1/');
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}

function main(): void {
  const rounds = Number(process.argv[2] ?? 3);
  best(SHAPES.paragraphs.html(100), 3); // warm-up: module loading and the first compilations
  let worst = 0;
  for (const [name, shape] of Object.entries(SHAPES)) {
    const small = best(shape.html(shape.n), rounds);
    const large = best(shape.html(8 * shape.n), rounds);
    const ratio = large / (8 * small);
    worst = Math.max(worst, ratio);
    console.log(`${name}: n=${shape.n} ${small.toFixed(1)} ms, 8n ${large.toFixed(1)} ms; 8n / (8 x n) = ${ratio.toFixed(2)}`);
  }
  console.log(`worst shape: ${worst.toFixed(2)} (target <= 2)`);
}

main();
