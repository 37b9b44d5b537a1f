import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import path from 'node:path';

/** One process as /proc shows it. */
export interface Proc {
  pid: number;
  ppid: number;
  argv: string[];
  rssBytes: number;
  threads: number;
  fds: number;
}

function readProc(pid: number): Proc | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (rest[0] === 'Z') return undefined;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    let fds = 0;
    try {
      fds = readdirSync(`/proc/${pid}/fd`).length;
    } catch {
      // Gone while we looked.
    }
    return {
      pid,
      ppid: Number(rest[1]),
      // Chromium's zygote children rewrite their command line as one space-separated string.
      argv: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/).filter(Boolean),
      rssBytes: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024,
      threads: Number(/Threads:\s+(\d+)/.exec(status)?.[1] ?? 0),
      fds,
    };
  } catch {
    return undefined;
  }
}

function allPids(): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number);
}

/**
 * Every live process, each one's children, and the tree under `rootPid` (itself included) by
 * parent links; the tree is empty when it is gone.
 */
export function processTree(rootPid: number): { procs: Map<number, Proc>; children: Map<number, number[]>; tree: Set<number> } {
  const procs = new Map<number, Proc>();
  for (const pid of allPids()) {
    const proc = readProc(pid);
    if (proc) procs.set(pid, proc);
  }
  const children = new Map<number, number[]>();
  for (const proc of procs.values()) children.set(proc.ppid, [...(children.get(proc.ppid) ?? []), proc.pid]);
  const tree = new Set<number>();
  const walk = (pid: number) => {
    tree.add(pid);
    for (const child of children.get(pid) ?? []) walk(child);
  };
  if (procs.has(rootPid)) walk(rootPid);
  return { procs, children, tree };
}

/** Whether a process belongs to this run though it is outside the tree: our marker in its environment, or its cwd in the workspace. */
function markedAsOurs(pid: number, marker: string, workspace: string): boolean {
  try {
    if (readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(marker)) return true;
  } catch {
    // Gone, or not ours to read.
  }
  try {
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    return cwd === workspace || cwd.startsWith(`${workspace}/`);
  } catch {
    return false;
  }
}

/** The role of a process of the server's tree, by its command line. */
export function roleOf(proc: Proc, supervisorPid: number): string {
  if (proc.pid === supervisorPid) return 'supervisor';
  if (/chrom/i.test(path.basename(proc.argv[0] ?? ''))) return 'chromium';
  const script = proc.argv.find((arg) => /dist\/.*\.js$/.test(arg));
  if (script && /node/.test(path.basename(proc.argv[0] ?? ''))) {
    const match = /workers\/(\w+)\/([\w-]+)\.js$/.exec(script);
    return match ? `worker:${match[1]}/${match[2]}` : `node:${path.basename(script)}`;
  }
  return 'command';
}

/** Entries under `dir`, its subdirectories' included (symlinks not followed), up to `limit`. */
export function countTree(dir: string, limit = 200_000): number {
  let count = 0;
  const stack = [dir];
  while (stack.length > 0 && count < limit) {
    const current = stack.pop()!;
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      count++;
      if (entry.isDirectory()) stack.push(path.join(current, entry.name));
    }
  }
  return count;
}

/** Cgroup directories (the worker's own and each command's) of shell workers ever seen in the tree; ours are in the same cgroups as this process. */
function countCgroups(workerPids: Set<number>): number {
  let own: string[];
  try {
    own = readFileSync(`/proc/${process.pid}/cgroup`, 'utf8').split('\n');
  } catch {
    return Number.NaN;
  }
  const roots: string[] = [];
  for (const line of own) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    for (const controller of m[1].split(',')) {
      if (controller === 'pids' || controller === 'memory') roots.push(`/sys/fs/cgroup/${controller}${m[2] === '/' ? '' : m[2]}`);
    }
    if (m[1] === '') roots.push(`/sys/fs/cgroup/unified${m[2] === '/' ? '' : m[2]}`);
  }
  let count = 0;
  for (const root of roots) {
    if (!existsSync(root)) continue;
    for (const name of readdirSync(root)) {
      const m = /^mcpvisor-shell-(\d+)-\d+$/.exec(name);
      if (!m || !workerPids.has(Number(m[1]))) continue;
      count++;
      try {
        count += readdirSync(path.join(root, name)).filter((entry) => statSync(path.join(root, name, entry)).isDirectory()).length;
      } catch {
        // Removed while we looked.
      }
    }
  }
  return count;
}

export interface Probe {
  supervisorPid: number;
  baseUrl: string;
  /** `SOAK_RUN=<id>`, set in the server's environment. */
  marker: string;
  workspace: string;
  tmp: string;
}

/** Every figure of one sample, by resource name. */
export type Sample = Record<string, number>;

const seenWorkers = new Set<number>();

async function getJson(url: string): Promise<Record<string, unknown> | undefined> {
  try {
    return (await (await fetch(url, { signal: AbortSignal.timeout(5000) })).json()) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

async function getMetrics(url: string): Promise<Map<string, number>> {
  const figures = new Map<string, number>();
  try {
    const text = await (await fetch(url, { signal: AbortSignal.timeout(5000) })).text();
    for (const line of text.split('\n')) {
      const m = /^(nodejs_heap_size_used_bytes|nodejs_active_handles_total|nodejs_active_requests_total|nodejs_active_resources_total|nodejs_external_memory_bytes)\s+([\d.e+]+)/.exec(line);
      if (m) figures.set(m[1], Number(m[2]));
    }
  } catch {
    // Counted as missing.
  }
  return figures;
}

/** Takes one sample of the server's processes, cgroups, temp files and sessions. */
export async function sample(probe: Probe): Promise<Sample> {
  const { procs, children, tree } = processTree(probe.supervisorPid);
  const out: Sample = {};
  const add = (key: string, value: number) => (out[key] = (out[key] ?? 0) + value);
  for (const pid of tree) {
    const proc = procs.get(pid)!;
    const role = roleOf(proc, probe.supervisorPid);
    if (role.startsWith('worker:shell')) seenWorkers.add(pid);
    if (role === 'command') {
      add('command processes', 1);
      continue;
    }
    add(`${role} processes`, 1);
    add(`${role} rss MB`, proc.rssBytes / 1e6);
    add(`${role} fds`, proc.fds);
    add(`${role} threads`, proc.threads);
    if (role !== 'chromium') add(`${role} children`, (children.get(pid) ?? []).length);
  }
  delete out['supervisor processes'];
  let orphans = 0;
  for (const pid of procs.keys()) if (!tree.has(pid) && pid !== process.pid && markedAsOurs(pid, probe.marker, probe.workspace)) orphans++;
  out['orphan processes'] = orphans;
  out['shell cgroup dirs'] = countCgroups(seenWorkers);
  out['temp entries (TMPDIR)'] = countTree(probe.tmp);
  out['workspace entries'] = countTree(probe.workspace);
  out['/dev/shm entries (machine)'] = countTree('/dev/shm');
  const health = await getJson(`${probe.baseUrl}/health`);
  out['sessions (/health)'] = Number(health?.sessions ?? Number.NaN);
  out['in-flight calls (/health)'] = Number(health?.inFlightCalls ?? Number.NaN);
  const metrics = await getMetrics(`${probe.baseUrl}/metrics`);
  out['supervisor heap used MB'] = (metrics.get('nodejs_heap_size_used_bytes') ?? Number.NaN) / 1e6;
  out['supervisor external MB'] = (metrics.get('nodejs_external_memory_bytes') ?? Number.NaN) / 1e6;
  out['supervisor active handles'] = metrics.get('nodejs_active_handles_total') ?? Number.NaN;
  out['supervisor active resources'] = metrics.get('nodejs_active_resources_total') ?? Number.NaN;
  return out;
}

/** Least-squares slope of y over x, and the correlation coefficient. */
function fit(xs: number[], ys: number[]): { slope: number; r: number } {
  const n = xs.length;
  if (n < 3) return { slope: Number.NaN, r: Number.NaN };
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
    syy += (ys[i] - my) ** 2;
  }
  return { slope: sxx === 0 ? 0 : sxy / sxx, r: sxx === 0 || syy === 0 ? 0 : sxy / Math.sqrt(sxx * syy) };
}

export interface Timed {
  atMs: number;
  calls: number;
  figures: Sample;
}

/**
 * The table: each resource at the baseline (first sample after warm-up) and at the end, its
 * growth per 1,000 calls and per hour (least squares over the samples after warm-up), and a flag
 * where it grows steadily: correlation with time of at least 0.8 and a rise from baseline to end
 * of more than 10 % (at least 2 for counts, 5 MB for memory).
 */
export function report(samples: Timed[], warmupMs: number): string {
  const after = samples.filter((s) => s.atMs >= warmupMs);
  if (after.length < 2) return 'not enough samples after the warm-up';
  const base = after[0];
  const end = after[after.length - 1];
  const keys = [...new Set(after.flatMap((s) => Object.keys(s.figures)))];
  const rows: string[][] = [['resource', 'baseline', 'end', 'min..max', 'per 1k calls', 'per hour', 'r', 'steady growth?']];
  for (const key of keys) {
    const points = after.filter((s) => Number.isFinite(s.figures[key]));
    const ys = points.map((s) => s.figures[key]);
    const byTime = fit(points.map((s) => s.atMs / 3_600_000), ys);
    const byCalls = fit(points.map((s) => s.calls / 1000), ys);
    const b = base.figures[key] ?? Number.NaN;
    const e = end.figures[key] ?? Number.NaN;
    const floor = /MB/.test(key) ? 5 : 2;
    const grows = byTime.r >= 0.8 && e - b > Math.max(floor, Math.abs(b) * 0.1);
    const f = (v: number) => (Number.isFinite(v) ? (Math.abs(v) >= 100 || Number.isInteger(v) ? v.toFixed(0) : v.toFixed(1)) : '-');
    rows.push([key, f(b), f(e), `${f(Math.min(...ys))}..${f(Math.max(...ys))}`, f(byCalls.slope), f(byTime.slope), Number.isFinite(byTime.r) ? byTime.r.toFixed(2) : '-', grows ? 'YES' : '']);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  return rows.map((row) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ')).join('\n');
}
