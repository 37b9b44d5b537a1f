/**
 * Search latency through real Chromium against a local engine (the saved DuckDuckGo page served
 * by a separate process): cold (first search, browser launch included; launch alone from the
 * searcher's stats), warm p50/p90 of sequential searches, and the throughput of 4 concurrent
 * searches against 1 at a time. Targets (issue 4): launch ≤ 1.5 s, warm p50 ≤ 300 ms.
 * Run: npx tsx bench/web/search.ts
 */
import { WebSearcher } from '../../workers/web/web-searcher';
import { fmt, percentile, runConcurrent, servePages } from './util';

const WARM = Number(process.env.WARM ?? 20);
const BATCH = Number(process.env.BATCH ?? 16);

async function main() {
  const site = await servePages();
  const searcher = new WebSearcher(true, { engineUrl: `${site.origin}/ddg`, rateLimit: false, timeoutMs: 30_000 });
  try {
    let t = performance.now();
    const first = await searcher.searchDetailed('does caffeine affect sleep');
    const cold = performance.now() - t;
    if (first.results.length === 0) throw new Error(`no results: ${JSON.stringify(first)}`);
    const stats = searcher.stats() as { launchMs: number };
    const warm: number[] = [];
    for (let i = 0; i < WARM; i++) {
      t = performance.now();
      await searcher.searchDetailed(`query ${i}`);
      warm.push(performance.now() - t);
    }
    const one = await runConcurrent(Array.from({ length: BATCH }, (_, i) => () => searcher.searchDetailed(`one ${i}`)), 1);
    const four = await runConcurrent(Array.from({ length: BATCH }, (_, i) => () => searcher.searchDetailed(`four ${i}`)), 4);
    const perSecond = (run: { wallMs: number }) => (BATCH / run.wallMs) * 1000;
    console.log(`cold search ${fmt(cold)} ms, of which browser launch ${stats.launchMs} ms (target <= 1500 ms)`);
    console.log(`warm p50 ${fmt(percentile(warm, 50))} ms, p90 ${fmt(percentile(warm, 90))} ms over ${WARM} searches (target p50 <= 300 ms)`);
    console.log(`1 at a time: ${fmt(perSecond(one), 2)} searches/s, p50 ${fmt(percentile(one.latencies, 50))} ms`);
    console.log(`4 at a time: ${fmt(perSecond(four), 2)} searches/s, p50 ${fmt(percentile(four.latencies, 50))} ms`);
    console.log(`ratio 4 concurrent / 1: ${fmt(perSecond(four) / perSecond(one), 2)}x`);
  } finally {
    await searcher.close();
    site.stop();
  }
}

void main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
