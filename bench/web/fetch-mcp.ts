/**
 * fetch_web_content through the MCP client, side by side with @kazuph/mcp-fetch 1.6.3 (JSDOM +
 * Readability) in one run: the saved SERP pages plus a 300 KB article, concurrency 4, both over
 * stdio. Prints p50 per page, pages/s, peak RSS of each server's process tree, the ratios, and
 * whether the article's output is clean (headings, GFM tables, no nav/aside/footer text).
 * Targets (issue 4): ≥ 5× the peer's pages/s, RSS ≤ the peer's. Run: npx tsx bench/web/fetch-mcp.ts
 * (after `npm run build`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { fmt, peakRss, percentile, ROOT, runConcurrent, servePages } from './util';

const ROUNDS = Number(process.env.ROUNDS ?? 8);
const CONCURRENCY = 4;

interface Server {
  name: string;
  command: string[];
  env: Record<string, string>;
  call(url: string, maxLength: number, start?: number): { name: string; arguments: Record<string, unknown> };
}

async function measure(server: Server, origin: string, pages: string[]) {
  const transport = new StdioClientTransport({ command: process.execPath, args: server.command, env: { ...(process.env as Record<string, string>), ...server.env }, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  // The SDK's 60 s default cut the peer's slowest pages on a loaded machine ("This operation was aborted").
  const text = async (url: string, maxLength: number, start = 0) => {
    const result = (await client.callTool(server.call(url, maxLength, start), undefined, { timeout: 300_000 })) as { content: Array<{ type: string; text?: string }>; isError?: boolean };
    if (result.isError) throw new Error(`${server.name}: ${result.content.map((c) => c.text).join(' ').slice(0, 300)}`);
    return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  };
  // Closed on a failure too: the server left running kept the benchmark from ending.
  try {
    for (const page of pages) await text(`${origin}/${page}`, 10_000); // warm-up: JIT, connections, threads
    const rss = peakRss(() => transport.pid ?? undefined);
    const tasks = Array.from({ length: ROUNDS }, () => pages.map((page) => () => text(`${origin}/${page}`, 10_000))).flat();
    const { latencies, wallMs } = await runConcurrent(tasks, CONCURRENCY);
    const peak = rss.stop();
    const article = await text(`${origin}/big-article.html`, 100_000);
    const tail = await text(`${origin}/big-article.html`, 100_000, 150_000).catch(() => '');
    const whole = `${article}\n${tail}`;
    const clean = {
      headings: /^## Section 2$/m.test(whole),
      gfmTables: /\| Metric \| Value 1 \|\n\| --- \| --- \|/.test(whole),
      noNavAsideFooter: !/NAVMARKER|ASIDEMARKER|FOOTERMARKER/.test(whole),
    };
    return { name: server.name, p50: percentile(latencies, 50), p90: percentile(latencies, 90), pagesPerSecond: (tasks.length / wallMs) * 1000, peakRssMb: peak / 1024 / 1024, clean };
  } finally {
    await client.close();
  }
}

async function main() {
  const site = await servePages();
  const dir = mkdtempSync(path.join(tmpdir(), 'web-bench-config-'));
  const config = path.join(dir, 'config.json');
  // The benchmark measures throughput, so the rate limit is opened wide.
  writeFileSync(config, JSON.stringify({ web: { fetch: { allowPrivateNetwork: true, rateLimit: 100_000, rateLimitIntervalMs: 1000, threads: 2 } }, logLevel: 'warn' }));
  const ours: Server = {
    name: 'mcpvisor web-search-mcp',
    command: [path.join(ROOT, 'dist', 'supervisor', 'cli', 'web-search-mcp.js'), '--config', config],
    env: {},
    call: (url, maxLength, start = 0) => ({ name: 'fetch_web_content', arguments: { url, max_length: maxLength, start_index: start } }),
  };
  const peer: Server = {
    name: '@kazuph/mcp-fetch 1.6.3',
    command: [path.join(ROOT, 'node_modules', '@kazuph', 'mcp-fetch', 'dist', 'index.js')],
    env: { MCP_FETCH_DISABLE_SSRF_GUARD: '1' },
    call: (url, maxLength, start = 0) => ({ name: 'imageFetch', arguments: { url, maxLength, startIndex: start } }),
  };
  try {
    console.log(`${site.pages.length} pages (${site.pages.join(', ')}), ${ROUNDS} rounds, concurrency ${CONCURRENCY}`);
    const theirs = await measure(peer, site.origin, site.pages);
    const mine = await measure(ours, site.origin, site.pages);
    for (const r of [theirs, mine]) {
      console.log(`${r.name.padEnd(26)} p50 ${fmt(r.p50)} ms  p90 ${fmt(r.p90)} ms  ${fmt(r.pagesPerSecond)} pages/s  peak RSS ${fmt(r.peakRssMb)} MB  clean ${JSON.stringify(r.clean)}`);
    }
    console.log(`ratio pages/s ours/peer: ${fmt(mine.pagesPerSecond / theirs.pagesPerSecond, 2)}x (target >= 5x)`);
    console.log(`ratio p50 peer/ours: ${fmt(theirs.p50 / mine.p50, 2)}x`);
    console.log(`ratio peak RSS ours/peer: ${fmt(mine.peakRssMb / theirs.peakRssMb, 2)} (target <= 1)`);
  } finally {
    site.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
