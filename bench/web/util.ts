import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { descendants } from '../../test/helpers/processes';

export const ROOT = path.resolve(__dirname, '..', '..');
export const SERP = path.resolve(ROOT, '..', 'shared', 'fixtures', 'serp');

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** Resident memory in bytes of a process and all its descendants, from /proc. */
export function treeRss(pid: number): number {
  let total = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      total += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    } catch {
      // gone
    }
  }
  return total;
}

/** Samples `treeRss(pid)` every 50 ms; `stop()` returns the peak. */
export function peakRss(pid: () => number | undefined): { stop(): number } {
  let peak = 0;
  const timer = setInterval(() => {
    const p = pid();
    if (p) peak = Math.max(peak, treeRss(p));
  }, 50);
  return { stop: () => (clearInterval(timer), peak) };
}

/**
 * A 300 KB article page: headings, GFM tables, and navigation, aside and footer blocks whose
 * marker words must not reach clean output.
 */
export function bigArticle(): string {
  const sections: string[] = [];
  for (let s = 1; sections.join('').length < 290_000; s++) {
    const paragraphs = Array.from({ length: 8 }, (_, p) => `<p>Section ${s}, paragraph ${p}: measured throughput depends on parsing, extraction and serialisation; each stage has its own cost, and <a href="/ref/${s}/${p}">reference ${p}</a> explains the details at length for readers who want them.</p>`).join('\n');
    const table = `<table><thead><tr><th>Metric</th><th>Value ${s}</th></tr></thead><tbody><tr><td>p50</td><td>${s} ms</td></tr><tr><td>p99</td><td>${s * 3} ms</td></tr></tbody></table>`;
    sections.push(`<h2>Section ${s}</h2>\n${paragraphs}\n${table}`);
  }
  return `<!doctype html><html><head><meta charset="utf-8"><title>Big article</title><meta name="author" content="Bench"></head><body>
<header><nav>NAVMARKER <a href="/">Home</a> <a href="/blog">Blog</a></nav></header>
<aside>ASIDEMARKER related posts</aside>
<main><article><h1>Big article</h1>
${sections.join('\n')}
</article></main>
<footer>FOOTERMARKER copyright</footer></body></html>`;
}

/** Writes the bench pages (saved SERPs + the big article) to a folder and serves it from a child process. */
export async function servePages(): Promise<{ origin: string; pages: string[]; child: ChildProcess; stop(): void }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'web-bench-'));
  const pages: string[] = [];
  for (const file of readdirSync(SERP).filter((name) => name.endsWith('.html'))) {
    writeFileSync(path.join(dir, file), readFileSync(path.join(SERP, file)));
    pages.push(file);
  }
  writeFileSync(path.join(dir, 'big-article.html'), bigArticle());
  pages.push('big-article.html');
  const script = `
    const http = require('http'), fs = require('fs'), path = require('path');
    const dir = process.argv[1];
    const cache = new Map(fs.readdirSync(dir).map((f) => [f, fs.readFileSync(path.join(dir, f))]));
    const server = http.createServer((req, res) => {
      let name = decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1));
      // A local DuckDuckGo: /ddg/html/?q=… answers with the saved result page.
      if (name.startsWith('ddg/')) name = 'duckduckgo-1.html';
      const body = cache.get(name);
      if (!body) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    }).listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));`;
  const child = spawn(process.execPath, ['-e', script, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))));
  return {
    origin: `http://127.0.0.1:${port}`,
    pages,
    child,
    stop: () => {
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `tasks` with at most `concurrency` at once; returns each task's latency in ms and the wall time. */
export async function runConcurrent(tasks: Array<() => Promise<unknown>>, concurrency: number): Promise<{ latencies: number[]; wallMs: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < tasks.length) {
      const task = tasks[next++];
      const t = performance.now();
      await task();
      latencies.push(performance.now() - t);
    }
  }));
  return { latencies, wallMs: performance.now() - started };
}

/**
 * A closed loop of `concurrency` callers, each starting `next(i)` as soon as its last call ends,
 * for `seconds`: only calls that end inside the window count. Unlike a fixed list, the end of the
 * window has no drain tail where some callers idle (a long last page would leave a thread idle).
 * Calls still running at the end are awaited, so they do not overlap the next phase.
 */
export async function runFor(seconds: number, concurrency: number, next: (i: number) => Promise<unknown>): Promise<{ completed: number; finished: number; wallMs: number }> {
  let completed = 0;
  let finished = 0;
  let issued = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        await next(issued++);
        finished++;
        if (performance.now() <= until) completed++;
      }
    }),
  );
  return { completed, finished, wallMs: seconds * 1000 };
}

export const fmt = (n: number, digits = 1) => n.toFixed(digits);
