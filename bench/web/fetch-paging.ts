/**
 * Reading a long page window by window through `fetch_web_content`: web-search-mcp over stdio with
 * the real SDK client, against a 2 MB article served on 127.0.0.1 that counts its requests. The
 * same build runs with the page cache on (the default) and off (`web.fetch.cache.ttlMs: 0`, every
 * window fetched and converted again, as before the cache), phases alternated, in one run.
 *
 *   A. the whole page in ~20 windows, rate limit opened wide: wall time and requests per read;
 *   B. the first 6 windows with the default rate limit (1 fetch a second);
 *   C. many distinct 250 KB pages (first windows only), the cache's byte bound lowered to 16 MB:
 *      the server's RSS after N and 3N pages, on against off (the bound must hold: no growth).
 *
 * Prints ratios off/on. Run: npx tsx bench/web/fetch-paging.ts (after `npm run build`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { fmt, ROOT, treeRss } from './util';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
/** PHASES=C runs phase C alone. */
const PHASES = process.env.PHASES ?? 'ABC';
const WINDOWS = 20;
const DISTINCT = Number(process.env.DISTINCT ?? 25);

/** `bytes` of article: sections of paragraphs and tables, as a long documentation page. */
function longArticle(bytes: number, label = ''): string {
  const sections: string[] = [];
  for (let s = 1, size = 0; size < bytes; s++) {
    const paragraphs = Array.from({ length: 8 }, (_, p) => `<p>Section ${s}, paragraph ${p}: measured throughput depends on parsing, extraction and serialisation; each stage has its own cost, and <a href="/ref/${s}/${p}">reference ${p}</a> explains the details at length for readers who want them.</p>`).join('\n');
    const section = `<h2>Section ${s}</h2>\n${paragraphs}\n<table><thead><tr><th>Metric</th><th>Value ${s}</th></tr></thead><tbody><tr><td>p50</td><td>${s} ms</td></tr></tbody></table>`;
    sections.push(section);
    size += section.length;
  }
  return `<!doctype html><html><head><meta charset="utf-8"><title>Long article</title></head><body><main><article><h1>Long article ${label}</h1>\n${sections.join('\n')}\n</article></main></body></html>`;
}

async function serve() {
  const page = Buffer.from(longArticle(2_000_000));
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    const distinct = /^\/distinct\/(\d+)/.exec(req.url ?? '');
    // Distinct pages: 250 KB articles of their own.
    const body = distinct ? longArticle(250_000, distinct[1]) : page;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bytes: page.length, requests: () => requests, close: () => server.close() };
}

type Result = { structuredContent?: { totalLength: number; nextStartIndex?: number }; isError?: boolean; content: Array<{ text?: string }> };

async function connect(config: string) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [path.join(ROOT, 'dist', 'supervisor', 'cli', 'web-search-mcp.js'), '--config', config], stderr: process.env.BENCH_STDERR ? 'inherit' : 'ignore' });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  const call = async (url: string, start: number, maxLength: number) => {
    const result = (await client.callTool({ name: 'fetch_web_content', arguments: { url, start_index: start, max_length: maxLength } }, undefined, { timeout: 600_000 })) as Result;
    if (result.isError) throw new Error(result.content.map((c) => c.text).join(' ').slice(0, 300));
    return result.structuredContent!;
  };
  return { call, pid: () => transport.pid ?? 0, close: () => client.close() };
}

/** Reads the page to its end (or `maxWindows` windows); the time and the site's requests it took, and the windows read. */
async function readWhole(server: Awaited<ReturnType<typeof connect>>, site: Awaited<ReturnType<typeof serve>>, url: string, maxLength: number, maxWindows = Number.POSITIVE_INFINITY) {
  const before = site.requests();
  const started = performance.now();
  let start = 0;
  let windows = 0;
  for (;;) {
    const part = await server.call(url, start, maxLength);
    windows++;
    if (part.nextStartIndex === undefined || windows >= maxWindows) break;
    start = part.nextStartIndex;
  }
  return { ms: performance.now() - started, requests: site.requests() - before, windows };
}

function config(dir: string, name: string, fetch: Record<string, unknown>): string {
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ web: { fetch: { allowPrivateNetwork: true, timeoutMs: 60_000, ...fetch } }, logLevel: 'warn' }));
  return file;
}

async function main() {
  const site = await serve();
  const dir = mkdtempSync(path.join(tmpdir(), 'fetch-paging-'));
  const open = { rateLimit: 100_000, rateLimitIntervalMs: 1000 };
  const modes = {
    on: config(dir, 'on', open),
    off: config(dir, 'off', { ...open, cache: { ttlMs: 0 } }),
    onLimited: config(dir, 'on-limited', {}),
    offLimited: config(dir, 'off-limited', { cache: { ttlMs: 0 } }),
    onSmall: config(dir, 'on-small', { ...open, cache: { maxBytes: 16 * 1024 * 1024 } }),
  };
  try {
    // The Markdown's length, to cut it into WINDOWS windows.
    const probe = await connect(modes.on);
    const total = (await probe.call(`${site.origin}/article`, 0, 10)).totalLength;
    await probe.close();
    const maxLength = Math.min(100_000, Math.ceil(total / WINDOWS));
    console.log(`page: ${fmt(site.bytes / 1e6, 2)} MB of HTML, ${total} characters of Markdown, windows of ${maxLength}; ${ROUNDS} rounds alternated`);

    if (PHASES.includes('A')) await phaseA(maxLength);
    if (PHASES.includes('B')) await phaseB(maxLength);
    if (PHASES.includes('C')) await phaseC();
  } finally {
    site.close();
    rmSync(dir, { recursive: true, force: true });
  }

  async function phaseA(maxLength: number) {
    // A. rate limit open.
    const a: Record<'on' | 'off', Array<{ ms: number; requests: number; windows: number }>> = { on: [], off: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of (round % 2 === 0 ? ['off', 'on'] : ['on', 'off']) as Array<'on' | 'off'>) {
        const server = await connect(modes[mode]);
        await server.call(`${site.origin}/warm`, 0, 10); // threads and JIT warm, not timed
        a[mode].push(await readWhole(server, site, `${site.origin}/article?round=${round}`, maxLength));
        await server.close();
      }
    }
    const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
    const ms = { on: median(a.on.map((r) => r.ms)), off: median(a.off.map((r) => r.ms)) };
    const requests = { on: median(a.on.map((r) => r.requests)), off: median(a.off.map((r) => r.requests)) };
    console.log(`A. ${a.on[0].windows} windows, rate limit open: cache off ${fmt(ms.off)} ms, ${requests.off} requests; cache on ${fmt(ms.on)} ms, ${requests.on} requests`);
    console.log(`   ratio time off/on: ${fmt(ms.off / ms.on, 2)}x; requests off/on: ${fmt(requests.off / requests.on, 2)}x (runs off: ${a.off.map((r) => fmt(r.ms)).join(', ')} ms; on: ${a.on.map((r) => fmt(r.ms)).join(', ')} ms)`);
  }

  async function phaseB(maxLength: number) {
    // B. the default rate limit, 1 fetch a second: the first 6 windows.
    const b: Record<string, { ms: number; requests: number; windows: number }> = {};
    for (const mode of ['offLimited', 'onLimited'] as const) {
      const server = await connect(modes[mode]);
      b[mode] = await readWhole(server, site, `${site.origin}/article?limited=${mode}`, maxLength, 6);
      await server.close();
    }
    console.log(`B. ${b.onLimited.windows} windows, default rate limit (1/s): cache off ${fmt(b.offLimited.ms)} ms, ${b.offLimited.requests} requests; on ${fmt(b.onLimited.ms)} ms, ${b.onLimited.requests} requests; ratio time off/on ${fmt(b.offLimited.ms / b.onLimited.ms, 2)}x`);
  }

  async function phaseC() {
    // C. many distinct pages, bound 16 MB: the server's RSS after N and after 3N pages (first
    // windows only), cache on and off. Bounded, on - off does not grow from N to 3N. RSS counts
    // garbage not yet collected: sampled for 10 s after the last call (V8's memory reducer runs
    // once allocation stops), the least counts.
    const rss: Record<string, number> = {};
    const kept = { chars: 0 };
    for (const count of [DISTINCT, 3 * DISTINCT]) {
      for (const mode of ['off', 'onSmall'] as const) {
        const server = await connect(modes[mode]);
        for (let i = 0; i < count; i++) kept.chars = (await server.call(`${site.origin}/distinct/${count}-${i}`, 0, 1000)).totalLength;
        let least = Number.POSITIVE_INFINITY;
        for (let sample = 0; sample < 10; sample++) {
          await new Promise((resolve) => setTimeout(resolve, 1000));
          least = Math.min(least, treeRss(server.pid()));
        }
        rss[`${mode}${count}`] = least;
        await server.close();
      }
    }
    const mb = (bytes: number) => fmt(bytes / 1024 / 1024);
    const perPage = 2 * kept.chars;
    const grownOn = rss[`onSmall${3 * DISTINCT}`] - rss[`onSmall${DISTINCT}`];
    const grownOff = rss[`off${3 * DISTINCT}`] - rss[`off${DISTINCT}`];
    console.log(`C. distinct pages of ${kept.chars} characters (${mb(perPage)} MB each as kept), bound 16 MB: ${DISTINCT} pages (${mb(DISTINCT * perPage)} MB) then ${3 * DISTINCT} (${mb(3 * DISTINCT * perPage)} MB)`);
    console.log(`   RSS off ${mb(rss[`off${DISTINCT}`])} -> ${mb(rss[`off${3 * DISTINCT}`])} MB, on ${mb(rss[`onSmall${DISTINCT}`])} -> ${mb(rss[`onSmall${3 * DISTINCT}`])} MB; on - off at ${DISTINCT}: ${mb(rss[`onSmall${DISTINCT}`] - rss[`off${DISTINCT}`])} MB, at ${3 * DISTINCT}: ${mb(rss[`onSmall${3 * DISTINCT}`] - rss[`off${3 * DISTINCT}`])} MB; growth N -> 3N on ${mb(grownOn)} MB, off ${mb(grownOff)} MB`);
  }
}

void main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
