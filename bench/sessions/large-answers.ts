/**
 * What N concurrent large tool answers cost the supervisor, to clients that stopped reading:
 * Streamable HTTP (JSON answers: the client reads the headers, then nothing; `sse`: a client that
 * takes only SSE, each answer an event kept for resumes as well) and stdio (the
 * client reads nothing of stdout). Each transport runs twice on a fresh server in the same run:
 * with `pad` 0 (the baseline: the same calls, answers of a few bytes) and with `pad` bytes.
 * Printed: peak RSS (VmHWM) and peak heap (heapUsed + external, which counts Buffers, sampled every
 * 10 ms in the supervisor by a preload that workers skip), and the ratio of the added peak to the
 * answers' total bytes (1.0: each answer held once, the bare relay's floor).
 *
 *   npm run build && npx tsx bench/sessions/large-answers.ts [--calls 20] [--pad 8000000]
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bin, fixture } from '../../test/helpers/processes';
import { writeConfig } from '../../test/helpers/config';
import { startHttp } from '../../test/helpers/mcp';
import { initialize, stalledRequest } from '../../test/helpers/raw-sessions';
import { LOAD_HTTP } from '../../test/load/harness';

function arg(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}

const CALLS = arg('calls', 20);
const PAD = arg('pad', 8_000_000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Preloaded into the supervisor (workers have process.send and skip it): its peak memory, written to a file. */
const PRELOAD = `
if (!process.send && process.env.PEAK_FILE) {
  const fs = require('node:fs');
  let peak = 0;
  setInterval(() => {
    const m = process.memoryUsage();
    const heap = m.heapUsed + m.external;
    if (heap > peak) { peak = heap; fs.writeFileSync(process.env.PEAK_FILE, String(peak)); }
  }, 10).unref();
}`;

const MIB = 1024 * 1024;
/** `sse`: answers kept for resumes too (the stream and resumability bounds raised past the answers' size). */
function config(sse = false): string {
  return writeConfig({
    shell: { enabled: false },
    web: { enabled: false },
    customToolsets: [{ name: 'test', module: fixture('test-worker'), workers: 2, concurrency: Math.ceil(CALLS / 2), callTimeoutMs: 120_000 }],
    http: { ...LOAD_HTTP, maxSessions: 10_000, ...(sse ? { maxStreamBufferBytes: 64 * MIB, maxTotalStreamBufferBytes: 2048 * MIB, resumability: { maxBytes: 64 * MIB, maxTotalBytes: 2048 * MIB } } : {}) },
  });
}

function vmHwm(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

interface Peak {
  rss: number;
  heap: number;
}

function env(peakFile: string, preload: string): Record<string, string> {
  writeFileSync(peakFile, '0');
  return { PEAK_FILE: peakFile, NODE_OPTIONS: `--require ${preload}` };
}

const callBody = (id: number, pad: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 100, pad } } });

/** `sse`: the client accepts only SSE, so each answer is an event also kept for a resume. */
async function overHttp(pad: number, dir: string, preload: string, sse = false): Promise<Peak> {
  const peakFile = path.join(dir, `peak-http-${sse}-${pad}`);
  const server = await startHttp('mcpvisor', ['--config', config(sse)], env(peakFile, preload));
  try {
    const sessions: string[] = [];
    for (let i = 0; i < CALLS; i++) sessions.push(await initialize(server.mcpUrl, '2025-11-25'));
    await sleep(1000);
    const headers = (sessionId: string) => ({ 'content-type': 'application/json', accept: sse ? 'text/event-stream' : 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' });
    const stalled = await Promise.all(sessions.map((sessionId, i) => stalledRequest(server.mcpUrl, 'POST', headers(sessionId), callBody(i + 1, pad))));
    // An SSE stream's headers come before its answer: every answer must have come by now.
    await sleep(3000 + CALLS * 100);
    const peak = { rss: vmHwm(server.server.child.pid!), heap: Number(readFileSync(peakFile, 'utf8')) };
    const answers = await Promise.all(stalled.map((one) => one.readRest()));
    const whole = answers.filter((one) => one.complete && one.text.includes('slept 100 ms') && one.text.length > pad).length;
    if (whole !== CALLS) throw new Error(`only ${whole} of ${CALLS} HTTP answers came whole: ${JSON.stringify(answers[0]).slice(0, 300)}`);
    return peak;
  } finally {
    await server.stop();
  }
}

async function overStdio(pad: number, dir: string, preload: string): Promise<Peak> {
  const peakFile = path.join(dir, `peak-stdio-${pad}`);
  const child = spawn(process.execPath, [bin('mcpvisor'), '--config', config()], { env: { ...process.env, ...env(peakFile, preload) }, stdio: ['pipe', 'pipe', 'ignore'] });
  try {
    let text = '';
    const onData = (chunk: Buffer) => (text += chunk.toString());
    child.stdout!.on('data', onData);
    child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } })}\n`);
    for (let i = 0; i < 600 && !text.includes('"id":0'); i++) await sleep(50);
    if (!text.includes('"id":0')) throw new Error('stdio initialize was not answered');
    child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    await sleep(1000);
    // The client stops reading: answers wait in the supervisor (a pipe holds 64 KiB).
    child.stdout!.off('data', onData);
    child.stdout!.pause();
    text = '';
    for (let i = 1; i <= CALLS; i++) child.stdin!.write(`${callBody(i, pad)}\n`);
    await sleep(3000 + CALLS * 100);
    const peak = { rss: vmHwm(child.pid!), heap: Number(readFileSync(peakFile, 'utf8')) };
    child.stdout!.on('data', onData);
    child.stdout!.resume();
    for (let i = 0; i < 600 && (text.match(/slept 100 ms/g) ?? []).length < CALLS; i++) await sleep(50);
    const whole = (text.match(/slept 100 ms/g) ?? []).length;
    if (whole !== CALLS) throw new Error(`only ${whole} of ${CALLS} stdio answers came`);
    return peak;
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

async function main(): Promise<void> {
  const dir = path.join(os.tmpdir(), `large-answers-${process.pid}`);
  require('node:fs').mkdirSync(dir, { recursive: true });
  const preload = path.join(dir, 'peak.js');
  writeFileSync(preload, PRELOAD);
  const total = CALLS * PAD;
  console.log(`${CALLS} concurrent answers of ${mb(PAD)} (${mb(total)} in all), clients not reading`);
  const overSse = (pad: number, dir: string, preload: string) => overHttp(pad, dir, preload, true);
  for (const [name, run] of [...(process.argv.includes('--sse-only') ? [] : [['http', overHttp]] as const), ['sse', overSse], ['stdio', overStdio]] as const) {
    const base = await run(0, dir, preload);
    const large = await run(PAD, dir, preload);
    const rss = large.rss - base.rss;
    const heap = large.heap - base.heap;
    console.log(`${name.padEnd(5)} peak RSS +${mb(rss)} (${(rss / total).toFixed(2)}x the answers)  peak heap+external +${mb(heap)} (${(heap / total).toFixed(2)}x)  [baseline RSS ${mb(base.rss)}]`);
  }
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
