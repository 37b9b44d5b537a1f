import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { descendants } from './processes';

/** Chromium processes this test process started: the browser itself, or its renderers. */
export function chromium(kind: 'browser' | 'renderer'): number[] {
  return descendants(process.pid).filter((pid) => {
    let args: string[];
    try {
      // Chromium's zygote children rewrite their command line as one space-separated string.
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/);
    } catch {
      return false;
    }
    if (!/chrom/.test(args[0] ?? '')) return false;
    const type = args.find((arg) => arg.startsWith('--type='));
    return kind === 'browser' ? type === undefined : type === '--type=renderer';
  });
}

/** The profile directory a Chromium browser process was started with. */
export function profileOf(pid: number): string | undefined {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').find((arg) => arg.startsWith('--user-data-dir='))?.slice('--user-data-dir='.length);
}

/** The browser profile directories this test process has now (browser.ts's freshProfileDir). */
export function profileDirs(): string[] {
  const prefix = `mcpvisor-chromium-${process.pid}-`;
  return readdirSync(tmpdir())
    .filter((name) => name.startsWith(prefix))
    .map((name) => path.join(tmpdir(), name));
}

/** The live (not zombie) processes of a process group, from /proc. */
export function processGroup(pgid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // `pid (comm) state ppid pgrp …`: comm may hold spaces and parentheses.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') found.push(Number(entry));
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}

/**
 * Asserts that the browser `hung` (SIGSTOPped, its profile `profile`) was replaced: killed, its
 * profile removed, one browser left, and the searcher's second launch counted.
 */
export function expectReplaced(searcher: { stats(): Record<string, unknown> }, hung: number, profile: string | undefined): void {
  expect(chromium('browser')).not.toContain(hung);
  expect(chromium('browser')).toHaveLength(1);
  expect(profile !== undefined && existsSync(profile)).toBe(false);
  expect(searcher.stats()).toMatchObject({ launches: 2 });
}

/** Lets a stopped browser run again, if it is still there, then closes the searcher. */
export async function resumeAndClose(searcher: { close(): Promise<void> }, hung: number): Promise<void> {
  try {
    if (hung) process.kill(hung, 'SIGCONT');
  } catch {
    // Killed, as it should be.
  }
  await searcher.close();
}
