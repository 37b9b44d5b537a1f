/**
 * Soak test and leak hunt. Run after a build:
 *
 *     nice -n 10 npx tsx bench/soak/soak.ts [minutes=10] [--users 6] [--sample-s 15] [--kill-every-min 3]
 *       [--idle-ms 60000] [--connected-idle-ms 120000 (-1: not set, for builds before it)] [--inspect] [--keep]
 *
 * Starts the built `mcpvisor` (dist/) over HTTP with every toolset: an OpenAPI description
 * against a local upstream, web fetch against local pages, web search (real Chromium) against a
 * local DuckDuckGo serving a saved result page, and the sandboxed shell in a temp workspace. For
 * N minutes, virtual users drive a mixed load with the real SDK client (load.ts): steady
 * sessions, sessions closed with DELETE, sessions abandoned (left to the idle policy, shortened
 * here to --idle-ms), sessions dropped by a client that lives on (streams open: left to
 * --connected-idle-ms), legacy SSE sessions dropped mid-call, clients gone mid-call, cancels,
 * progress, API successes, errors, timeouts and large bodies, shell commands short, timing out,
 * over the cap and leaving background processes, file tools, large/slow/redirecting fetches and
 * a search every 15 s; a worker is killed with SIGKILL every few minutes. Every answer is checked.
 *
 * Every --sample-s it samples each process of the server's tree (sample.ts), cgroups, temp files
 * and sessions, and at the end prints baseline → end and growth per 1,000 calls and per hour.
 * Then it stops the load, waits for the idle policy, and compares the quiet server with the one
 * before the load (with --inspect also the supervisor's heap after a full GC, and the kinds of
 * object that grew, from heap snapshots); then stops the server and looks for anything it left behind.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { histogramGrowth, Inspector, type Histogram } from './inspect';
import { ApiTools, Load } from './load';
import { report, roleOf, sample, type Probe, type Timed } from './sample';
import { soakDescription, startUpstream, startWeb } from './servers';

const ROOT = path.resolve(__dirname, '..', '..');
const argv = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const at = argv.indexOf(`--${name}`);
  return at >= 0 ? Number(argv[at + 1]) : fallback;
};
const minutes = Number(argv.find((arg, i) => /^\d+(\.\d+)?$/.test(arg) && !argv[i - 1]?.startsWith('--')) ?? 10);
const users = flag('users', 6);
const sampleMs = flag('sample-s', 15) * 1000;
const killEveryMs = flag('kill-every-min', 3) * 60_000;
const idleMs = flag('idle-ms', 60_000);
// -1: leave the setting out (a build from before it).
const connectedIdleMs = flag('connected-idle-ms', 120_000);
const warmupMs = Math.max(60_000, minutes * 60_000 * 0.15);
// The supervisor with an inspector: heap after a full GC and a snapshot histogram, before the load and when quiet.
const inspect = argv.includes('--inspect');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (message: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`);

async function main(): Promise<void> {
  // Short: Chromium's singleton socket ends up ~75 characters below the server's TMPDIR, and a
  // Unix socket path has room for 107 (a longer TMPDIR fails every browser launch).
  const root = mkdtempSync(path.join(tmpdir(), 'msoak-'));
  const tmp = path.join(root, 't');
  const workspace = path.join(root, 'workspace');
  for (const dir of [tmp, workspace, path.join(root, 'xdg')]) mkdirSync(dir);
  const upstream = await startUpstream();
  const web = await startWeb();
  const specPath = path.join(root, 'openapi.json');
  writeFileSync(specPath, JSON.stringify(soakDescription()));
  const configPath = path.join(root, 'config.json');
  writeFileSync(configPath, JSON.stringify({
    http: { sessionIdleTimeoutMs: idleMs, heartbeatIntervalMs: 5_000, ...(connectedIdleMs >= 0 ? { connectedSessionIdleTimeoutMs: connectedIdleMs } : {}) },
    pools: { progressIntervalMs: 1_000 },
    shell: { sandbox: true, workspace, commandTimeoutMs: 4_000, maxOutputBytes: 1_000_000, workers: 2 },
    web: {
      search: { engineUrl: `${web.origin}/ddg`, rateLimit: 1, rateLimitIntervalMs: 2_000, timeoutMs: 15_000 },
      fetch: { allowPrivateNetwork: true, rateLimit: 200, rateLimitIntervalMs: 1_000, timeoutMs: 3_000 },
    },
    apis: [{ apiBaseUrl: upstream.origin, openApiSpec: specPath, specInputMethod: 'file', namespace: 'soak', requestTimeoutMs: 1_500 }],
  }, null, 2));

  const marker = `SOAK_RUN=${path.basename(root)}`;
  const serverLog = createWriteStream(path.join(root, 'server.log'));
  const server = spawn(process.execPath, [...(inspect ? ['--inspect=127.0.0.1:0'] : []), path.join(ROOT, 'dist', 'supervisor', 'cli', 'mcpvisor.js'), '--config', configPath, '--transport', 'http', '--host', '127.0.0.1', '--port', '0'], {
    env: { ...process.env, TMPDIR: tmp, XDG_CACHE_HOME: path.join(root, 'xdg'), SOAK_RUN: path.basename(root) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const levels = new Map<number, number>();
  let inspectorUrl: string | undefined;
  const mcpUrl = await new Promise<string>((resolve, reject) => {
    createInterface({ input: server.stderr! }).on('line', (line) => {
      serverLog.write(`${line}\n`);
      inspectorUrl ??= /Debugger listening on (ws:\S+)/.exec(line)?.[1];
      try {
        const entry = JSON.parse(line) as { level: number; msg: string; url?: string };
        levels.set(entry.level, (levels.get(entry.level) ?? 0) + 1);
        if (entry.msg === 'listening' && entry.url) resolve(entry.url);
      } catch {
        // Not a pino line.
      }
    });
    server.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening; see ${root}/server.log`)));
  });
  const baseUrl = new URL(mcpUrl).origin;
  const probe: Probe = { supervisorPid: server.pid!, baseUrl, marker, workspace, tmp };
  log(`server ${server.pid} at ${mcpUrl}; files in ${root}`);

  // Tools: the API's by their summary markers.
  const first = new Load({ mcpUrl, baseUrl, web: web.origin, api: {} as ApiTools, toolCount: 0 });
  const { client: lister } = await first.streamable();
  const { tools } = await lister.listTools();
  const api = Object.fromEntries((['get', 'post', 'status', 'slow', 'big'] as const).map((what) => [what, tools.find((tool) => tool.description?.includes(`SOAK:${what}`))?.name])) as ApiTools;
  if (Object.values(api).some((name) => !name)) throw new Error(`API tools not found: ${tools.map((tool) => tool.name).join(', ')}`);
  const load = new Load({ mcpUrl, baseUrl, web: web.origin, api, toolCount: tools.length });
  log(`${tools.length} tools; bringing Chromium up with a first search`);
  await load.search(lister, 0);
  await lister.close();
  const inspector = inspect && inspectorUrl ? await Inspector.connect(inspectorUrl) : undefined;
  const heap: { before?: number; quiet?: number; histogram?: Histogram; growth?: string } = {};
  if (inspector) {
    heap.before = await inspector.heapUsedAfterGc();
    heap.histogram = await inspector.histogram();
  }
  const before = await sample(probe);

  const started = Date.now();
  const until = started + minutes * 60_000;
  const samples: Timed[] = [];
  let stopSampling = false;
  const sampler = (async () => {
    while (!stopSampling) {
      const figures = await sample(probe);
      samples.push({ atMs: Date.now() - started, calls: load.tally.calls, figures });
      log(`${load.tally.calls} calls, ${load.tally.wrong} wrong; sessions ${figures['sessions (/health)']}, supervisor ${figures['supervisor rss MB']?.toFixed(0)} MB rss / ${figures['supervisor heap used MB']?.toFixed(1)} MB heap / ${figures['supervisor fds']} fds, chromium ${figures['chromium processes'] ?? 0} procs ${figures['chromium rss MB']?.toFixed(0) ?? 0} MB, commands ${figures['command processes'] ?? 0}, orphans ${figures['orphan processes']}, cgroups ${figures['shell cgroup dirs']}, tmp ${figures['temp entries (TMPDIR)']}`);
      for (let waited = 0; waited < sampleMs && !stopSampling; waited += 500) await sleep(500);
    }
  })();

  const kills: string[] = [];
  const killer = (async () => {
    // The api worker last: it lives longest, so its memory over time shows.
    const roles = ['worker:shell', 'worker:web', 'worker:openapi'];
    for (let k = 0; Date.now() + killEveryMs < until; k++) {
      await sleep(killEveryMs);
      const { readdirSync, readFileSync } = await import('node:fs');
      const candidates: number[] = [];
      for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
        try {
          const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
          if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== server.pid) continue;
          const argvOf = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
          const role = roleOf({ pid: Number(entry), ppid: server.pid!, argv: argvOf, rssBytes: 0, threads: 0, fds: 0 }, server.pid!);
          if (role.startsWith(roles[k % roles.length])) candidates.push(Number(entry));
        } catch {
          // Gone.
        }
      }
      const victim = candidates[Math.floor(Math.random() * candidates.length)];
      if (victim === undefined) continue;
      load.tally.lastKillAt = Date.now();
      process.kill(victim, 'SIGKILL');
      kills.push(`${roles[k % roles.length]} ${victim} at ${((Date.now() - started) / 60_000).toFixed(1)} min`);
      log(`killed ${kills[kills.length - 1]}`);
    }
  })();

  const searcher = (async () => {
    const { client } = await load.streamable();
    for (let n = 1; Date.now() < until; n++) {
      await load.search(client, n).catch(() => undefined);
      await sleep(15_000);
    }
    await client.close();
  })();

  await Promise.all([...Array.from({ length: users }, () => load.user(until)), searcher, killer]);
  const elapsedMin = (Date.now() - started) / 60_000;
  stopSampling = true;
  await sampler;
  const last = samples[samples.length - 1];

  // Quiet: every client gone; abandoned sessions must end by the idle policy.
  const quietMs = Math.max(idleMs, connectedIdleMs) + 40_000;
  log(`load stopped; ${load.leaked.length} clients left open; waiting ${(quietMs / 1000).toFixed(0)} s for the idle policy`);
  await sleep(quietMs);
  const quiet = await sample(probe);
  if (inspector) {
    heap.quiet = await inspector.heapUsedAfterGc();
    heap.growth = histogramGrowth(heap.histogram!, await inspector.histogram());
    inspector.close();
  }

  server.kill('SIGTERM');
  const exit = await new Promise<string>((resolve) => server.once('exit', (code, signal) => resolve(String(signal ?? code))));
  await sleep(1000);
  const afterStop = await sample({ ...probe, supervisorPid: -1 });
  await Promise.all(load.leaked.map((client) => client.close().catch(() => undefined)));
  await Promise.all([upstream.close(), web.close()]);

  const t = load.tally;
  const out: string[] = [];
  out.push('', `# soak: ${elapsedMin.toFixed(1)} min, ${users} users, ${t.calls} tool calls (${(t.calls / elapsedMin).toFixed(0)}/min), ${t.wrong} wrong answers, ${t.crashedByKill} WORKER_CRASHED/POOL_UNAVAILABLE right after a kill`);
  out.push(`kills: ${kills.join('; ') || 'none'}`);
  out.push(`server log lines by level: ${[...levels].map(([level, n]) => `${level}: ${n}`).join(', ')}; exit on SIGTERM: ${exit}`);
  out.push('', 'calls by kind (calls / wrong):');
  for (const [kind, entry] of [...t.byKind].sort()) {
    out.push(`  ${kind.padEnd(20)} ${String(entry.calls).padStart(7)} / ${entry.wrong}`);
    for (const example of entry.examples) out.push(`      ${example}`);
  }
  out.push('flows (count, failures):');
  for (const [name, count] of [...t.flows].sort()) out.push(`  ${name.padEnd(24)} ${String(count).padStart(6)}  ${t.flowFailures.get(name)?.count ?? 0}`);
  for (const [name, entry] of t.flowFailures) if (!t.flows.has(name) || entry.examples.length) out.push(`  ! ${name}: ${entry.count}: ${entry.examples.join(' | ')}`);
  out.push('', `## resources (warm-up ${(warmupMs / 60_000).toFixed(1)} min; baseline = first sample after it; ${samples.length} samples)`, report(samples, warmupMs));
  out.push('', '## before the load → quiet (clients gone, idle policy passed) → after SIGTERM');
  const keys = [...new Set([...Object.keys(before), ...Object.keys(quiet), ...Object.keys(last?.figures ?? {})])];
  const fmt = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '-' : Number.isInteger(v) ? String(v) : v.toFixed(1));
  for (const key of keys) out.push(`  ${key.padEnd(34)} ${fmt(before[key]).padStart(8)} → ${fmt(quiet[key]).padStart(8)} → ${fmt(afterStop[key]).padStart(8)}`);
  if (heap.growth) out.push('', `## supervisor heap after a full GC: ${heap.before!.toFixed(1)} MB before the load → ${heap.quiet!.toFixed(1)} MB quiet; kinds that grew most:`, heap.growth);
  process.stdout.write(`${out.join('\n')}\n`);
  writeFileSync(path.join(root, 'report.txt'), out.join('\n'));
  writeFileSync(path.join(root, 'samples.json'), JSON.stringify(samples));
  if (!argv.includes('--keep')) rmSync(path.join(root, 'workspace'), { recursive: true, force: true });
  log(`report and samples in ${root}`);
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    process.stderr.write(`${error.stack}\n`);
    process.exit(1);
  },
);
