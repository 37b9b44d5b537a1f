import { closeSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** O_CLOEXEC as the octal `flags:` line of /proc/<pid>/fdinfo shows it. */
const O_CLOEXEC = 0o2000000;

export interface ClosedFd {
  fd: number;
  /** What it was open on (`/srv/logs`, `pipe:[123]`, `socket:[456]`), when readable. */
  target?: string;
}

/**
 * Closes every descriptor above 2 that this process inherited open across exec (no close-on-exec
 * flag), but those in `keep`; returns what it closed. Why: every descriptor Node opens itself is
 * close-on-exec, but one the program that started the server left open (a launcher script's
 * `exec 40<dir`, a lock file, a harness's pipe) is passed down by the supervisor's fork, the
 * worker's spawn and bubblewrap (none of them closes what it did not open) to every command. A
 * sandboxed command then reads and writes through it whatever it names: a directory's
 * descriptor is the host's file system (`/proc/self/fd/40/..`), outside the sandbox's mounts.
 * Linux /proc only; elsewhere nothing is closed. Never throws.
 */
export function closeInheritedFds(keep: readonly number[] = []): ClosedFd[] {
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const closed: ClosedFd[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2 || keep.includes(fd)) continue;
    let flags: RegExpExecArray | null;
    try {
      flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1'));
    } catch {
      continue; // readdir's own descriptor, closed since
    }
    if (!flags || (parseInt(flags[1], 8) & O_CLOEXEC) !== 0) continue;
    let target: string | undefined;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      // Shown without it.
    }
    try {
      closeSync(fd);
      closed.push({ fd, ...(target === undefined ? {} : { target }) });
    } catch {
      // Closed meanwhile.
    }
  }
  return closed;
}
