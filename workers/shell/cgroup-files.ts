import { readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

/** The file operations on one cgroup directory that command-cgroups.ts is made of. */

/** Waits between attempts to remove a cgroup whose killed processes are still exiting (ms). */
const REMOVE_RETRY_MS = [5, 20, 50, 100, 250, 500, 1000];
/** Rounds of kill in cgroup v1 (no cgroup.kill): pids.max is set to 0 first, so none can fork meanwhile. */
const KILL_ROUNDS = 5;

export function readPids(dir: string): number[] {
  try {
    return readFileSync(`${dir}/cgroup.procs`, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * SIGKILLs every process in `dir` (a cgroup); returns whether it held any. v2: `cgroup.kill`
 * (Linux 5.14), which the kernel does at once for the whole subtree. v1 (or an older v2): pids.max
 * set to 0 so that nothing in it can fork any more, then rounds of kill over `cgroup.procs` until
 * it lists nothing. An empty cgroup is only read, not written. Never throws.
 */
export function killCgroup(dir: string, version: 1 | 2): boolean {
  let pids = readPids(dir).filter((pid) => pid !== process.pid);
  if (pids.length === 0) return false;
  if (version === 2) {
    try {
      writeFileSync(`${dir}/cgroup.kill`, '1');
      return true;
    } catch {
      // No cgroup.kill before Linux 5.14: the rounds below.
    }
  }
  try {
    writeFileSync(`${dir}/pids.max`, '0');
  } catch {
    // No pids controller on this cgroup.
  }
  for (let round = 0; round < KILL_ROUNDS && pids.length > 0; round++) {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Exited meanwhile.
      }
    }
    pids = readPids(dir).filter((pid) => pid !== process.pid);
  }
  return true;
}

export function tryRmdir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}


/**
 * Removes cgroup directories (each a leaf, or emptied of children first), killing what is in
 * them before each attempt; retried while killed processes exit (EBUSY). Resolves whether all went.
 */
export async function removeCgroups(dirs: string[], version: 1 | 2, retryMs: readonly number[] = REMOVE_RETRY_MS): Promise<boolean> {
  let left = dirs;
  for (let attempt = 0; ; attempt++) {
    for (const dir of left) killCgroup(dir, version);
    left = left.filter((dir) => !tryRmdir(dir));
    if (left.length === 0) return true;
    if (attempt >= retryMs.length) return false;
    await delay(retryMs[attempt]);
  }
}


export function writeOptional(file: string, value: string): void {
  try {
    writeFileSync(file, value);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** `oom_kill` of memory.events (v2) or memory.oom_control (v1, Linux 4.13); 0 when unknown. */
export function oomKills(dir: string, version: 1 | 2): number {
  try {
    const text = readFileSync(`${dir}/${version === 2 ? 'memory.events' : 'memory.oom_control'}`, 'utf8');
    return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** `max` of pids.events (v1 and v2): forks the cgroup's pids.max refused; 0 when unknown. */
export function pidsMaxEvents(dir: string): number {
  try {
    return Number(/^max (\d+)$/m.exec(readFileSync(`${dir}/pids.events`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
