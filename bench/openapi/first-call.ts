/**
 * The first tools/call of a fresh openapi-mcp-server over stdio (Petstore, local upstream), sent
 * right after tools/list and again 1 s after it (when the start's warm-ups have run), and the
 * api worker's RSS 3 s after start; with `<other checkout>` (built), the same for that build in
 * alternated runs, as the baseline. A client that starts a server and calls a tool at once waits
 * for what the first call loads: the HTTP client, the request builder, the validators.
 * `npx tsx bench/openapi/first-call.ts [other checkout] [runs, default 5]`.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { OURS, ROOT, percentile, serverEnv, stdioRpc, stop, tree } from './common';
import { PETSTORE, startUpstream } from './load';

const rssMb = (pid: number) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
  } catch {
    return 0;
  }
};

async function once(script: string, base: string, delayMs: number): Promise<{ ms: number; workerRssMb: number }> {
  const child = spawn(process.execPath, [script, '--api-base-url', base, '--openapi-spec', PETSTORE], { stdio: ['pipe', 'pipe', 'ignore'], env: serverEnv() });
  const { send, answer } = stdioRpc(child);
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } });
  await answer(1);
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  await answer(2);
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  const started = performance.now();
  send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'show-pet-by-id', arguments: { petId: 'p1' } } });
  await answer(3);
  const ms = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, 3000 - delayMs)));
  const workerRssMb = rssMb(tree(child.pid!)[1] ?? 0);
  await stop(child);
  return { ms, workerRssMb };
}

async function main(): Promise<void> {
  const other = process.argv[2] && !/^\d+$/.test(process.argv[2]) ? process.argv[2] : undefined;
  const runs = Number(process.argv[other ? 3 : 2] ?? 5);
  const builds: Record<string, string> = { this: OURS };
  if (other) builds.other = path.join(path.resolve(other), path.relative(ROOT, OURS));
  const { child: upstream, base } = await startUpstream();
  const results: Record<string, Record<'atOnce' | 'after1s', Array<{ ms: number; workerRssMb: number }>>> = {};
  try {
    for (let run = 0; run < runs; run++) {
      for (const [name, script] of Object.entries(builds)) {
        results[name] ??= { atOnce: [], after1s: [] };
        results[name].atOnce.push(await once(script, base, 0));
        results[name].after1s.push(await once(script, base, 1000));
      }
    }
  } finally {
    await stop(upstream);
  }
  for (const [name, { atOnce, after1s }] of Object.entries(results)) {
    const p50 = (list: Array<{ ms: number }>) => Math.round(percentile(list.map((r) => r.ms), 50));
    const rss = percentile([...atOnce, ...after1s].map((r) => r.workerRssMb), 50).toFixed(1);
    console.log(`${name}: first call p50 ${p50(atOnce)} ms right after tools/list, ${p50(after1s)} ms 1 s later; api worker RSS 3 s after start ${rss} MB`);
  }
}

void main();
