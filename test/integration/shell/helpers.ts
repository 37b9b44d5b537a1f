import { readdirSync, readFileSync } from 'node:fs';
import { descendants } from '../../helpers/processes';
import type { StdioConnection } from '../../helpers/mcp';

/** Pids of live processes whose command line contains `text` (zombies excluded). */
export function processesMatching(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (cmdline.includes(text) && state !== 'Z') found.push(Number(entry));
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}

/** The shell pool workers under a server process. */
export function shellWorkerPids(serverPid: number): number[] {
  return descendants(serverPid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('workers/shell/worker.js');
    } catch {
      return false;
    }
  });
}

/** Peak resident set size of a process in bytes (VmHWM). */
export function peakRssBytes(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/** Calls a tool and returns the raw result (typed loosely, as tests read it). */
export async function call(connection: StdioConnection, name: string, args: Record<string, unknown> = {}, options: { signal?: AbortSignal; timeout?: number } = {}) {
  return (await connection.client.callTool({ name, arguments: args }, undefined, options)) as {
    content: Array<{ type: string; text?: string }>;
    structuredContent?: Record<string, any>;
    isError?: boolean;
    _meta?: Record<string, unknown>;
  };
}
