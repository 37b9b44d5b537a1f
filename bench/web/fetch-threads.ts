/**
 * The fetch pipeline (fetch + HTML to Markdown) in mcpvisor's thread pool (piscina, web.fetch's
 * calls per thread) of 1 and of 2 threads, against
 * the same pipeline inline on the main thread, on the saved SERP pages plus a 300 KB article
 * served by a separate process. For each: pages/s and the main thread's event-loop lag (the
 * supervisor's, in production) while the load runs. Each phase runs for a fixed time, so its end
 * has no drain tail where a thread idles; the two pools' phases alternate over rounds. Targets
 * (issue 4): 2 threads ≥ 1.7× 1 thread, lag ≤ 10 ms with the pool. Also the ceiling of this
 * machine for the ratio: the same conversion in bare threads, 2 vs 1, in the same rounds. Run: npx tsx bench/web/fetch-threads.ts (after `npm run build`).
 */
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { createLogger } from '../../supervisor/logger';
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

/**
 * The machine's own ceiling for this work: bare worker threads (no piscina, no fetch, no
 * messages) that convert the pages in a loop for a phase. V8's GC helper threads give one busy
 * thread part of the second core, and two busy threads slow each other; this measures both.
 */
const BARE = `
const { parentPort, workerData } = require('node:worker_threads');
const { htmlToMarkdown } = require(workerData.module);
parentPort.on('message', (ms) => {
  const until = performance.now() + ms;
  let pages = 0;
  for (let i = 0; performance.now() < until; i++, pages++) htmlToMarkdown(workerData.pages[i % workerData.pages.length], 'http://127.0.0.1/');
  parentPort.postMessage(pages);
});`;

function bareThreads(count: number, pages: string[]) {
  const module = path.join(ROOT, 'dist', 'workers', 'web', 'html-to-markdown.js');
  const threads = Array.from({ length: count }, () => new Worker(BARE, { eval: true, workerData: { module, pages } }));
  const run = (ms: number) => Promise.all(threads.map((thread) => new Promise<number>((resolve) => (thread.once('message', resolve), thread.postMessage(ms)))));
  return {
    /** Pages per second of all threads over one phase. */
    async phase(): Promise<number> {
      const done = await run(SECONDS * 1000);
      return (done.reduce((sum, n) => sum + n, 0) / SECONDS);
    },
    warmUp: () => run(300),
    stop: () => Promise.all(threads.map((thread) => thread.terminate())),
  };
}

async function main() {
  const site = await servePages();
  const urls = site.pages.map((page) => `${site.origin}/${page}`);
  // The compiled pipeline, as the threads run it.
  const { fetchWebContent } = require(path.join(ROOT, 'dist', 'workers', 'web', 'content.js')) as typeof import('../../workers/web/content');
  try {
    console.log(`${site.pages.length} pages in turn, concurrency ${CONCURRENCY}, phases of ${SECONDS} s, ${ROUNDS} rounds, ${require('node:os').cpus().length} CPUs`);
    for (const url of urls) await fetchWebContent(url, config); // warm-up
    const html = await Promise.all(urls.map(async (url) => (await fetch(url)).text()));
    const bare = [1, 2].map((threads) => ({ threads, run: bareThreads(threads, html), pagesPerSecond: 0 }));
    const inline = await phase('inline (main)', urls, (url) => fetchWebContent(url, { ...config, timeoutMs: 30_000 }));
    // Both pools at once, their phases alternated: this machine's speed drifts by 2x within a
    // minute, and back-to-back phases would compare two different machines.
    // The product's thread pool, as mcpvisor configures it (web.fetch defaults but the thread count).
    const { ThreadPool } = require(path.join(ROOT, 'dist', 'supervisor', 'pools', 'thread-pool.js')) as typeof import('../../supervisor/pools/thread-pool');
    const { DEFAULT_CONFIG } = require(path.join(ROOT, 'dist', 'config', 'validate.js')) as typeof import('../../config/validate');
    const logger = createLogger({ level: 'silent' });
    const pools = await Promise.all(
      [1, 2].map(async (threads) => {
        const pool = new ThreadPool({
          name: `fetch-${threads}`,
          module: THREAD_MODULE,
          threads,
          concurrency: DEFAULT_CONFIG.web.fetch.concurrency,
          workerConfig: config,
          maxQueue: 1000,
          cancelGraceMs: DEFAULT_CONFIG.pools.cancelGraceMs,
          maxOldGenerationSizeMb: DEFAULT_CONFIG.pools.threadMaxOldGenerationSizeMb,
          restart: DEFAULT_CONFIG.pools.restart,
          logger,
        });
        await pool.start();
        const task = (url: string) => pool.call({ tool: 'fetch_web_content', arguments: { url } }, { deadlineMs: 60_000 });
        return { threads, pool, task, pagesPerSecond: 0, lagP99Ms: 0 };
      }),
    );
    try {
      for (const { task } of pools) await Promise.all(site.pages.map((page) => task(`${site.origin}/${page}`))); // warm-up every thread
      for (const { run } of bare) await run.warmUp();
      for (let round = 0; round < ROUNDS; round++) {
        for (const entry of pools) {
          const result = await phase(`pool, ${entry.threads} thread${entry.threads > 1 ? 's' : ''}`, urls, entry.task);
          entry.pagesPerSecond += result.pagesPerSecond / ROUNDS;
          entry.lagP99Ms = Math.max(entry.lagP99Ms, result.lagP99Ms);
        }
        for (const entry of bare) {
          const pagesPerSecond = await entry.run.phase();
          console.log(`${`bare, ${entry.threads} thread${entry.threads > 1 ? 's' : ''}`.padEnd(18)} ${fmt(pagesPerSecond)} pages/s (conversion only)`);
          entry.pagesPerSecond += pagesPerSecond / ROUNDS;
        }
      }
    } finally {
      await Promise.all([...pools.map(({ pool }) => pool.stop(1000)), ...bare.map(({ run }) => run.stop())]);
    }
    const [one, two] = pools.map((entry) => entry.pagesPerSecond);
    console.log(`over ${ROUNDS} alternated rounds: 1 thread ${fmt(one)} pages/s, 2 threads ${fmt(two)} pages/s`);
    console.log(`ratio 2 threads / 1 thread: ${fmt(two / one, 2)}x (target >= 1.7x)`);
    const ceiling = bare[1].pagesPerSecond / bare[0].pagesPerSecond;
    console.log(`the machine's ceiling, 2 bare threads / 1 on the conversion alone: ${fmt(ceiling, 2)}x; the pool reaches ${fmt(two / one / ceiling, 2)} of it`);
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
