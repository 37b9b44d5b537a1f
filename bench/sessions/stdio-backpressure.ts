/**
 * A stdio client that writes calls one after another and never reads stdout: the supervisor's
 * peak RSS (VmHWM) with the stdio backpressure bound (http.maxStreamBufferBytes, default 4 MiB)
 * against the same run with the bound raised past every answer (1 GiB: the behaviour before
 * backpressure, every answer kept), and against tiny answers (the baseline), in the same run.
 * Printed: each peak, the RSS added over the baseline, its ratio bounded/unbounded, and how many
 * of the calls the server took before it stopped reading.
 *
 *   npm run build && npx tsx bench/sessions/stdio-backpressure.ts [--calls 100] [--pad 1000000]
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { bin, fixture, logEntries } from '../../test/helpers/processes';
import { writeConfig } from '../../test/helpers/config';

function arg(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}

const CALLS = arg('calls', 100);
const PAD = arg('pad', 1_000_000);
const MIB = 1024 * 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

function vmHwm(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

async function run(pad: number, maxStreamBufferBytes: number): Promise<{ rss: number; taken: number }> {
  const config = writeConfig({
    shell: { enabled: false },
    web: { enabled: false },
    customToolsets: [{ name: 'test', module: fixture('test-worker'), workers: 1, concurrency: 4, callTimeoutMs: 60_000 }],
    http: { maxStreamBufferBytes },
  });
  const child = spawn(process.execPath, [bin('mcpvisor'), '--debug', '--config', config], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // The pipe fills and the client's writes wait in its own stream: never awaited here.
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  try {
    let text = '';
    const onData = (chunk: Buffer) => (text += chunk.toString());
    child.stdout.on('data', onData);
    send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } });
    for (let i = 0; i < 600 && !text.includes('"id":0'); i++) await sleep(50);
    if (!text.includes('"id":0')) throw new Error('initialize was not answered');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await sleep(500);
    child.stdout.off('data', onData);
    child.stdout.pause();
    // One call at a time, each read on its own: a client that keeps sending while not reading.
    for (let id = 1; id <= CALLS; id++) {
      send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 0, pad } } });
      await sleep(20);
    }
    await sleep(2000);
    const taken = logEntries(stderr).filter((entry) => entry.msg === 'tool call').length;
    return { rss: vmHwm(child.pid!), taken };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}

async function main(): Promise<void> {
  console.log(`${CALLS} calls with answers of ${mb(PAD)} (${mb(CALLS * PAD)} in all), written one by one by a stdio client that never reads`);
  const base = await run(0, 4 * MIB);
  const bounded = await run(PAD, 4 * MIB);
  const unbounded = await run(PAD, 1024 * MIB);
  for (const [name, result] of [['baseline (tiny answers)', base], ['bound 4 MiB (default)', bounded], ['bound 1 GiB (as before)', unbounded]] as const) {
    console.log(`${name.padEnd(24)} peak RSS ${mb(result.rss)} (+${mb(result.rss - base.rss)})  calls taken ${result.taken} of ${CALLS}`);
  }
  console.log(`RSS added, bounded over unbounded: ${((bounded.rss - base.rss) / (unbounded.rss - base.rss)).toFixed(2)}x`);
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
