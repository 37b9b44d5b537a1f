import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { tree } from './common';

const PAGE = 4096;
/** Pagemap entries read at once (8 bytes each). */
const CHUNK = 4096;
const PRESENT = 1n << 63n;
const FRAME = (1n << 55n) - 1n;

/** Peak memory of a process tree, MB (see peakMemory). */
export interface PeakMemory {
  /** The sum of each process's VmHWM: pages two processes share count once per process. */
  hwmSumMb: number;
  /** hwmSumMb less the pages resident in more than one process of the tree, each counted once. */
  treeMb?: number;
  /** What treeMb took off: the tree's own shared pages, counted again in each process. */
  sharedMb?: number;
}

/**
 * Peak memory of the tree under `pid`. Summing VmHWM counts a page mapped by two processes twice,
 * though the machine holds it once: two Node processes share the `node` binary's ~32 MB of
 * resident code, which a one-process server pays once. `treeMb` takes those duplicates off, from
 * the physical frames in /proc/<pid>/pagemap, read when this is called (after the run, with every
 * process still up: the shared pages are the binary's and the libraries', resident from the
 * first milliseconds on, so they were in each process's peak too). Frame numbers need root
 * (CAP_SYS_ADMIN); without it treeMb is undefined. For a one-process tree treeMb = hwmSumMb.
 */
export function peakMemory(pid: number): PeakMemory {
  return treeMemory(pid, 'VmHWM');
}

/**
 * Memory of the tree under `pid` now, MB: as peakMemory, from each process's VmRSS (hwmSumMb is
 * then the sum of the RSS; treeMb that less the shared pages, each counted once).
 */
export function currentMemory(pid: number): PeakMemory {
  return treeMemory(pid, 'VmRSS');
}

function treeMemory(pid: number, field: 'VmHWM' | 'VmRSS'): PeakMemory {
  const pids = tree(pid);
  let hwmKb = 0;
  for (const p of pids) hwmKb += statusKb(p, field);
  const hwmSumMb = hwmKb / 1024;
  const frames = pids.map(residentFrames);
  if (frames.some((set) => set === undefined)) return { hwmSumMb };
  const union = new Set<number>();
  let total = 0;
  for (const set of frames as Array<Set<number>>) {
    total += set.size;
    for (const frame of set) union.add(frame);
  }
  const sharedMb = ((total - union.size) * PAGE) / 1024 / 1024;
  return { hwmSumMb, treeMb: hwmSumMb - sharedMb, sharedMb };
}

function statusKb(pid: number, field: string): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0; // gone
  }
}

/**
 * The physical frames of the pages resident in `pid`, from the mappings smaps shows with a
 * non-zero Rss; undefined when the process is gone or frame numbers are hidden (not root).
 */
function residentFrames(pid: number): Set<number> | undefined {
  let smaps: string;
  let fd: number;
  try {
    smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8');
    fd = openSync(`/proc/${pid}/pagemap`, 'r');
  } catch {
    return undefined;
  }
  const frames = new Set<number>();
  const buffer = Buffer.alloc(CHUNK * 8);
  try {
    let range: [number, number] | undefined;
    for (const line of smaps.split('\n')) {
      const m = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
      if (m) {
        range = [parseInt(m[1], 16) / PAGE, parseInt(m[2], 16) / PAGE];
        continue;
      }
      if (range === undefined || !line.startsWith('Rss:')) continue;
      const [first, end] = range;
      range = undefined;
      if (/^Rss:\s+0 kB/.test(line)) continue;
      for (let page = first; page < end; page += CHUNK) {
        const read = readSync(fd, buffer, 0, Math.min(CHUNK, end - page) * 8, page * 8);
        for (let at = 0; at + 8 <= read; at += 8) {
          const entry = buffer.readBigUInt64LE(at);
          if ((entry & PRESENT) === 0n) continue;
          const frame = Number(entry & FRAME);
          // Without CAP_SYS_ADMIN the kernel reports every frame as 0.
          if (frame === 0) return undefined;
          frames.add(frame);
        }
      }
    }
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
  return frames;
}
