import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findChromium } from '../../workers/web/browser';
import { descendants } from './processes';
import { tempDir } from './temp';

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

/** How a launch of faultyLaunches' executable fails. */
export type LaunchFault =
  /** A process that never answers on the DevTools pipe, with a child in its process group. */
  | 'never-answers'
  /** The real Chromium, stopped (SIGSTOP) as soon as it runs, before it has answered puppeteer. */
  | 'stopped-while-launching'
  /** Exits at once with status 1. */
  | 'exits-at-once'
  /** The real Chromium, started 8 s late: a cold launch on a loaded machine, and more. */
  | 'slow-start'
  /**
   * The real Chromium, each of whose renderers starts 7 s late (`--renderer-cmd-prefix`): a
   * browser that answers at once but opens pages slowly, as on a heavily loaded machine.
   */
  | 'slow-pages';

export interface FaultyLaunches {
  /** The executable to give the searcher. */
  executable: string;
  /** Makes the next `count` launches fail (default 1; 'slow-start': start late); the ones after start Chromium. */
  failNext(count?: number): void;
  /** The launches that failed so far: their first process (a process group leader) and profile. */
  failed(): Array<{ pid: number; profile: string }>;
  /** How many launches there were, failed or not. */
  launches(): number;
}

/**
 * A browser executable whose launches fail `how` while asked to (failNext), and start the real
 * Chromium otherwise. A script in a fresh folder, removed after the file's tests.
 */
export function faultyLaunches(how: LaunchFault): FaultyLaunches {
  const dir = tempDir('mcpvisor-faulty-launch-');
  const executable = path.join(dir, 'chromium');
  const fault = {
    'never-answers': ['sleep 1000 </dev/null >/dev/null 2>&1 &', 'exec sleep 1000'],
    'stopped-while-launching': [
      // `$$` is this shell, which exec turns into Chromium: stopped once its image is Chromium's
      // (Debian's /usr/bin/chromium is itself a script that execs the binary).
      '( while :; do case "$(readlink /proc/$$/exe)" in *chrom*) kill -STOP $$; exit;; esac; done ) </dev/null >/dev/null 2>&1 3>&- 4>&- &',
      `exec '${findChromium()}' "$@"`,
    ],
    'exits-at-once': ['exit 1'],
    'slow-start': ['sleep 8', `exec '${findChromium()}' "$@"`],
    'slow-pages': [`printf '#!/bin/sh\\nsleep 7\\nexec "$@"\\n' > '${dir}/slow-renderer'`, `chmod +x '${dir}/slow-renderer'`, `exec '${findChromium()}' --renderer-cmd-prefix='${dir}/slow-renderer' "$@"`],
  }[how];
  writeFileSync(
    executable,
    [
      '#!/bin/sh',
      'for arg; do case "$arg" in --user-data-dir=*) profile="${arg#--user-data-dir=}";; esac; done',
      `echo "$$" >> '${dir}/launches'`,
      `left=$(cat '${dir}/fail' 2>/dev/null || echo 0)`,
      `if [ "$left" -le 0 ]; then exec '${findChromium()}' "$@"; fi`,
      `echo $((left - 1)) > '${dir}/fail'`,
      `echo "$$ $profile" >> '${dir}/failed'`,
      ...fault,
      '',
    ].join('\n'),
  );
  chmodSync(executable, 0o755);
  const lines = (file: string) => (existsSync(path.join(dir, file)) ? readFileSync(path.join(dir, file), 'utf8').trim().split('\n') : []);
  return {
    executable,
    failNext: (count = 1) => writeFileSync(path.join(dir, 'fail'), String(count)),
    failed: () => lines('failed').map((line) => ({ pid: Number(line.split(' ')[0]), profile: line.slice(line.indexOf(' ') + 1) })),
    launches: () => lines('launches').length,
  };
}

/** Kills what is left of launches that failed (the old code left hung ones running), in the tests' cleanup. */
export function killFailed(launches: FaultyLaunches): void {
  for (const { pid } of launches.failed()) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Killed, as it should be.
    }
  }
}
