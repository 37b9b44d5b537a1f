import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { get } from 'node:http';
import path from 'node:path';
import { countTree, processTree, type Proc } from '../soak/sample';

/**
 * A census of what a server leaves behind: per role of process in its tree, how many and their
 * open fds by kind; processes outside the tree that carry the run's marker; cgroups named
 * mcpvisor-*; entries under the given directories; TCP sockets of the tree by state.
 */
export type Census = Record<string, number>;

function role(proc: Proc, root: number): string {
  if (proc.pid === root) return 'supervisor';
  const exe = path.basename(proc.argv[0] ?? '');
  if (/chrom/i.test(exe)) return proc.argv.some((a) => a.startsWith('--type=')) ? `chromium:${/--type=(\S+)/.exec(proc.argv.join(' '))?.[1]}` : 'chromium:browser';
  if (exe === 'bwrap') return 'bwrap';
  const script = proc.argv.find((arg) => /\.js$/.test(arg));
  if (script && /node/.test(exe)) {
    const m = /workers\/(\w+)\/([\w-]+)\.js$/.exec(script);
    return m ? `worker:${m[1]}/${m[2]}` : `node:${path.basename(script)}`;
  }
  return `cmd:${exe}`;
}

function fdKinds(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let names: string[] = [];
  try {
    names = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return out;
  }
  for (const name of names) {
    let target = '';
    try {
      target = readlinkSync(`/proc/${pid}/fd/${name}`);
    } catch {
      continue;
    }
    const kind = target.startsWith('socket:') ? 'socket' : target.startsWith('pipe:') ? 'pipe' : target.startsWith('anon_inode:') ? `anon:${target.slice(11).replace(/[[\]]/g, '')}` : target.startsWith('/dev/') ? 'dev' : 'file';
    out[kind] = (out[kind] ?? 0) + 1;
  }
  return out;
}

/** Pids of shell workers ever seen in a census: the cgroups named after them are the run's. */
const seenPids = new Set<number>();

/** Directories named mcpvisor-<kind>-<pid>-… of a seen process below the cgroup roots, and every directory inside them. */
function countCgroups(): number {
  let count = 0;
  const walk = (dir: string, depth: number, inside: boolean) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      const m = /^mcpvisor-[a-z]+-(\d+)-/.exec(entry.name);
      const ours = inside || (m !== null && seenPids.has(Number(m[1])));
      if (ours) count++;
      if (depth < 4) walk(path.join(dir, entry.name), depth + 1, ours);
    }
  };
  for (const controller of ['pids', 'memory', 'unified']) if (existsSync(`/sys/fs/cgroup/${controller}`)) walk(`/sys/fs/cgroup/${controller}`, 0, false);
  return count;
}

export interface CensusTarget {
  rootPid: number;
  /** `NAME=value` in the environment of processes that belong to the run. */
  marker: string;
  dirs: Record<string, string>;
  baseUrl?: string;
}

export async function census(target: CensusTarget): Promise<Census> {
  const { procs, tree } = processTree(target.rootPid);
  for (const pid of tree) seenPids.add(pid);
  const out: Census = {};
  const add = (key: string, n: number) => (out[key] = (out[key] ?? 0) + n);
  for (const pid of tree) {
    const r = role(procs.get(pid)!, target.rootPid);
    add(`procs ${r}`, 1);
    if (r.startsWith('chromium:') && r !== 'chromium:browser') continue;
    for (const [kind, n] of Object.entries(fdKinds(pid))) add(`fds ${r} ${kind}`, n);
  }
  let orphans = 0;
  for (const pid of procs.keys()) {
    if (tree.has(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(target.marker)) orphans++;
    } catch {
      // Gone or not readable.
    }
  }
  out['orphan processes'] = orphans;
  out['cgroups mcpvisor*'] = countCgroups();
  for (const [name, dir] of Object.entries(target.dirs)) {
    out[`entries ${name}`] = countTree(dir);
    // And by top-level entry, named without its digits and random suffix.
    try {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const kind = `entries ${name}/${entry.name.replace(/\d+/g, '#').replace(/-[A-Za-z0-9]{6}$/, '-X')}${entry.isDirectory() ? '/' : ''}`;
        add(`${kind} (count)`, 1);
        if (entry.isDirectory()) add(`${kind} (inside)`, countTree(path.join(dir, entry.name)));
      }
    } catch {
      // Gone.
    }
  }
  out['entries /dev/shm'] = countTree('/dev/shm');
  try {
    const ss = execFileSync('ss', ['-tanpH'], { encoding: 'utf8' });
    for (const line of ss.split('\n')) {
      const pids = [...line.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
      if (!pids.some((pid) => tree.has(pid))) continue;
      add(`tcp ${line.split(/\s+/)[0]}`, 1);
    }
  } catch {
    // No ss.
  }
  if (target.baseUrl) {
    try {
      // A connection of its own, closed after: a kept-alive one would count as the server's.
      const health = JSON.parse(await getClosing(`${target.baseUrl}/health`)) as Record<string, unknown>;
      out['health sessions'] = Number(health.sessions);
      out['health inFlightCalls'] = Number(health.inFlightCalls);
    } catch {
      // Not answering.
    }
  }
  return out;
}

/** Rows where two censuses differ. */
export function diff(before: Census, after: Census): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys.filter((k) => (before[k] ?? 0) !== (after[k] ?? 0)).map((k) => `${k}: ${before[k] ?? 0} -> ${after[k] ?? 0}`);
}

export function getClosing(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false, headers: { connection: 'close' }, timeout: 5000 }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve(text));
    });
    req.on('error', reject);
  });
}
