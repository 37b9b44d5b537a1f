import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from './temp';

export const ROOT = path.resolve(__dirname, '..', '..');

/** Absolute path of a built entry point, e.g. `bin('mcpvisor')`. */
export function bin(command: string): string {
  return path.join(ROOT, 'dist', 'supervisor', 'cli', `${command}.js`);
}

/** Absolute path of a built test fixture, e.g. `fixture('test-worker')`. */
export function fixture(name: string): string {
  return path.join(ROOT, 'dist', 'test', 'fixtures', `${name}.js`);
}

export interface Spawned {
  child: ChildProcess;
  /** Everything written to stderr so far (pino JSON lines). */
  stderr(): string;
  /** Resolves with the first stderr log entry for which `match` is true. */
  waitForLog(match: (entry: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code or signal. */
  stop(graceMs?: number): Promise<number | string | null>;
  exited: Promise<number | string | null>;
}

/** Starts a built entry point with stdio piped; stderr is collected and parsed as pino lines. */
export function spawnBin(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Spawned {
  const child = spawn(process.execPath, [bin(command), ...args], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  const listeners = new Set<() => void>();
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    for (const listener of listeners) listener();
  });
  const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  const entries = () => logEntries(stderr);
  return {
    child,
    stderr: () => stderr,
    exited,
    waitForLog(match, timeoutMs = 20000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = entries().find(match);
          if (found) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`no matching log line within ${timeoutMs} ms; stderr:\n${stderr.slice(-3000)}`));
        }, timeoutMs);
        listeners.add(check);
        void exited.then(() => {
          if (listeners.has(check)) {
            listeners.delete(check);
            clearTimeout(timer);
            reject(new Error(`process exited before the log line; stderr:\n${stderr.slice(-3000)}`));
          }
        });
        check();
      });
    },
    async stop(graceMs = 5000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/** Whether a process id is alive (zombies count as gone). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Every descendant pid of `pid` (children, grandchildren, …) from /proc. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.split(') ')[1].split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/** Polls `check` every 20 ms until it is true or `timeoutMs` passes (bounded; for process state). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

/**
 * Environment for spawned servers with a temporary XDG_CACHE_HOME, removed after the calling
 * file's tests: api workers cache compiled descriptions there, never in the user's cache.
 */
export function tempCacheEnv(): { XDG_CACHE_HOME: string } {
  return { XDG_CACHE_HOME: tempDir('mcpvisor-xdg-') };
}

/** A server's stderr as its JSON log entries (pino lines); other lines are left out. */
export function logEntries(text: string): Array<Record<string, unknown>> {
  return text.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}
