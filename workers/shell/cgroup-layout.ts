import { readFileSync } from 'node:fs';

/** A cgroup hierarchy the worker uses, and the directory of its own cgroup there. */
export interface CgroupHierarchy {
  /** `unified` for cgroup v2; the v1 controller otherwise. */
  kind: 'unified' | 'pids' | 'memory';
  /** The worker's own cgroup in this hierarchy, as a directory of the mounted file system. */
  dir: string;
}

export type CgroupLayout = { version: 1 | 2; hierarchies: CgroupHierarchy[] } | { version: null; reason: string };

interface Mount {
  root: string;
  mountPoint: string;
  fsType: string;
  superOptions: string[];
}

/** `\040` and the other octal escapes of /proc/self/mountinfo. */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

function parseMountInfo(mountInfo: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of mountInfo.split('\n')) {
    const fields = line.split(' ');
    const dash = fields.indexOf('-');
    if (dash < 6 || fields.length < dash + 4) continue;
    mounts.push({ root: unescapeMountField(fields[3]), mountPoint: unescapeMountField(fields[4]), fsType: fields[dash + 1], superOptions: fields[dash + 3].split(',') });
  }
  // A mount made later on the same directory or one above it covers this one (a container's
  // read-only tmpfs over /sys/fs/cgroup): mountinfo still lists what it hides.
  const within = (inner: string, outer: string) => inner === outer || outer === '/' || inner.startsWith(`${outer}/`);
  return mounts.filter((mount, index) => !mounts.slice(index + 1).some((later) => within(mount.mountPoint, later.mountPoint)));
}

/** The directory of cgroup `path` (as /proc/self/cgroup names it) under `mount`, when the mount shows it. */
function dirOf(mount: Mount, path: string): string | undefined {
  const root = mount.root === '/' ? '' : mount.root;
  if (root !== '' && path !== root && !path.startsWith(`${root}/`)) return undefined;
  const rest = path.slice(root.length);
  return `${mount.mountPoint}${rest === '/' ? '' : rest}`;
}

/**
 * Where the worker's cgroups go, from /proc/self/mountinfo and /proc/self/cgroup (pure).
 *
 * Decision: cgroup v1's `pids` hierarchy when it is mounted (legacy and hybrid systems: there the
 * controllers are bound to v1 and the unified hierarchy has none), with v1 `memory` beside it when
 * that is mounted too; else the unified (v2) hierarchy. Either way the worker's cgroups are made
 * under its own cgroup, never beside it: a command stays inside every limit the server runs under
 * (a systemd unit's MemoryMax, a container's).
 */
export function findCgroupLayout(mountInfo: string, selfCgroup: string): CgroupLayout {
  const mounts = parseMountInfo(mountInfo);
  const own = new Map<string, string>();
  for (const line of selfCgroup.split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    if (match[1] === '0' && match[2] === '') own.set('unified', match[3]);
    for (const controller of match[2].split(',')) if (controller) own.set(controller, match[3]);
  }
  const v1 = (controller: 'pids' | 'memory'): CgroupHierarchy | undefined => {
    const path = own.get(controller);
    if (path === undefined) return undefined;
    for (const mount of mounts) {
      if (mount.fsType !== 'cgroup' || !mount.superOptions.includes(controller)) continue;
      const dir = dirOf(mount, path);
      if (dir) return { kind: controller, dir };
    }
    return undefined;
  };
  const pids = v1('pids');
  if (pids) {
    const memory = v1('memory');
    return { version: 1, hierarchies: memory ? [pids, memory] : [pids] };
  }
  const path = own.get('unified');
  if (path !== undefined) {
    for (const mount of mounts) {
      if (mount.fsType !== 'cgroup2') continue;
      const dir = dirOf(mount, path);
      if (dir) return { version: 2, hierarchies: [{ kind: 'unified', dir }] };
    }
  }
  return { version: null, reason: 'no cgroup file system with the pids controller (v1) or the unified hierarchy (v2) is mounted where this process can see its own cgroup' };
}

/** The layout of this process (reads /proc). Never throws. */
export function ownCgroupLayout(): CgroupLayout {
  try {
    return findCgroupLayout(readFileSync('/proc/self/mountinfo', 'utf8'), readFileSync('/proc/self/cgroup', 'utf8'));
  } catch (error) {
    return { version: null, reason: `cannot read /proc/self/mountinfo or /proc/self/cgroup (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  }
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), or undefined when the process is gone. */
export function processStartTime(pid: number | 'self'): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}
