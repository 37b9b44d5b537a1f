/**
 * A command's output of one shape at two sizes, n and 8n, through `exec` of the real
 * shell-mcp-server over stdio with the SDK client (sandbox off): the larger output's time over 8
 * times the smaller's, and the peak RSS of the server's process tree. A ratio near 1 is linear;
 * a cost that grows with the square of the output shows ~8 (the reader's floor, the command's own
 * time, counts in both). Each time is the best of `rounds`. Target: <= 2 for every shape. Found
 * this way: output written a byte at a time was kept as one Buffer per write and dropped with
 * `Array#shift`, so 8 MB of it took 18 s (3.6x its 1 MB time per byte) and 160 MB of RSS.
 * Run after a build:
 *   npx tsx bench/shell/output-scaling.ts [rounds, default 2] [only the shapes whose name holds this]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connectStdio, type StdioConnection } from '../../test/helpers/mcp';
import { descendants } from '../../test/helpers/processes';

/** Each shape: its n, and the command that writes output of that shape at size `n`. */
const SHAPES: Record<string, { n: number; command: (n: number) => string }> = {
  'one-byte writes': { n: 1_000_000, command: (n) => `perl -e 'syswrite STDOUT, "x" for 1..${n}'` },
  'short lines': { n: 200_000, command: (n) => `seq ${n}` },
  'one long line': { n: 1_000_000, command: (n) => `head -c ${n} /dev/zero | tr '\\0' x` },
  'NUL bytes (6 bytes of JSON each)': { n: 1_000_000, command: (n) => `head -c ${n} /dev/zero` },
  'invalid UTF-8': { n: 1_000_000, command: (n) => `perl -e 'print "a\\xff" x ${n / 2}'` },
  'ANSI colour escapes': { n: 100_000, command: (n) => `perl -e 'print "\\e[31mx\\e[0m" x ${n}'` },
};

/** The resident memory of the server's shell workers, summed, sampled every 20 ms until `stop()`: its peak. */
function workersRss(serverPid: number): { stop(): number } {
  const workers = descendants(serverPid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('workers/shell/worker.js');
    } catch {
      return false;
    }
  });
  const rss = (pid: number) => {
    try {
      return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    } catch {
      return 0;
    }
  };
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, workers.reduce((sum, pid) => sum + rss(pid), 0))), 20);
  return { stop: () => (clearInterval(timer), peak) };
}

async function best(connection: StdioConnection, command: string, rounds: number): Promise<{ ms: number; rssBytes: number }> {
  let ms = Infinity;
  let rssBytes = 0;
  for (let round = 0; round < rounds; round++) {
    const rss = workersRss(connection.pid()!);
    const started = performance.now();
    const result = (await connection.client.callTool({ name: 'exec', arguments: { command } }, undefined, { timeout: 120_000 })) as { isError?: boolean };
    ms = Math.min(ms, performance.now() - started);
    rssBytes = Math.max(rssBytes, rss.stop());
    if (result.isError) throw new Error(`${command} failed`);
  }
  return { ms, rssBytes };
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 2);
  const workspace = mkdtempSync(path.join(os.tmpdir(), 'mcpvisor-output-scaling-'));
  const connection = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE: 'false', SHELL_WORKSPACE: workspace, COMMAND_TIMEOUT: '120000' });
  try {
    await best(connection, 'true', 3); // warm-up
    let worst = 0;
    for (const [name, shape] of Object.entries(SHAPES)) {
      if (process.argv[3] && !name.includes(process.argv[3])) continue;
      const small = await best(connection, shape.command(shape.n), rounds);
      const large = await best(connection, shape.command(8 * shape.n), rounds);
      const ratio = large.ms / (8 * small.ms);
      worst = Math.max(worst, ratio);
      const mb = (bytes: number) => (bytes / 1024 ** 2).toFixed(0);
      console.log(`${name}: n=${shape.n} ${small.ms.toFixed(0)} ms, 8n ${large.ms.toFixed(0)} ms; 8n / (8 x n) = ${ratio.toFixed(2)}; workers' peak RSS ${mb(small.rssBytes)} MB, ${mb(large.rssBytes)} MB`);
    }
    console.log(`worst shape: ${worst.toFixed(2)} (target <= 2)`);
  } finally {
    await connection.close();
    rmSync(workspace, { recursive: true, force: true });
  }
}

void main();
