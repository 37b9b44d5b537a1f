/**
 * GitHub's description (13 MB, 1,223 operations) and its dereferenced variant (73 MB, every
 * `$ref` written out): time from spawn to `tools/list` answered over stdio, and the peak memory of
 * the whole process tree (memory.ts: with the pages its processes share counted once, and as the
 * plain sum of each process's VmHWM), ours vs the reference
 * (@ivotoby/openapi-mcp-server 1.16.1), alternating runs. Ours twice: `cold` with an empty spec
 * cache (a first start: parse, build, then store the compiled description) and `cached` (a
 * restart with the description unchanged). The cache lives in a temporary XDG_CACHE_HOME, never
 * the user's. `npx tsx bench/openapi/startup.ts [runs] [github|deref ...]` (default: both).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GITHUB, GITHUB_DEREF, OURS, REFERENCE, percentile, stdioRpc, stop } from './common';
import { peakMemory } from './memory';

interface Run {
  ms: number;
  hwmSumMb: number;
  treeMb?: number;
  tools: number;
}

async function once(script: string, spec: string, cacheHome?: string): Promise<Run> {
  const started = performance.now();
  const env = cacheHome ? { ...process.env, XDG_CACHE_HOME: cacheHome } : process.env;
  const child = spawn(process.execPath, [script, '--api-base-url', 'http://127.0.0.1:9', '--openapi-spec', spec], { stdio: ['pipe', 'pipe', 'ignore'], env });
  const { send, answer } = stdioRpc(child);
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } });
  await answer(1);
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  const list = await answer(2);
  const ms = performance.now() - started;
  const memory = peakMemory(child.pid!);
  await stop(child);
  return { ms, hwmSumMb: memory.hwmSumMb, treeMb: memory.treeMb, tools: list.result.tools.length };
}

const DESCRIPTIONS: Record<string, string> = { github: GITHUB, deref: GITHUB_DEREF };

async function measure(name: string, spec: string, runs: number): Promise<void> {
  const results: Record<string, Run[]> = { reference: [], cold: [], cached: [] };
  const warm = mkdtempSync(path.join(tmpdir(), 'mcpvisor-bench-cache-'));
  try {
    await once(OURS, spec, warm); // fills the cache the `cached` runs read
    for (let i = 0; i < runs; i++) {
      results.reference.push(await once(REFERENCE, spec));
      const cold = mkdtempSync(path.join(tmpdir(), 'mcpvisor-bench-cache-'));
      results.cold.push(await once(OURS, spec, cold));
      rmSync(cold, { recursive: true, force: true });
      results.cached.push(await once(OURS, spec, warm));
    }
  } finally {
    rmSync(warm, { recursive: true, force: true });
  }
  const median = (list: Run[], of: (run: Run) => number | undefined) => {
    const values = list.map(of);
    return values.every((v) => v !== undefined) ? Math.round(percentile(values as number[], 50)) : undefined;
  };
  const summary = Object.fromEntries(
    Object.entries(results).map(([target, list]) => [target, { p50Ms: median(list, (r) => r.ms)!, peakTreeMb: median(list, (r) => r.treeMb), peakHwmSumMb: median(list, (r) => r.hwmSumMb)!, tools: list[0].tools }]),
  );
  console.log(`${name} (${path.basename(spec)}):`, JSON.stringify(summary, null, 2));
  const reference = summary.reference;
  for (const ours of ['cold', 'cached'] as const) {
    const mine = summary[ours];
    console.log(`${name} ${ours}: time ratio ours/reference: ${(mine.p50Ms / reference.p50Ms).toFixed(2)} (target <= 0.5)`);
    const tree = mine.peakTreeMb !== undefined && reference.peakTreeMb !== undefined ? (mine.peakTreeMb / reference.peakTreeMb).toFixed(2) : 'n/a (needs root)';
    console.log(`${name} ${ours}: memory ratio ours/reference: ${tree} (target <= 0.75), the tree's shared pages counted once; ${(mine.peakHwmSumMb / reference.peakHwmSumMb).toFixed(2)} summing each process's VmHWM`);
  }
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 5);
  const names = process.argv.length > 3 ? process.argv.slice(3) : Object.keys(DESCRIPTIONS);
  for (const name of names) {
    if (!(name in DESCRIPTIONS)) throw new Error(`unknown description '${name}': one of ${Object.keys(DESCRIPTIONS).join(', ')}`);
    await measure(name, DESCRIPTIONS[name], runs);
  }
}

void main();
