/**
 * Sessions benchmark (issue 6): requests per second and p50/p99 latency of `tools/list` and of a
 * cheap tool call (the fixture echo tool) at 10, 100 and 1,000 concurrent Streamable HTTP
 * sessions, and RSS per idle session; each figure next to the same run against a baseline (a bare
 * SDK McpServer with one echo tool, bench/sessions/baseline-server.ts) and as a ratio.
 *
 *   npm run build && npx tsx bench/sessions/sessions.ts [--sizes 10,100,1000] [--requests 3000] [--rate 100]
 *
 * Method: for each size N, N SDK clients connect, then all of them send requests back to back
 * (each sends ceil(requests / N)), first `tools/list`, then `tools/call echo`; latency is per
 * request as the client sees it, rps is requests / wall time of the phase. Then an open-loop
 * phase: `--rate` echo calls per second (default 100) spread over the N sessions, for 4 s. RSS per idle session is
 * (VmRSS with 1,100 idle sessions - VmRSS with 100), each taken 6 s after the last request, / 1,000, of the server
 * process only (mcpvisor's workers are separate processes and do not grow with sessions). The
 * load generator shares the machine's two cores with the server: compare ratios, not absolutes.
 * Issue targets: <= 50 KB per idle session; p99 of a cheap call at 100 sessions <= 20 ms.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { fixtureConfig } from '../../test/helpers/config';
import { closeClient, kb, openClient, percentile, pooled, rssOf, startServer, LOAD_HTTP } from '../../test/load/harness';
import { startBaselineServer } from './baseline';

interface Target {
  name: string;
  mcpUrl: string;
  pid: number;
  stop(): Promise<unknown>;
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
}

function arg(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 && process.argv[index + 1] ? process.argv[index + 1] : fallback;
}

async function startBaseline(): Promise<Target> {
  const baseline = await startBaselineServer();
  return { name: 'baseline', mcpUrl: `${baseline.baseUrl}/mcp`, pid: baseline.pid, stop: baseline.stop };
}

async function startMcpvisor(): Promise<Target> {
  const server = await startServer(fixtureConfig({ thread: false, process: { workers: 2, concurrency: 16 }, root: { http: LOAD_HTTP } }));
  return { name: 'mcpvisor', mcpUrl: server.mcpUrl, pid: server.server.child.pid!, stop: () => server.stop() };
}

async function connectAll(target: Target, count: number): Promise<Client[]> {
  const clients: Client[] = new Array(count);
  const outcomes = await pooled(count, 100, async (i) => (clients[i] = await openClient(target.mcpUrl, `bench-${i}`)));
  const failed = outcomes.filter((outcome) => outcome.status === 'rejected');
  if (failed.length) throw new Error(`${target.name}: ${failed.length} of ${count} sessions failed to connect: ${String((failed[0] as PromiseRejectedResult).reason)}`);
  return clients;
}

async function measure(clients: Client[], total: number, request: (client: Client) => Promise<unknown>): Promise<Figures> {
  const each = Math.ceil(total / clients.length);
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(clients.map(async (client) => {
    for (let i = 0; i < each; i++) {
      const t0 = performance.now();
      await request(client);
      latencies.push(performance.now() - t0);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  return { rps: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/**
 * Open loop: `total` requests at a fixed `rate` per second, round-robin over the sessions, each
 * sent on schedule whether or not the previous ones came back: latency with N sessions open and
 * the server below saturation (the closed-loop phases measure it saturated, where latency is
 * mostly queueing: N requests in flight / throughput).
 */
async function paced(clients: Client[], total: number, rate: number, request: (client: Client) => Promise<unknown>): Promise<Figures> {
  const latencies: number[] = [];
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const t0 = performance.now();
    pending.push(request(clients[i % clients.length]).then(() => void latencies.push(performance.now() - t0)));
  }
  await Promise.all(pending);
  const seconds = (performance.now() - started) / 1000;
  return { rps: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

async function idleRss(target: Target, count: number): Promise<{ before: number; after: number; perSession: number }> {
  // The cost of one more idle session: 100 sessions stay open while the 1,000 are added, so the
  // one-time costs of the first sessions (heap growth, parser and socket pools) are not counted.
  const warm = await connectAll(target, 100);
  await pooled(warm.length, 100, (i) => warm[i].listTools());
  await new Promise((resolve) => setTimeout(resolve, 6000));
  const before = rssOf(target.pid);
  const clients = await connectAll(target, count);
  // Each session lists its tools once, 100 at a time like the connects: 1,000 lists at once would
  // measure that burst's peak heap, which RSS keeps, rather than what idle sessions hold.
  await pooled(clients.length, 100, (i) => clients[i].listTools());
  // Idle: past the servers' 5 s keep-alive timeout, so only each session's GET stream stays open.
  await new Promise((resolve) => setTimeout(resolve, 6000));
  const after = rssOf(target.pid);
  await pooled(clients.length, 100, (i) => closeClient(clients[i]));
  await pooled(warm.length, 100, (i) => closeClient(warm[i]));
  return { before, after, perSession: (after - before) / count };
}

const f = (value: number, digits = 1) => value.toFixed(digits).padStart(9);

async function main(): Promise<void> {
  const sizes = arg('sizes', '10,100,1000').split(',').map(Number);
  const requests = Number(arg('requests', '3000'));
  const rate = Number(arg('rate', '100'));
  const rows = new Map<string, Figures>();
  const rss = new Map<string, { before: number; after: number; perSession: number }>();
  for (const start of [startBaseline, startMcpvisor]) {
    const target = await start();
    try {
      rss.set(target.name, await idleRss(target, 1000));
      for (const size of sizes) {
        const clients = await connectAll(target, size);
        await measure(clients.slice(0, 10), 200, (client) => client.listTools()); // warm-up
        rows.set(`${target.name} ${size} tools/list`, await measure(clients, requests, (client) => client.listTools()));
        rows.set(`${target.name} ${size} echo`, await measure(clients, requests, (client) => client.callTool({ name: 'echo', arguments: { text: 'bench' } })));
        rows.set(`${target.name} ${size} echo@${rate}/s`, await paced(clients, rate * 4, rate, (client) => client.callTool({ name: 'echo', arguments: { text: 'bench' } })));
        await pooled(clients.length, 100, (i) => closeClient(clients[i]));
      }
    } finally {
      await target.stop();
    }
  }
  const out: string[] = [];
  out.push(`sessions benchmark; closed loop: ${requests} requests per phase, every session sending back to back; echo@${rate}/s: open loop, ${rate * 4} calls at ${rate}/s over the sessions; latency in ms`);
  out.push('sessions  request     |  baseline rps   p50   p99 |  mcpvisor rps   p50   p99 | rps ratio  p99 ratio');
  for (const size of sizes) {
    for (const op of ['tools/list', 'echo', `echo@${rate}/s`]) {
      const b = rows.get(`baseline ${size} ${op}`)!;
      const m = rows.get(`mcpvisor ${size} ${op}`)!;
      out.push(`${String(size).padStart(8)}  ${op.padEnd(10)}  | ${f(b.rps, 0)} ${f(b.p50)} ${f(b.p99)} | ${f(m.rps, 0)} ${f(m.p50)} ${f(m.p99)} | ${f(m.rps / b.rps, 2)} ${f(m.p99 / b.p99, 2)}`);
    }
  }
  for (const [name, figures] of rss) {
    out.push(`${name}: RSS ${kb(figures.before)} -> ${kb(figures.after)} with 1000 idle sessions: ${kb(figures.perSession)} per idle session`);
  }
  const mv = rss.get('mcpvisor')!;
  const base = rss.get('baseline')!;
  out.push(`RSS per idle session ratio mcpvisor/baseline: ${(mv.perSession / base.perSession).toFixed(2)} (target <= 50 KB: ${mv.perSession <= 50 * 1024 ? 'met' : 'not met'})`);
  const paced100 = rows.get(`mcpvisor 100 echo@${rate}/s`);
  const closed100 = rows.get('mcpvisor 100 echo');
  if (paced100 && closed100) {
    out.push(`p99 of echo with 100 sessions open, ${rate} calls/s: ${paced100.p99.toFixed(1)} ms (target <= 20 ms: ${paced100.p99 <= 20 ? 'met' : 'not met'}); ` +
      `with all 100 sending back to back (saturated): ${closed100.p99.toFixed(1)} ms`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
