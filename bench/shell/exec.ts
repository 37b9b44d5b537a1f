/**
 * Shell toolset benchmark (issue 5). Run after a build: `npx tsx bench/shell/exec.ts`.
 *
 * 1. Floor: `child_process.spawn('/bin/sh', ['-c', 'true'])` awaited to 'close', 200 times one
 *    after another and 200 at concurrency 10, in this process.
 * 2. The same through `exec` of the real shell-mcp-server over stdio with the SDK client, sandbox
 *    off and on. Prints p50, p99, calls/s and the ratios to the floor measured in the same run.
 *    Targets: off p50 ≤ 1.2× floor and calls/s at concurrency 10 ≥ 0.86× floor; on p50 ≤ floor + 6 ms.
 *    Both again with `shell.commandCgroups: false`: what a cgroup per command costs (as root).
 * 3. `yes | head -c 50000000`: the cap holds, the pool worker's peak RSS (VmHWM), time to result.
 *    Targets: RSS ≤ 100 MB, result within 1 s.
 * 4. 200 concurrent `exec` calls from 20 Streamable HTTP sessions: all complete; then a timeout of
 *    `sh -c 'sleep 4242 & sleep 4243'` leaves 0 processes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { connectHttp, connectStdio, startHttp, type StdioConnection } from '../../test/helpers/mcp';
import { descendants } from '../../test/helpers/processes';

const N = 200;
const CONCURRENCY = 10;

interface Figures {
  p50: number;
  p99: number;
  perSecond: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Measures every runner in the same conditions: the sequential calls alternate between them
 * (one call each, in turn), and the concurrency-10 blocks alternate over three rounds (best kept),
 * so a busy machine slows all of them alike.
 */
async function measureAll(runners: Record<string, () => Promise<unknown>>): Promise<Record<string, Figures>> {
  const names = Object.keys(runners);
  for (const name of names) for (let i = 0; i < 10; i++) await runners[name](); // warm-up
  const times: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let i = 0; i < N; i++) {
    for (const name of names) {
      const start = performance.now();
      await runners[name]();
      times[name].push(performance.now() - start);
    }
  }
  const best: Record<string, number> = Object.fromEntries(names.map((name) => [name, 0]));
  for (let round = 0; round < 3; round++) {
    for (const name of names) {
      const start = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < N) {
            next++;
            await runners[name]();
          }
        }),
      );
      best[name] = Math.max(best[name], N / ((performance.now() - start) / 1000));
    }
  }
  return Object.fromEntries(
    names.map((name) => {
      const sorted = times[name].sort((a, b) => a - b);
      return [name, { p50: percentile(sorted, 50), p99: percentile(sorted, 99), perSecond: best[name] }];
    }),
  );
}

const bareSpawn = () =>
  new Promise<void>((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', 'true']);
    child.on('error', reject);
    child.on('close', () => resolve());
  });

const show = (name: string, f: Figures) => `${name.padEnd(22)} p50 ${f.p50.toFixed(2).padStart(7)} ms  p99 ${f.p99.toFixed(2).padStart(7)} ms  ${f.perSecond.toFixed(0).padStart(6)} calls/s (c=${CONCURRENCY})`;

async function execTrue(server: StdioConnection): Promise<void> {
  const result = (await server.client.callTool({ name: 'exec', arguments: { command: 'true' } })) as { structuredContent?: { exitCode?: number } };
  if (result.structuredContent?.exitCode !== 0) throw new Error(`exec true failed: ${JSON.stringify(result)}`);
}

function peakRss(pid: number): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
}

function workerPids(serverPid: number): number[] {
  return descendants(serverPid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('workers/shell/worker.js');
    } catch {
      return false;
    }
  });
}

function sleepers(): number {
  let count = 0;
  for (const pid of descendants(1)) {
    try {
      if (/sleep\x00424[23]/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))) count++;
    } catch {
      // gone
    }
  }
  return count;
}

async function main(): Promise<void> {
  const ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'bench-shell-')));
  try {
    const off = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE: 'false', SHELL_WORKSPACE: ws, COMMAND_TIMEOUT: '5000' });
    const on = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE: 'true', SHELL_WORKSPACE: ws, COMMAND_TIMEOUT: '5000' });
    // The same two without a cgroup per command: what the cgroups cost, where the server can make them.
    const noCgroups = path.join(ws, 'no-cgroups.json');
    writeFileSync(noCgroups, JSON.stringify({ shell: { commandCgroups: false } }));
    const offPlain = await connectStdio('shell-mcp-server', ['--config', noCgroups], { SANDBOX_MODE: 'false', SHELL_WORKSPACE: ws, COMMAND_TIMEOUT: '5000' });
    const onPlain = await connectStdio('shell-mcp-server', ['--config', noCgroups], { SANDBOX_MODE: 'true', SHELL_WORKSPACE: ws, COMMAND_TIMEOUT: '5000' });
    try {
      const figures = await measureAll({ floor: bareSpawn, off: () => execTrue(off), on: () => execTrue(on), offPlain: () => execTrue(offPlain), onPlain: () => execTrue(onPlain) });
      const floor = figures.floor;
      console.log(`200 × true, sequential calls interleaved, best of 3 rounds at concurrency ${CONCURRENCY}:`);
      console.log(show('floor (bare spawn)', floor));
      for (const [name, label] of [['off', 'exec, sandbox off'], ['on', 'exec, sandbox on']] as const) {
        const ours = figures[name];
        console.log(show(label, ours));
        console.log(
          `  ratios: p50 ${(ours.p50 / floor.p50).toFixed(2)}× floor (+${(ours.p50 - floor.p50).toFixed(2)} ms), ` +
            `calls/s ${(ours.perSecond / floor.perSecond).toFixed(2)}× floor`,
        );
      }
      for (const [name, plain, label] of [['off', 'offPlain', 'sandbox off'], ['on', 'onPlain', 'sandbox on']] as const) {
        const [ours, without] = [figures[name], figures[plain]];
        console.log(show(`  ${label}, no cgroups`, without));
        console.log(`  cgroup per command: p50 +${(ours.p50 - without.p50).toFixed(2)} ms, calls/s ${(ours.perSecond / without.perSecond).toFixed(2)}× (shell.commandCgroups: false)`);
      }
      for (let i = 0; i < 3; i++) {
        const start = performance.now();
        const big = (await off.client.callTool({ name: 'exec', arguments: { command: 'yes | head -c 50000000' } })) as { structuredContent: Record<string, unknown> };
        const ms = performance.now() - start;
        const rss = Math.max(...workerPids(off.pid()!).map(peakRss));
        console.log(
          `50 MB of output: ${ms.toFixed(0)} ms to result, truncated=${big.structuredContent.stdoutTruncated}, ` +
            `read ${big.structuredContent.stdoutBytes} bytes, reply ${(big.structuredContent.stdout as string).length} chars, ` +
            `pool workers' peak RSS ${(rss / 1024 / 1024).toFixed(1)} MB`,
        );
      }
    } finally {
      await off.close();
      await on.close();
      await offPlain.close();
      await onPlain.close();
    }

    const http = await startHttp('shell-mcp-server', [], { SANDBOX_MODE: 'false', SHELL_WORKSPACE: ws, COMMAND_TIMEOUT: '1000' });
    try {
      const sessions = await Promise.all(Array.from({ length: 20 }, (_, i) => connectHttp(http.mcpUrl, `bench-${i}`)));
      const start = performance.now();
      const results = await Promise.all(
        sessions.flatMap(({ client }, s) =>
          Array.from({ length: 10 }, async (_, i) => {
            const result = (await client.callTool({ name: 'exec', arguments: { command: `echo ${s}-${i}` } })) as { structuredContent?: { stdout?: string } };
            return result.structuredContent?.stdout === `${s}-${i}\n`;
          }),
        ),
      );
      const ms = performance.now() - start;
      console.log(`200 concurrent exec from 20 HTTP sessions: ${results.filter(Boolean).length}/200 correct in ${ms.toFixed(0)} ms`);
      const timedOut = (await sessions[0].client.callTool({ name: 'exec', arguments: { command: "sh -c 'sleep 4242 & sleep 4243'" } })) as { structuredContent?: { timedOut?: boolean } };
      await new Promise((resolve) => setTimeout(resolve, 200));
      console.log(`after a 1 s timeout of sh -c 'sleep 4242 & sleep 4243': timedOut=${timedOut.structuredContent?.timedOut}, ${sleepers()} processes left`);
      await Promise.all(sessions.map(({ client }) => client.close()));
    } finally {
      await http.stop();
    }
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
