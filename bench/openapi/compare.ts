/**
 * Two builds of mcpvisor side by side under load.ts's tools/call load: this checkout's build
 * (`dist/`) against another one, e.g. a `git worktree` of an earlier commit, built. For a change
 * meant to make calls cheaper: the phases alternate round by round, so both builds see the same
 * machine, and the ratios (this build / the other) are the result. The second server measured in
 * a round gains ~2-3 % in calls/s from the order alone (same build on both sides, measured here):
 * read smaller differences as none.
 * `npx tsx bench/openapi/compare.ts <other checkout> [seconds per phase, default 3] [rounds, default 4]`.
 */
import path from 'node:path';
import { OURS, ROOT, startHttpServer, stop } from './common';
import { PETSTORE, dispatcher, freePort, mcpLoad, measured, startUpstream, summary, type Phase } from './load';

async function main(): Promise<void> {
  const other = process.argv[2];
  if (!other) throw new Error('usage: compare.ts <other checkout, built> [seconds] [rounds]');
  const seconds = Number(process.argv[3] ?? 3);
  const rounds = Number(process.argv[4] ?? 4);
  const { child: upstream, base } = await startUpstream();
  const args = ['--api-base-url', base, '--openapi-spec', PETSTORE];
  const servers = {
    other: await startHttpServer('ours', args, await freePort(), path.join(path.resolve(other), path.relative(ROOT, OURS))),
    this: await startHttpServer('ours', args, await freePort()),
  };
  const phases: Record<keyof typeof servers, Phase[]> = { other: [], this: [] };
  try {
    for (const name of ['other', 'this'] as const) await mcpLoad(servers[name].url, 1); // warm-up
    for (let round = 0; round < rounds; round++) {
      for (const name of ['other', 'this'] as const) phases[name].push(await measured(servers[name].child.pid!, servers[name].url, seconds));
    }
  } finally {
    for (const server of Object.values(servers)) await stop(server.child);
    await stop(upstream);
    await dispatcher.close();
  }
  const results = { other: summary(phases.other), this: summary(phases.this) };
  console.log(JSON.stringify(results, (_k, v) => (typeof v === 'number' ? Math.round(v * 10) / 10 : v), 2));
  console.log(`calls/s this/other: ${(results.this.calls / results.other.calls).toFixed(3)}; p99 this/other: ${(results.this.p99 / results.other.p99).toFixed(3)}`);
}

void main();
