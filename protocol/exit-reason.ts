import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * The kernel's count of processes its OOM killer ended (any cgroup, or the whole machine) when a
 * worker was forked, kept on its ChildProcess under a registered symbol: the fork
 * (supervisor/pools/spare-worker.ts) runs outside the command bundles, with a copy of this module
 * of its own, so a module-level map was not the one the channel read.
 */
const OOM_KILLS_AT_FORK = Symbol.for('mcpvisor.oomKillsAtFork');
type Watched = ChildProcess & { [OOM_KILLS_AT_FORK]?: number };

/** /proc/vmstat's `oom_kill` (Linux 4.13 and later); undefined elsewhere. */
function oomKills(): number | undefined {
  try {
    const match = /^oom_kill (\d+)$/m.exec(readFileSync('/proc/vmstat', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Remembers the kernel's OOM kill count as `child` starts, for exitReason. */
export function watchOomKills(child: ChildProcess): void {
  const count = oomKills();
  if (count !== undefined) (child as Watched)[OOM_KILLS_AT_FORK] = count;
}

/**
 * How a worker ended, for its calls, its pool's `lastError` and the log: `exit code 1`,
 * `signal SIGSEGV`, or, for a SIGKILL while the kernel's OOM killer ended a process, `signal
 * SIGKILL: killed by the kernel, out of memory (…)`.
 */
export function exitReason(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `signal ${signal}${outOfMemoryNote(child, signal)}` : `exit code ${code}`;
}

/**
 * `: killed by the kernel, out of memory (…)` when `child` ended by SIGKILL while the kernel's OOM
 * killer ended a process; else ''. A SIGKILL said nothing more, and the kernel sends it to the
 * largest process of a cgroup at its memory limit (or of the machine) without a word to anyone:
 * the worker looked killed by a person. Decision: the count is the machine's, so another process
 * killed at the same moment would be taken for it; "most likely" says so.
 */
export function outOfMemoryNote(child: ChildProcess, signal: NodeJS.Signals | null): string {
  const before = (child as Watched)[OOM_KILLS_AT_FORK];
  const now = signal === 'SIGKILL' && before !== undefined ? oomKills() : undefined;
  if (now === undefined || before === undefined || now <= before) return '';
  return `: killed by the kernel, out of memory (most likely: its OOM killer ended ${now - before} process(es) meanwhile, /proc/vmstat oom_kill; raise the memory limit of the server's cgroup or run fewer workers)`;
}
