/**
 * Many tenants on one HTTP server, one of them noisy: how long a quiet session's call waits and
 * how it ends, while a noisy session (or a noisy client with many sessions) keeps a pool or a
 * rate limit busy. Each figure next to the same quiet call on an idle server (the baseline) in the
 * same run, and, given another checkout (a `git worktree` of an earlier commit, built), next to
 * that build's under the same load, builds alternated:
 *
 *   npm run build && npx tsx bench/sessions/fairness.ts [--against ../earlier] [--rounds 3] [--calls 32] [--only pool|client|fetch|held]
 *
 * Scenarios (everything on 127.0.0.1, every loop bounded):
 * - pool, one noisy session: a pool of 4 slots (one worker, concurrency 4); the noisy session sends
 *   `calls` sleeps of 400 ms, then the quiet session one echo, once the others are queued.
 * - pool, noisy client: the same calls spread over 8 sessions of one client.
 * - fetch rate limit: 1 fetch per 100 ms; the noisy session sends `calls` fetches of a local page,
 *   then the quiet session one.
 * - held slots (`--only held`): the noisy session holds all 4 slots with sleeps of 2 s (nothing
 *   queued), then the quiet session sends one echo; with `pools.reservedSlots` 1 (the default) and
 *   0 (off), same build, alternated: the quiet call's wait with over without the reservation.
 *   This build only (an earlier one may not know the key).
 * The quiet call's wait is the median over the rounds, in ms.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fixture, ROOT } from '../../test/helpers/processes';
import { tempDir } from '../../test/helpers/temp';

function arg(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

const ROUNDS = Number(arg('rounds') ?? 3);
const CALLS = Number(arg('calls') ?? 32);
const AGAINST = arg('against');
const ONLY = arg('only');
const HELD_MS = 2000;
const SLEEP_MS = 400;
const FETCH_INTERVAL_MS = 100;

interface Target {
  baseUrl: string;
  mcpUrl: string;
  stop(): Promise<void>;
}

async function start(root: string, command: string, config: Record<string, unknown>): Promise<Target> {
  const file = path.join(tempDir('mcpvisor-bench-'), 'config.json');
  writeFileSync(file, JSON.stringify(config));
  const child: ChildProcess = spawn(process.execPath, [path.join(root, 'dist', 'supervisor', 'cli', `${command}.js`), '--transport', 'http', '--host', '127.0.0.1', '--port', '0', '--config', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  const mcpUrl = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`${command} did not listen within 30 s: ${text.slice(-2000)}`)), 30_000);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      const match = /"url":"([^"]+)","msg":"listening"/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`${command} exited (${code}): ${text.slice(-2000)}`)));
  });
  child.stderr!.resume();
  return {
    baseUrl: new URL(mcpUrl).origin,
    mcpUrl,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function connect(mcpUrl: string): Promise<Client> {
  const client = new Client({ name: 'fairness-bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
  return client;
}

async function queued(target: Target): Promise<number> {
  const health = (await (await fetch(`${target.baseUrl}/health`)).json()) as { pools: Array<{ name: string; queued: number }> };
  return health.pools.find((pool) => pool.name === 'test')?.queued ?? 0;
}

/** Calls of the pool running or waiting. */
async function taken(target: Target): Promise<number> {
  const health = (await (await fetch(`${target.baseUrl}/health`)).json()) as { pools: Array<{ name: string; busy: number; queued: number }> };
  const pool = health.pools.find((entry) => entry.name === 'test');
  return (pool?.busy ?? 0) + (pool?.queued ?? 0);
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the noisy calls were not queued within 5 s');
}

interface Outcome {
  waitMs: number;
  outcome: string;
}

/** The quiet call, timed; its outcome is `ok` or its error code. */
async function quietCall(client: Client, name: string, args: Record<string, unknown>): Promise<Outcome> {
  const started = performance.now();
  const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as { isError?: boolean; _meta?: { errorCode?: string }; structuredContent?: { code?: string }; content: Array<{ text?: string }> };
  const waitMs = performance.now() - started;
  const code = /\b([A-Z_]{4,})\b/.exec(result.content[0]?.text ?? '')?.[1];
  return { waitMs, outcome: result.isError ? (code ?? 'error') : 'ok' };
}

/** The pool scenario with the noisy calls spread over `sessions` sessions. */
async function poolScenario(root: string, sessions: number, noisy: boolean): Promise<Outcome> {
  const target = await start(root, 'mcpvisor', {
    shell: { enabled: false },
    web: { enabled: false },
    http: { maxConcurrentCallsPerSession: 256, rateLimit: { perIpRequestsPerSecond: 0, perSessionRequestsPerSecond: 0 } },
    customToolsets: [{ name: 'test', module: fixture('test-worker'), workers: 1, concurrency: 4, callTimeoutMs: 120_000 }],
  });
  try {
    const clients = await Promise.all(Array.from({ length: sessions }, () => connect(target.mcpUrl)));
    const quiet = await connect(target.mcpUrl);
    const calls = noisy ? Array.from({ length: CALLS }, (_, i) => clients[i % sessions].callTool({ name: 'sleep', arguments: { ms: SLEEP_MS } }, undefined, { timeout: 120_000 }).catch(() => undefined)) : [];
    if (noisy) await until(async () => (await queued(target)) >= CALLS - 4);
    const outcome = await quietCall(quiet, 'echo', { text: 'quiet' });
    await Promise.all(calls);
    await Promise.all([...clients, quiet].map((client) => client.close()));
    return outcome;
  } finally {
    await target.stop();
  }
}

/** The held-slots scenario: the noisy session's 4 sleeps hold every slot of the pool, then the quiet call. */
async function heldScenario(root: string, reservedSlots: number): Promise<Outcome> {
  const target = await start(root, 'mcpvisor', {
    shell: { enabled: false },
    web: { enabled: false },
    pools: { reservedSlots },
    http: { maxConcurrentCallsPerSession: 256, rateLimit: { perIpRequestsPerSecond: 0, perSessionRequestsPerSecond: 0 } },
    customToolsets: [{ name: 'test', module: fixture('test-worker'), workers: 1, concurrency: 4, callTimeoutMs: 120_000 }],
  });
  try {
    const noisy = await connect(target.mcpUrl);
    const quiet = await connect(target.mcpUrl);
    const calls = Array.from({ length: 4 }, () => noisy.callTool({ name: 'sleep', arguments: { ms: HELD_MS } }, undefined, { timeout: 120_000 }).catch(() => undefined));
    await until(async () => (await taken(target)) === 4);
    const outcome = await quietCall(quiet, 'echo', { text: 'quiet' });
    await Promise.all(calls);
    await Promise.all([noisy, quiet].map((client) => client.close()));
    return outcome;
  } finally {
    await target.stop();
  }
}

/** Prints the held-slots scenario: the quiet call's wait with the reservation and without, alternated in each round. */
async function held(): Promise<void> {
  const waits = { on: [] as number[], off: [] as number[] };
  const outcomes: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [key, reservedSlots] of [['on', 1], ['off', 0]] as const) {
      const outcome = await heldScenario(ROOT, reservedSlots);
      waits[key].push(outcome.waitMs);
      outcomes.push(outcome.outcome);
    }
  }
  const [on, off] = [median(waits.on), median(waits.off)];
  console.log(`held slots (4 sleeps of ${HELD_MS} ms on 4 slots), median of ${ROUNDS} rounds: reservedSlots 1 ${on.toFixed(0)} ms, 0 ${off.toFixed(0)} ms: with/without ${(on / off).toFixed(3)}x; ${outcomes.join(',')}`);
}

async function fetchScenario(root: string, site: string, noisy: boolean): Promise<Outcome> {
  const target = await start(root, 'web-search-mcp', {
    http: { maxConcurrentCallsPerSession: 256, rateLimit: { perIpRequestsPerSecond: 0, perSessionRequestsPerSecond: 0 } },
    web: { fetch: { allowPrivateNetwork: true, rateLimit: 1, rateLimitIntervalMs: FETCH_INTERVAL_MS, timeoutMs: 60_000 } },
  });
  try {
    const noisyClient = await connect(target.mcpUrl);
    const quiet = await connect(target.mcpUrl);
    // A first fetch loads the thread's converter (~0.5 s): not what is measured; then a full bucket.
    await quiet.callTool({ name: 'fetch_web_content', arguments: { url: `${site}/page?warm` } });
    await new Promise((resolve) => setTimeout(resolve, 2 * FETCH_INTERVAL_MS));
    const calls = noisy ? Array.from({ length: CALLS }, (_, i) => noisyClient.callTool({ name: 'fetch_web_content', arguments: { url: `${site}/page?n=${i}` } }, undefined, { timeout: 120_000 }).catch(() => undefined)) : [];
    // No count of the limiter's waiters is exposed: the noisy calls are sent, then a pause far
    // shorter than their line (CALLS x FETCH_INTERVAL_MS) lets them reach it.
    if (noisy) await new Promise((resolve) => setTimeout(resolve, 300));
    const outcome = await quietCall(quiet, 'fetch_web_content', { url: `${site}/page?quiet` });
    await Promise.all(calls);
    await Promise.all([noisyClient, quiet].map((client) => client.close()));
    return outcome;
  } finally {
    await target.stop();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
  if (ONLY === 'held') return held();
  const site: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><p>A page.</p></body></html>'));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const builds: Array<[string, string]> = [['this', ROOT], ...(AGAINST ? [['against', path.resolve(AGAINST)] as [string, string]] : [])];
  const scenarios: Array<[key: string, name: string, run: (root: string, noisy: boolean) => Promise<Outcome>]> = [
    ['pool', 'pool, one noisy session', (root, noisy) => poolScenario(root, 1, noisy)],
    ['client', 'pool, noisy client, 8 sessions', (root, noisy) => poolScenario(root, 8, noisy)],
    ['fetch', 'fetch rate limit, one noisy session', (root, noisy) => fetchScenario(root, origin, noisy)],
  ];
  console.log(`quiet session's call, median of ${ROUNDS} rounds; noise: ${CALLS} calls (sleeps of ${SLEEP_MS} ms on 4 slots; fetches at 1 per ${FETCH_INTERVAL_MS} ms)`);
  try {
    for (const [key, name, run] of scenarios) {
      if (ONLY !== undefined && ONLY !== key) continue;
      const figures = new Map<string, { idle: number[]; noisy: number[]; outcomes: string[] }>();
      for (const [build] of builds) figures.set(build, { idle: [], noisy: [], outcomes: [] });
      for (let round = 0; round < ROUNDS; round++) {
        // Builds alternated within each round: the machine's speed moves from minute to minute.
        for (const [build, root] of builds) {
          const f = figures.get(build)!;
          f.idle.push((await run(root, false)).waitMs);
          const loaded = await run(root, true);
          f.noisy.push(loaded.waitMs);
          f.outcomes.push(loaded.outcome);
        }
      }
      const line = [`${name}:`];
      for (const [build] of builds) {
        const f = figures.get(build)!;
        line.push(`${build} ${median(f.noisy).toFixed(0)} ms (${(median(f.noisy) / median(f.idle)).toFixed(1)}x idle ${median(f.idle).toFixed(0)} ms; ${f.outcomes.join(',')})`);
      }
      if (AGAINST) line.push(`this/against ${(median(figures.get('this')!.noisy) / median(figures.get('against')!.noisy)).toFixed(2)}x`);
      console.log(line.join('  '));
    }
  } finally {
    site.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
