import { existsSync, readdirSync, readFileSync } from 'node:fs';
import treeKill from 'tree-kill';

let psAvailable: boolean | undefined;
let procAvailable: boolean | undefined;

/** tree-kill shells out to `ps` and crashes Node with an unhandled error when it is missing. */
function hasPs(): boolean {
  psAvailable ??= ['/bin/ps', '/usr/bin/ps', '/usr/local/bin/ps'].some((file) => existsSync(file));
  return psAvailable;
}

/**
 * Kills a process group at once (synchronously). For a dead group leader this is all that is
 * left to do: its children were re-parented and `ps` no longer shows them under it.
 */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (!pid || pid <= 0) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // No such group: nothing is left of it.
  }
}

/**
 * Kills a process, its process group and every descendant still under it. The group kill catches
 * children that were re-parented (double fork); the tree walk catches those that left the group.
 * On Linux the tree is read from /proc; elsewhere tree-kill runs `ps` (or `pgrep`) by name. Never
 * by name where /proc is: a PATH entry that is empty or relative (`:/usr/bin`) has the name looked
 * up in the current directory, which may be a shell workspace a sandboxed command can write, and
 * a `./ps` planted there would run unconfined. Never throws; resolves when the signals were sent.
 */
export function killTree(pid: number | undefined, signal: NodeJS.Signals = 'SIGKILL', options: { group?: boolean } = {}): Promise<void> {
  if (!pid || pid <= 0) return Promise.resolve();
  const sendToGroup = () => {
    if (options.group === false) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // No such group (the process was not a group leader, or it is gone already).
    }
  };
  const sendTo = (target: number) => {
    try {
      process.kill(target, signal);
    } catch {
      // Gone already.
    }
  };
  procAvailable ??= existsSync('/proc/self/stat');
  if (procAvailable) {
    // As tree-kill does: the whole tree is read first, then signalled, the root last.
    for (const target of [...descendants(pid), pid]) sendTo(target);
    sendToGroup();
    return Promise.resolve();
  }
  if (!hasPs()) {
    sendToGroup();
    sendTo(pid);
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    // tree-kill reads the tree first, so signal the group after it has looked.
    try {
      treeKill(pid, signal, () => {
        sendToGroup();
        resolve();
      });
    } catch {
      sendToGroup();
      resolve();
    }
  });
}

/** The pids under `root` in the process tree, read from /proc (parents before their children). */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended while we looked
    }
    // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so split after the last `)`.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid);
    if (list) list.push(Number(entry));
    else children.set(ppid, [Number(entry)]);
  }
  const found: number[] = [];
  const queue = [root];
  // Bounded: each pid is visited once (a pid cannot be its own ancestor in one snapshot).
  const seen = new Set<number>([root]);
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      if (seen.has(child)) continue;
      seen.add(child);
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/**
 * The children of `parent` (default: this process) whose command line holds `arg` exactly, read
 * from /proc; none where there is no /proc. A launch that hangs gives us no handle on the process
 * it spawned (puppeteer returns one only with the browser), but we chose the arguments it got.
 */
export function childrenWithArg(arg: string, parent = process.pid): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== parent) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(arg)) found.push(Number(entry));
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}
