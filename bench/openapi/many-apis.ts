/**
 * Many APIs in one `mcpvisor` (`apis: [...]`, one api worker process each): 1, 5, 15 and 30 of
 * them, each its own namespace. Series `github`: copies of GitHub's description (13 MB, 1,226
 * tools each: 36,780 tools at 30); `fixtures`: the small descriptions of test/fixtures/openapi in
 * turn. For each count, a first start (empty spec cache) and a restart (the cache filled):
 *   - stdio, the SDK client: spawn to `initialize` answered, then every `tools/list` page (tools,
 *     pages, bytes of the pages' JSON, names listed twice), and when each API said it was ready
 *     (first, median, last, from spawn: how the starts were spread over the machine's cores);
 *   - the whole process tree's peak memory, and its memory once every worker has loaded its call
 *     modules (after the start, one API after another) and 1 s more (memory.ts: pages the
 *     processes share counted once; the plain sum of each process's VmHWM / VmRSS beside it);
 *   - HTTP: spawn to the port accepting and `/health` answering 200.
 * Then ratios against 1 API in the same run, per API (1 means each API costs what one alone does).
 * Scenario `slow`: 15 fixture APIs with one more whose description answers after `SLOW_MS`: the
 * time to /health 200 of the 16 against the 15 alone.
 *   npm run build && npx tsx bench/openapi/many-apis.ts [github|fixtures|slow ...] [--counts 1,5,15,30]
 *
 * At `6eda97f` (2-core machine shared with other jobs, load 14-30): GitHub x30, 36,780 tools,
 * 56 MB of descriptors in 14 pages, no name listed twice: from the spec cache 2.4-2.7 s to
 * `initialize`, 2.4-2.9 s to /health 200, 0.41x one API's time per API (0.27x to /health);
 * steady tree 1.38 GB, 0.40x per API; a first start 12.0 s (0.55x per API), peak tree 3.5 GB,
 * 2.7 GB steady; every page listed by the SDK client in 1.5-1.8 s (the supervisor idle most of
 * it: the client's parse). Fixtures x30: 1.5 s cached, 2.9 s first, 874 MB steady (~29 MB an
 * API: a Node process each). Every API's start is at once: the last ready at 1.4-2.2 s, the first
 * at 1.3-1.4 s (cached). One API whose description takes 3 s holds the port of 15 others:
 * /health 200 after 4.5 s against 1.6 s. Before the workers' warm-ups waited for the whole
 * start (436b486), alternated with 1f6daa6: GitHub x30 from the cache, spawn to the last page,
 * 4.5-5.0 s against 7.4-8.0 s; x15 first start 7.8-8.3 s against 9.2 s, and the tree's RSS 10 s
 * later (summed) 2.0 GB against 2.6 GB with the collection after a build (6eda97f). With at
 * most max(4, cores) pools starting at once: GitHub x30 first start 5.5 s to `initialize`
 * against 12.0 s, peak tree 1.86 GB against 3.5 GB, steady 1.79 GB against 2.7 GB (from the
 * cache unchanged, 2.3 s).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { GITHUB, ROOT, percentile, stop } from './common';
import { currentMemory, peakMemory } from './memory';

const MCPVISOR = path.join(ROOT, 'dist', 'supervisor', 'cli', 'mcpvisor.js');
const FIXTURES = ['petstore-3.0.yaml', 'swagger-2.0.json', 'openapi-3.1.yaml', 'real-world-shapes.yaml', 'arguments.yaml', 'serialization.yaml', 'edges.yaml', 'deprecated.yaml'].map((name) =>
  path.join(ROOT, 'test', 'fixtures', 'openapi', name),
);
/** Memory is read this long after the last API has loaded its call modules (its `warmed up`). */
const STEADY_AFTER_MS = 1000;
const SLOW_MS = 3000;

interface StdioRun {
  initializeMs: number;
  listMs: number;
  totalMs: number;
  tools: number;
  pages: number;
  listBytes: number;
  duplicateNames: number;
  readyMs: { first: number; median: number; last: number };
  peakTreeMb?: number;
  peakHwmSumMb: number;
  steadyTreeMb?: number;
  steadyRssSumMb: number;
}

const tmp = mkdtempSync(path.join(tmpdir(), 'mcpvisor-bench-many-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

function writeConfig(specs: string[], extra: Array<Record<string, unknown>> = []): string {
  const apis = specs.map((spec, i) => ({ apiBaseUrl: 'http://127.0.0.1:9', openApiSpec: spec, namespace: `a${i}` }));
  const file = path.join(tmp, `config-${specs.length}-${Math.random().toString(36).slice(2)}.json`);
  // debug: the workers' `warmed up` lines tell when the start's work is over.
  writeFileSync(file, JSON.stringify({ shell: { enabled: false }, web: { enabled: false }, logLevel: 'debug', apis: [...apis, ...extra] }));
  return file;
}

function specsOf(series: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => (series === 'github' ? GITHUB : FIXTURES[i % FIXTURES.length]));
}

async function stdioRun(config: string, cacheHome: string, specs: number): Promise<StdioRun> {
  const spawnedAt = Date.now();
  const started = performance.now();
  const transport = new StdioClientTransport({ command: process.execPath, args: [MCPVISOR, '--config', config], env: { ...(process.env as Record<string, string>), XDG_CACHE_HOME: cacheHome }, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(transport);
  const initialized = performance.now();
  let cursor: string | undefined;
  let pages = 0;
  let listBytes = 0;
  const names: string[] = [];
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    listBytes += Buffer.byteLength(JSON.stringify(page));
    names.push(...page.tools.map((tool) => tool.name));
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== undefined && pages < 1000);
  const listed = performance.now();
  const pid = transport.pid!;
  const peak = peakMemory(pid);
  const warmed = () => stderr.split('"msg":"warmed up"').length - 1;
  for (let i = 0; i < 600 && warmed() < specs; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  await new Promise((resolve) => setTimeout(resolve, STEADY_AFTER_MS));
  const steady = currentMemory(pid);
  await client.close();
  const ready = stderr
    .split('\n')
    .flatMap((line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; time?: number };
        return entry.msg === 'api tools ready' && typeof entry.time === 'number' ? [entry.time - spawnedAt] : [];
      } catch {
        return [];
      }
    })
    .sort((a, b) => a - b);
  return {
    initializeMs: initialized - started,
    listMs: listed - initialized,
    totalMs: listed - started,
    tools: names.length,
    pages,
    listBytes,
    duplicateNames: names.length - new Set(names).size,
    readyMs: { first: ready[0] ?? NaN, median: percentile(ready, 50) ?? NaN, last: ready[ready.length - 1] ?? NaN },
    peakTreeMb: peak.treeMb,
    peakHwmSumMb: peak.hwmSumMb,
    steadyTreeMb: steady.treeMb,
    steadyRssSumMb: steady.hwmSumMb,
  };
}

/** Spawn to /health 200 over HTTP (the port opens once the start is done), ms. */
async function healthRun(config: string, cacheHome: string): Promise<{ listeningMs: number; healthMs: number; status: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [MCPVISOR, '--config', config, '--transport', 'http', '--host', '127.0.0.1', '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, XDG_CACHE_HOME: cacheHome } });
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const m = /"url":"([^"]+)","msg":"listening"/.exec(stderr);
      if (m) resolve(m[1]);
    });
    child.once('exit', () => reject(new Error(`exited: ${stderr.slice(-2000)}`)));
  });
  const listeningMs = performance.now() - started;
  let status = 0;
  for (let i = 0; i < 2000 && status !== 200; i++) {
    const res = await fetch(new URL('/health', url)).catch(() => undefined);
    status = res?.status ?? 0;
    await res?.arrayBuffer();
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const healthMs = performance.now() - started;
  await stop(child);
  return { listeningMs, healthMs, status };
}

const round = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? undefined : Math.round(value));

async function series(name: string, counts: number[]): Promise<void> {
  const rows: Record<string, { cold: StdioRun; cached: StdioRun; health: { cold: number; cached: number } }> = {};
  for (const count of counts) {
    const config = writeConfig(specsOf(name, count));
    const cacheHome = mkdtempSync(path.join(tmp, 'xdg-'));
    const cold = await stdioRun(config, cacheHome, count);
    const cached = await stdioRun(config, cacheHome, count);
    const coldHome = mkdtempSync(path.join(tmp, 'xdg-'));
    const healthCold = await healthRun(config, coldHome);
    const healthCached = await healthRun(config, cacheHome);
    rmSync(cacheHome, { recursive: true, force: true });
    rmSync(coldHome, { recursive: true, force: true });
    rows[count] = { cold, cached, health: { cold: healthCold.healthMs, cached: healthCached.healthMs } };
    const show = (run: StdioRun) => ({
      initializeMs: round(run.initializeMs),
      listMs: round(run.listMs),
      tools: run.tools,
      pages: run.pages,
      listMB: +(run.listBytes / 1048576).toFixed(1),
      duplicateNames: run.duplicateNames,
      apiReadyMs: { first: round(run.readyMs.first), median: round(run.readyMs.median), last: round(run.readyMs.last) },
      peakTreeMb: round(run.peakTreeMb),
      peakHwmSumMb: round(run.peakHwmSumMb),
      steadyTreeMb: round(run.steadyTreeMb),
      steadyRssSumMb: round(run.steadyRssSumMb),
    });
    console.log(`${name} x${count}:`, JSON.stringify({ cold: show(cold), cached: show(cached), healthMs: { cold: round(healthCold.healthMs), cached: round(healthCached.healthMs) } }));
  }
  const one = rows[counts[0]];
  for (const count of counts.slice(1)) {
    const row = rows[count];
    const n = count / counts[0];
    const per = (mine: number | undefined, base: number | undefined) => (mine === undefined || base === undefined ? 'n/a' : (mine / n / base).toFixed(2));
    console.log(
      `${name} ${count} against ${counts[0]}, per API: start to tools/list cold ${per(row.cold.totalMs, one.cold.totalMs)}, cached ${per(row.cached.totalMs, one.cached.totalMs)}; ` +
        `/health 200 cold ${per(row.health.cold, one.health.cold)}, cached ${per(row.health.cached, one.health.cached)}; ` +
        `peak tree memory ${per(row.cold.peakTreeMb, one.cold.peakTreeMb)}, steady ${per(row.cached.steadyTreeMb, one.cached.steadyTreeMb)}; tools/list time ${per(row.cached.listMs, one.cached.listMs)}`,
    );
  }
}

/** 15 fixture APIs, then the same with one more whose description comes after SLOW_MS. */
async function slow(): Promise<void> {
  const server = http.createServer((_req, res) => {
    setTimeout(() => res.end(readFileSync(FIXTURES[0])), SLOW_MS);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const slowUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/openapi.yaml`;
  try {
    const specs = specsOf('fixtures', 15);
    const cacheHome = mkdtempSync(path.join(tmp, 'xdg-'));
    const without = await healthRun(writeConfig(specs), cacheHome);
    const withSlow = await healthRun(writeConfig(specs, [{ apiBaseUrl: 'http://127.0.0.1:9', openApiSpec: slowUrl, namespace: 'slow', affectsHealth: false }]), cacheHome);
    console.log(`slow: /health 200 of 15 fixture APIs ${round(without.healthMs)} ms; with a 16th (affectsHealth: false) whose description takes ${SLOW_MS} ms: ${round(withSlow.healthMs)} ms (ratio ${(withSlow.healthMs / without.healthMs).toFixed(2)})`);
  } finally {
    server.close();
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const countsAt = args.indexOf('--counts');
  const counts = countsAt >= 0 ? args.splice(countsAt, 2)[1].split(',').map(Number) : [1, 5, 15, 30];
  const names = args.length > 0 ? args : ['fixtures', 'github', 'slow'];
  for (const name of names) {
    if (name === 'slow') await slow();
    else if (name === 'github' || name === 'fixtures') await series(name, counts);
    else throw new Error(`unknown scenario '${name}': github, fixtures or slow`);
  }
}

void main();
