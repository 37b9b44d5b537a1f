/**
 * The fetch pipeline (fetch + HTML to Markdown) in a piscina pool of 1 and of 2 threads, against
 * the same pipeline inline on the main thread, on the saved SERP pages plus a 300 KB article
 * served by a separate process. For each: pages/s and the main thread's event-loop lag (the
 * supervisor's, in production) while the load runs. Each phase runs for a fixed time, so its end
 * has no drain tail where a thread idles; the two pools' phases alternate over rounds. Targets
 * (issue 4): 2 threads ≥ 1.7× 1 thread, lag ≤ 10 ms with the pool. Run: npx tsx bench/web/fetch-threads.ts (after `npm run build`).
 */
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Piscina } from 'piscina';
import { fmt, ROOT, runFor, servePages } from './util';

const ROUNDS = Number(process.env.ROUNDS ?? 4);
/** Length of each timed phase. */
const SECONDS = Number(process.env.SECONDS ?? 3);
const CONCURRENCY = 4;
const THREAD_MODULE = path.join(ROOT, 'dist', 'workers', 'web', 'fetch-thread.js');
const config = { allowPrivateNetwork: true, timeoutMs: 30_000, maxBodyBytes: 10 * 1024 * 1024, maxRedirects: 5, maxOutputChars: 10_000 };

/**
 * monitorEventLoopDelay records the whole interval between its timer's runs, the timer's own
 * period included (an idle process here: min 4.2 ms, p50 5.2 ms at 5 ms); lag is what exceeds it.
 */
const LAG_RESOLUTION_MS = 5;

/** One timed phase: callers loop over the pages in turn. */
async function phase(name: string, urls: string[], run: (url: string) => Promise<unknown>) {
  const lag = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
  lag.enable();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const { completed, finished, wallMs } = await runFor(SECONDS, CONCURRENCY, (i) => run(urls[i % urls.length]));
  const used = process.cpuUsage(cpu);
  const spentMs = performance.now() - started;
  lag.disable();
  const cpuMs = (used.user + used.system) / 1000;
  const result = { name, pagesPerSecond: (completed / wallMs) * 1000, lagP99Ms: Math.max(0, lag.percentile(99) / 1e6 - LAG_RESOLUTION_MS), lagMaxMs: Math.max(0, lag.max / 1e6 - LAG_RESOLUTION_MS) };
  // CPU per page and the share of the cores used tell contention (more CPU per page with two
  // threads) from idle cores (less than 200 %).
  console.log(
    `${name.padEnd(18)} ${fmt(result.pagesPerSecond)} pages/s  event-loop lag p99 ${fmt(result.lagP99Ms)} ms, max ${fmt(result.lagMaxMs)} ms  ` +
      `CPU ${fmt(cpuMs / finished)} ms/page, ${fmt((cpuMs / spentMs) * 100)} % of one core`,
  );
  return result;
}

async function main() {
  const site = await servePages();
  const urls = site.pages.map((page) => `${site.origin}/${page}`);
  // The compiled pipeline, as the threads run it.
  const { fetchWebContent } = require(path.join(ROOT, 'dist', 'workers', 'web', 'content.js')) as typeof import('../../workers/web/content');
  try {
    console.log(`${site.pages.length} pages in turn, concurrency ${CONCURRENCY}, phases of ${SECONDS} s, ${ROUNDS} rounds, ${require('node:os').cpus().length} CPUs`);
    for (const url of urls) await fetchWebContent(url, config); // warm-up
    const inline = await phase('inline (main)', urls, (url) => fetchWebContent(url, { ...config, timeoutMs: 30_000 }));
    // Both pools at once, their phases alternated: this machine's speed drifts by 2x within a
    // minute, and back-to-back phases would compare two different machines.
    const pools = [1, 2].map((threads) => {
      const pool = new Piscina({ filename: THREAD_MODULE, minThreads: threads, maxThreads: threads, idleTimeout: Number.POSITIVE_INFINITY, workerData: { config } });
      const task = (url: string) => pool.run({ op: 'call', call: { tool: 'fetch_web_content', arguments: { url } }, deadlineMs: 60_000 });
      return { threads, pool, task, pagesPerSecond: 0, lagP99Ms: 0 };
    });
    try {
      for (const { task } of pools) await Promise.all(site.pages.map((page) => task(`${site.origin}/${page}`))); // warm-up every thread
      for (let round = 0; round < ROUNDS; round++) {
        for (const entry of pools) {
          const result = await phase(`pool, ${entry.threads} thread${entry.threads > 1 ? 's' : ''}`, urls, entry.task);
          entry.pagesPerSecond += result.pagesPerSecond / ROUNDS;
          entry.lagP99Ms = Math.max(entry.lagP99Ms, result.lagP99Ms);
        }
      }
    } finally {
      await Promise.all(pools.map(({ pool }) => pool.destroy()));
    }
    const [one, two] = pools.map((entry) => entry.pagesPerSecond);
    console.log(`over ${ROUNDS} alternated rounds: 1 thread ${fmt(one)} pages/s, 2 threads ${fmt(two)} pages/s`);
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
