/**
 * Parsing a search engine's result page (what a search runs on the page the browser loaded) at
 * two sizes, n and 8n: the larger page's time over 8 times the smaller's. 1 means linear; ~8, a
 * cost that grows with the square of the page. Shapes: each stored result page (SERP fixtures)
 * with its body repeated 8 times, result lists of n items, and results nested n deep. Each time
 * is the best of `rounds`, in this process. Target: <= 2 for every shape. Found this way: every
 * item of the list was read before the first 10 were kept, and each nested result searched all
 * the results inside it, so 4,000 DuckDuckGo results nested in each other took 4.8 s.
 *   npx tsx bench/web/serp-scaling.ts [rounds, default 3]
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { getEngine } from '../../workers/web/engines';
import { SERP } from './util';

const context = { status: 200, url: 'https://search.example/search?q=x', maxResults: 10 };

/** A stored page with the inside of its `<body>` repeated `times` times. */
function repeated(file: string, times: number): string {
  const html = readFileSync(path.join(SERP, file), 'utf8');
  const body = /<body[^>]*>([\s\S]*)<\/body>/i.exec(html);
  return body ? html.replace(body[1], () => body[1].repeat(times)) : html.repeat(times);
}

const SHAPES: Record<string, { engine: string; n: number; html: (n: number) => string }> = {
  'bing-1.html, body repeated': { engine: 'bing', n: 1, html: (n) => repeated('bing-1.html', n) },
  'duckduckgo-1.html, body repeated': { engine: 'duckduckgo', n: 1, html: (n) => repeated('duckduckgo-1.html', n) },
  'google-1.html, body repeated': { engine: 'google', n: 1, html: (n) => repeated('google-1.html', n) },
  'brave-1.html, body repeated': { engine: 'brave', n: 1, html: (n) => repeated('brave-1.html', n) },
  'Bing results': {
    engine: 'bing',
    n: 2_000,
    html: (n) => `<html><body><ol id="b_results">${Array.from({ length: n }, (_, i) => `<li class="b_algo"><h2><a href="https://site.example/${i}">Result ${i}</a></h2><div class="b_caption"><p>A snippet of result ${i}.</p></div></li>`).join('')}</ol></body></html>`,
  },
  'DuckDuckGo results nested in each other': {
    engine: 'duckduckgo',
    n: 500,
    html: (n) => `<html><body><div id="links">${Array.from({ length: n }, (_, i) => `<div class="result"><a class="result__a" href="https://site.example/${i % 5}">Result ${i}</a>`).join('')}${'</div>'.repeat(n)}</div></body></html>`,
  },
  'Google results nested in each other': {
    engine: 'google',
    n: 500,
    html: (n) => `<html><body><div id="rso">${'<div class="g"><a href="https://site.example/">'.repeat(n)}<h3>A title</h3>${'</a></div>'.repeat(n)}</div></body></html>`,
  },
};

function best(engine: string, html: string, rounds: number): number {
  let fastest = Infinity;
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    getEngine(engine).parse(html, context);
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}

function main(): void {
  const rounds = Number(process.argv[2] ?? 3);
  best('bing', repeated('bing-1.html', 1), 3); // warm-up: module loading and the first compilations
  let worst = 0;
  for (const [name, shape] of Object.entries(SHAPES)) {
    const small = best(shape.engine, shape.html(shape.n), rounds);
    const large = best(shape.engine, shape.html(8 * shape.n), rounds);
    const ratio = large / (8 * small);
    worst = Math.max(worst, ratio);
    console.log(`${name}: n=${shape.n} ${small.toFixed(1)} ms, 8n ${large.toFixed(1)} ms; 8n / (8 x n) = ${ratio.toFixed(2)}`);
  }
  console.log(`worst shape: ${worst.toFixed(2)} (target <= 2)`);
}

main();
