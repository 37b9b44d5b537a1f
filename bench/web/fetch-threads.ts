/**
 * The fetch pipeline (fetch + HTML to Markdown) in a piscina pool of 1 and of 2 threads, against
 * the same pipeline inline on the main thread, on the saved SERP pages plus a 300 KB article
 * served by a separate process. For each: pages/s and the main thread's event-loop lag (the
 * supervisor's, in production) while the load runs; the two pools' phases alternate, 3 rounds. Targets (issue 4): 2 threads ≥ 1.7× 1 thread,
 * lag ≤ 10 ms with the pool. Run: npx tsx bench/web/fetch-threads.ts (after `npm run build`).
 */
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Piscina } from 'piscina';
import { fmt, ROOT, runConcurrent, servePages } from './util';

const ROUNDS = Number(process.env.ROUNDS ?? 6);
const CONCURRENCY = 4;
const THREAD_MODULE = path.join(ROOT, 'dist', 'workers', 'web', 'fetch-thread.js');
const config = { allowPrivateNetwork: true, timeoutMs: 30_000, maxBodyBytes: 10 * 1024 * 1024, maxRedirects: 5, maxOutputChars: 10_000 };

async function phase(name: string, urls: string[], run: (url: string) => Promise<unknown>) {
  const lag = monitorEventLoopDelay({ resolution: 5 });
  lag.enable();
  const cpu = process.cpuUsage();
  const { wallMs } = await runConcurrent(urls.map((url) => () => run(url)), CONCURRENCY);
  const used = process.cpuUsage(cpu);
  lag.disable();
  const cpuMs = (used.user + used.system) / 1000;
  const result = { name, pagesPerSecond: (urls.length / wallMs) * 1000, lagP99Ms: lag.percentile(99) / 1e6, lagMaxMs: lag.max / 1e6 };
  // CPU per page and the share of the cores used tell contention (more CPU per page with two
  // threads) from idle cores (less than 200 %).
  console.log(
    `${name.padEnd(18)} ${fmt(result.pagesPerSecond)} pages/s  event-loop lag p99 ${fmt(result.lagP99Ms)} ms, max ${fmt(result.lagMaxMs)} ms  ` +
      `CPU ${fmt(cpuMs / urls.length)} ms/page, ${fmt((cpuMs / wallMs) * 100)} % of one core`,
  );
  return result;
}

async function main() {
  const site = await servePages();
  const urls = Array.from({ length: ROUNDS }, () => site.pages.map((page) => `${site.origin}/${page}`)).flat();
  // The compiled pipeline, as the threads run it.
  const { fetchWebContent } = require(path.join(ROOT, 'dist', 'workers', 'web', 'content.js')) as typeof import('../../workers/web/content');
  try {
    console.log(`${urls.length} fetches of ${site.pages.length} pages, concurrency ${CONCURRENCY}, ${require('node:os').cpus().length} CPUs`);
    for (const url of urls.slice(0, site.pages.length)) await fetchWebContent(url, config); // warm-up
    const inline = await phase('inline (main)', urls, (url) => fetchWebContent(url, { ...config, timeoutMs: 30_000 }));
    // Both pools at once, their phases alternated: this machine's speed drifts by 2x within a
    // minute, and back-to-back phases would compare two different machines.
    const pools = [1, 2].map((threads) => {
      const pool = new Piscina({ filename: THREAD_MODULE, minThreads: threads, maxThreads: threads, idleTimeout: Number.POSITIVE_INFINITY, workerData: { config } });
      const task = (url: string) => pool.run({ op: 'call', call: { tool: 'fetch_web_content', arguments: { url } }, deadlineMs: 60_000 });
      return { threads, pool, task, pages: 0, seconds: 0, lagP99Ms: 0 };
    });
    try {
      for (const { task } of pools) await Promise.all(site.pages.map((page) => task(`${site.origin}/${page}`))); // warm-up every thread
      const half = urls.slice(0, Math.ceil(urls.length / 2));
      for (let round = 0; round < 3; round++) {
        for (const entry of pools) {
          const result = await phase(`pool, ${entry.threads} thread${entry.threads > 1 ? 's' : ''}`, half, entry.task);
          entry.pages += half.length;
          entry.seconds += half.length / result.pagesPerSecond;
          entry.lagP99Ms = Math.max(entry.lagP99Ms, result.lagP99Ms);
        }
      }
    } finally {
      await Promise.all(pools.map(({ pool }) => pool.destroy()));
    }
    const [one, two] = pools.map((entry) => entry.pages / entry.seconds);
    console.log(`over 3 alternated rounds: 1 thread ${fmt(one)} pages/s, 2 threads ${fmt(two)} pages/s`);
    console.log(`ratio 2 threads / 1 thread: ${fmt(two / one, 2)}x (target >= 1.7x)`);
    console.log(`ratio 2 threads / inline: ${fmt(two / inline.pagesPerSecond, 2)}x`);
    console.log(`main-thread lag p99 with the pool (worst round): ${fmt(pools[1].lagP99Ms)} ms (target <= 10 ms) vs inline ${fmt(inline.lagP99Ms)} ms`);
  } finally {
    site.stop();
  }
}

void main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
