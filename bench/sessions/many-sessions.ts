/**
 * Many sessions at once over HTTP, as an operator with many assistants connected sees them: the
 * supervisor's RSS per session (Streamable HTTP initialised and idle, with and without a GET
 * stream, and legacy SSE), next to a bare SDK server's (bench/sessions/baseline-server.ts) in the
 * same run; then thousands of sessions reaped at once by the idle timeout (how long, the
 * event-loop delay meanwhile, RSS after), churn (sessions opened and DELETEd or abandoned), and
 * streams whose clients stop reading (what waits for them against http.maxTotalStreamBufferBytes).
 *
 *   npm run build && npx tsx bench/sessions/many-sessions.ts [--sessions 1000] [--churn 20000] [--stalled 100]
 *
 * The load generator speaks raw HTTP (test/helpers/raw-sessions.ts): an SDK client per session
 * costs the generator more than the server. Everything is on 127.0.0.1; every loop is bounded.
 * RSS per session: (VmRSS with N more sessions - VmRSS before) / N, each 6 s after the last
 * request (past the 5 s keep-alive, so only streams stay open), of the server process only.
 */
import { fixture } from '../../test/helpers/processes';
import { initialize, end, openLegacy, openStream, stalledRequest, type OpenStream, type StalledResponse } from '../../test/helpers/raw-sessions';
import { kb, pooled, rssOf, startServer, LOAD_HTTP } from '../../test/load/harness';
import { startBaselineServer } from './baseline';

function arg(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const settle = () => sleep(6000);
const IDLE_MS = 8000;

interface Target {
  mcpUrl: string;
  baseUrl: string;
  pid: number;
  legacy: boolean;
  stop(): Promise<unknown>;
}

async function startBaseline(): Promise<Target> {
  const baseline = await startBaselineServer();
  return { mcpUrl: `${baseline.baseUrl}/mcp`, baseUrl: baseline.baseUrl, pid: baseline.pid, legacy: false, stop: baseline.stop };
}

async function startMcpvisor(http: Record<string, unknown> = {}): Promise<Target> {
  const server = await startServer({
    shell: { enabled: false },
    web: { enabled: false },
    customToolsets: [{ name: 'test', module: fixture('test-worker'), workers: 1, concurrency: 16 }],
    http: { ...LOAD_HTTP, maxSessions: 100_000, ...http },
    // The stalled readers' 8 MiB answers: over pools.maxResultBytes' default, which would refuse them.
    pools: { maxResultBytes: 16 * 1024 * 1024 },
  });
  return { mcpUrl: server.mcpUrl, baseUrl: server.baseUrl, pid: server.server.child.pid!, legacy: true, stop: () => server.stop() };
}

async function metric(target: Target, name: string): Promise<number> {
  const text = await (await fetch(`${target.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.split(' ').at(-1));
}

/** RSS per session: initialised only, then each with a GET stream, then (mcpvisor) legacy SSE. */
async function perSession(target: Target, n: number): Promise<{ init: number; stream: number; legacy: number }> {
  const warm: string[] = [];
  await pooled(100, 20, async (i) => (warm[i] = await initialize(target.mcpUrl)));
  await settle();
  const r0 = rssOf(target.pid);
  const ids: string[] = [];
  await pooled(n, 50, async (i) => (ids[i] = await initialize(target.mcpUrl)));
  await settle();
  const r1 = rssOf(target.pid);
  const streams: OpenStream[] = [];
  await pooled(n, 50, async (i) => void streams.push(await openStream(target.mcpUrl, { 'mcp-session-id': ids[i], 'mcp-protocol-version': '2025-06-18' })));
  await settle();
  const r2 = rssOf(target.pid);
  let legacy = NaN;
  const legacyStreams: OpenStream[] = [];
  if (target.legacy) {
    await pooled(n, 50, async () => void legacyStreams.push((await openLegacy(target.baseUrl)).stream));
    await settle();
    legacy = (rssOf(target.pid) - r2) / n;
  }
  for (const stream of [...streams, ...legacyStreams]) stream.close();
  await pooled(ids.length + warm.length, 50, (i) => end(target.mcpUrl, i < ids.length ? ids[i] : warm[i - ids.length]).catch(() => 0));
  return { init: (r1 - r0) / n, stream: (r2 - r1) / n, legacy };
}

/** N idle sessions closed by the idle timeout together: time to none, worst event-loop delay, RSS. */
async function reaping(target: Target, n: number): Promise<string> {
  const r0 = rssOf(target.pid);
  await pooled(n, 50, (i) => initialize(target.mcpUrl).then(() => i));
  const opened = performance.now();
  const r1 = rssOf(target.pid);
  await metric(target, 'nodejs_eventloop_lag_max_seconds'); // resets the window
  let worstLag = 0;
  let left = n;
  for (let i = 0; i < 60 && left > 0; i++) {
    await sleep(500);
    worstLag = Math.max(worstLag, await metric(target, 'nodejs_eventloop_lag_max_seconds'));
    left = await metric(target, 'mcpvisor_sessions');
  }
  const gone = performance.now() - opened;
  await settle();
  return `reaping ${n} idle sessions (sessionIdleTimeoutMs ${IDLE_MS}): ${left} left after ${(gone / 1000).toFixed(1)} s; worst event-loop delay ${(worstLag * 1000).toFixed(0)} ms; RSS ${kb(r0)} -> ${kb(r1)} open -> ${kb(rssOf(target.pid))} after (${(rssOf(target.pid) / r0).toFixed(2)}x before)`;
}

/** M sessions opened, half DELETEd and half abandoned, 50 at a time; the count, then RSS once reaped. */
async function churn(target: Target, m: number): Promise<string> {
  const r0 = rssOf(target.pid);
  const started = performance.now();
  let deleted = 0;
  await pooled(m, 50, async (i) => {
    const id = await initialize(target.mcpUrl);
    if (i % 2 === 0 && (await end(target.mcpUrl, id)) === 200) deleted++;
  });
  const seconds = (performance.now() - started) / 1000;
  const counted = await metric(target, 'mcpvisor_sessions');
  let left = counted;
  for (let i = 0; i < 60 && left > 0; i++) {
    await sleep(500);
    left = await metric(target, 'mcpvisor_sessions');
  }
  await settle();
  return `churn: ${m} sessions in ${seconds.toFixed(1)} s (${(m / seconds).toFixed(0)}/s), ${deleted} DELETEd; mcpvisor_sessions ${counted} at the end (at most ${m - deleted} abandoned, less those already reaped), ${left} once reaped; RSS ${kb(r0)} -> ${kb(rssOf(target.pid))} (${(rssOf(target.pid) / r0).toFixed(2)}x)`;
}

/** K clients that stop reading an 8 MiB answer each: what waits, against the total bound. */
async function stalled(target: Target, k: number, maxTotal: number): Promise<string> {
  const r0 = rssOf(target.pid);
  const responses: StalledResponse[] = [];
  await pooled(k, 10, async () => {
    const id = await initialize(target.mcpUrl);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 0, pad: 8 << 20 } } });
    responses.push(await stalledRequest(target.mcpUrl, 'POST', { 'content-type': 'application/json', accept: 'text/event-stream', 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' }, body));
  });
  for (let i = 0; i < 120; i++) {
    if ((await (await fetch(`${target.baseUrl}/health`)).json() as { inFlightCalls: number }).inFlightCalls === 0) break;
    await sleep(250);
  }
  const waiting = await metric(target, 'mcpvisor_http_stream_waiting_bytes');
  const cut = await metric(target, 'mcpvisor_http_streams_cut_total{reason="total"}');
  const cutAlone = await metric(target, 'mcpvisor_http_streams_cut_total{reason="stream"}');
  const r1 = rssOf(target.pid);
  for (const response of responses) response.res.destroy();
  return `stalled readers: ${k} streams of 8 MiB answers: ${kb(waiting)} waiting (bound ${kb(maxTotal)}, ${(waiting / maxTotal).toFixed(2)}x), ${cut || 0} streams cut by the total bound, ${cutAlone || 0} by their own; RSS +${kb(r1 - r0)} (the answers passing through included)`;
}

async function main(): Promise<void> {
  const n = arg('sessions', 1000);
  const m = arg('churn', 20_000);
  const k = arg('stalled', 100);
  const out: string[] = [];
  const figures = new Map<string, { init: number; stream: number; legacy: number }>();
  for (const [name, start] of [['baseline', startBaseline], ['mcpvisor', () => startMcpvisor()]] as const) {
    const target = await start();
    try {
      figures.set(name, await perSession(target, n));
    } finally {
      await target.stop();
    }
  }
  const base = figures.get('baseline')!;
  const mv = figures.get('mcpvisor')!;
  out.push(`RSS per session, ${n} sessions: initialised ${kb(mv.init)} (baseline ${kb(base.init)}, ${(mv.init / base.init).toFixed(2)}x); a GET stream adds ${kb(mv.stream)} (baseline ${kb(base.stream)}, ${(mv.stream / base.stream).toFixed(2)}x); legacy SSE ${kb(mv.legacy)}`);
  const maxTotal = 64 << 20;
  // Each stream's own bound above what one answer leaves waiting: the total one is what is measured.
  const target = await startMcpvisor({ sessionIdleTimeoutMs: IDLE_MS, maxTotalStreamBufferBytes: maxTotal, maxStreamBufferBytes: 16 << 20 });
  try {
    out.push(await reaping(target, n));
    out.push(await churn(target, m));
    out.push(await stalled(target, k, maxTotal));
  } finally {
    await target.stop();
  }
  process.stdout.write(`${out.join('\n')}\n`);
  process.exit(0);
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
