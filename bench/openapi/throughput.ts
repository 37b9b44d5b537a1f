/**
 * tools/call throughput and p99 latency at 20 concurrent HTTP sessions against a local upstream,
 * ours vs the reference (@ivotoby/openapi-mcp-server 1.16.1), plus a direct undici loop against
 * the same upstream from the same client (the machine's floor), and relay-floor.js (the floor of
 * any supervisor + worker design: HTTP → IPC → undici and back, nothing else). The load is
 * load.ts's. Every target is measured in `rounds` alternated phases of `seconds` each; for each
 * server, the CPU time per call of its main process and of its workers (cpuUsPerCall, from /proc)
 * is printed too.
 * `npx tsx bench/openapi/throughput.ts [seconds per phase, default 2] [rounds, default 3]`.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startHttpServer, stop } from './common';
import { PETSTORE, directLoad, dispatcher, freePort, mcpLoad, measured, startUpstream, summary, type Phase } from './load';

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 2);
  const rounds = Number(process.argv[3] ?? 3);
  const { child: upstream, base } = await startUpstream();
  const names = ['direct', 'reference', 'ours', 'floor'] as const;
  const phases: Record<(typeof names)[number], Phase[]> = { direct: [], reference: [], ours: [], floor: [] };
  const servers: Array<{ child: ReturnType<typeof spawn>; url: string }> = [];
  try {
    // Every server up at once, idle until its turn; the phases alternate round by round, because
    // this machine's speed drifts within a minute and back-to-back runs would compare two machines.
    const urls = {
      reference: await startHttpServer('reference', ['--api-base-url', base, '--openapi-spec', PETSTORE], await freePort()),
      ours: await startHttpServer('ours', ['--api-base-url', base, '--openapi-spec', PETSTORE], await freePort()),
      floor: await startFloor(base),
    };
    servers.push(urls.reference, urls.ours, urls.floor);
    for (const name of ['reference', 'ours', 'floor'] as const) await mcpLoad(urls[name].url, 1); // warm-up
    for (let round = 0; round < rounds; round++) {
      for (const name of names) phases[name].push(name === 'direct' ? await directLoad(base, seconds) : await measured(urls[name].child.pid!, urls[name].url, seconds));
    }
  } finally {
    for (const server of servers) await stop(server.child);
    await stop(upstream);
    await dispatcher.close();
  }
  const results = Object.fromEntries(names.map((name) => [name, summary(phases[name])]));
  const ours = results.ours as { calls: number; p99: number };
  const reference = results.reference as { calls: number; p99: number };
  const direct = results.direct as { calls: number; p99: number };
  const floor = results.floor as { calls: number; p99: number };
  console.log(JSON.stringify(results, (_k, v) => (typeof v === 'number' ? Math.round(v * 10) / 10 : v), 2));
  console.log(`calls/s ours/reference: ${(ours.calls / reference.calls).toFixed(2)} (target >= 1.5)`);
  console.log(`p99 ours/reference: ${(ours.p99 / reference.p99).toFixed(2)} (target <= 0.5)`);
  console.log(`calls/s ours/direct undici: ${(ours.calls / direct.calls).toFixed(2)} (target >= 0.35)`);
  console.log(`the design's floor (relay-floor.js): ${(floor.calls / direct.calls).toFixed(2)} of direct undici, ${(floor.calls / reference.calls).toFixed(2)} of the reference, p99 ${(floor.p99 / reference.p99).toFixed(2)} of the reference's; ours reaches ${(ours.calls / floor.calls).toFixed(2)} of it`);
}


/** relay-floor.js: the least any supervisor + worker relay does per call. */
async function startFloor(base: string): Promise<{ child: ReturnType<typeof spawn>; url: string }> {
  const child = spawn(process.execPath, [path.join(__dirname, 'relay-floor.js'), '0', base], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  return { child, url: `http://127.0.0.1:${port}/mcp` };
}

void main();
