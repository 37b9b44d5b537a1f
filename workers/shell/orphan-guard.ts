import { spawn, type ChildProcess } from 'node:child_process';

/**
 * A tiny `/bin/sh` that outlives its worker to kill the process groups of the commands the
 * worker left running. Unconfined commands are process-group leaders (so a timeout can kill a
 * whole tree) and their timers live in the worker: a worker killed with SIGKILL, or crashed,
 * left them running past their timeout, re-parented to init. The worker tells the guard, on a
 * pipe, `+ <pgid>` when a command starts and `- <pgid>` once its group has been killed; when the
 * pipe reaches end of file (the worker is gone, however it ended) the guard SIGKILLs every group
 * still listed, then exits. Sandboxed commands need none of this (`bwrap --die-with-parent`).
 *
 * One guard per worker, not one per command: a watchdog inside each command's group costs a fork
 * and an exec of `/bin/sh` (~0.8 ms, a third of a command's spawn here); a line on a pipe costs
 * microseconds. The guard runs in its own process group, so a command's `kill 0` cannot reach it,
 * and ignores the polite signals; a guard that dies anyway is started again by the next command,
 * which hands it every group still running. A process that leaves its group (`setsid`) escapes
 * it, as it escapes the timeout's group kill, unless the worker runs its commands in cgroups:
 * then the guard also kills everything left in the worker's cgroups and removes them
 * (`cgroupScript`, command-cgroups.ts), in sandbox mode too.
 */
const GUARD_SCRIPT = [
  "trap '' HUP INT QUIT TERM PIPE USR1 USR2",
  "groups=' '",
  'while read -r op id; do',
  '  case $op in',
  '    +) groups="$groups$id " ;;',
  '    -) rest=${groups%% $id *}; [ "$rest" = "$groups" ] || groups="$rest ${groups#* $id }" ;;',
  '  esac',
  'done',
  'for id in $groups; do kill -KILL -$id 2>/dev/null; done',
].join('\n');

export class OrphanGuard {
  #guard: ChildProcess | undefined;
  /** Groups started and not yet released: handed to a guard started again. */
  readonly #groups = new Set<number>();
  readonly #script: string;

  /** `cgroupScript`: lines of `/bin/sh` the guard runs last, after the process groups are killed. */
  constructor(cgroupScript?: string) {
    this.#script = cgroupScript ? `${GUARD_SCRIPT}\n${cgroupScript}` : GUARD_SCRIPT;
  }

  /** Starts the guard now rather than at the first `watch` (for one that only cleans cgroups). Never throws. */
  arm(): void {
    if (!this.#guard) this.#send('');
  }

  /** Lists the process group `pgid` (a command's leader pid) with the guard. Never throws. */
  watch(pgid: number | undefined): void {
    if (!pgid) return;
    this.#groups.add(pgid);
    this.#send(`+ ${pgid}\n`);
  }

  /** Takes `pgid` off the list, once the worker has killed the group itself. Never throws. */
  release(pgid: number | undefined): void {
    if (!pgid || !this.#groups.delete(pgid)) return;
    this.#send(`- ${pgid}\n`);
  }

  /** The guard's pid, when one runs (for tests and logs). */
  pid(): number | undefined {
    return this.#guard?.pid;
  }

  #send(line: string): void {
    if (!this.#guard) {
      if (!this.#start()) return;
      // The new guard learns every group still running, this one included.
      line = [...this.#groups].map((pgid) => `+ ${pgid}\n`).join('');
    }
    this.#guard!.stdin!.write(line);
  }

  #start(): boolean {
    let guard: ChildProcess;
    try {
      guard = spawn('/bin/sh', ['-c', this.#script], { cwd: '/', detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    } catch {
      return false;
    }
    // A spawn that fails (EAGAIN at the process limit, EMFILE) says so with 'error' and no 'exit':
    // forget that guard too, so the next command starts another.
    const gone = () => {
      if (this.#guard === guard) this.#guard = undefined;
    };
    guard.on('error', gone);
    guard.stdin?.on('error', () => undefined);
    guard.once('exit', gone);
    if (guard.pid === undefined || !guard.stdin) return false;
    // Neither the guard nor its pipe keeps the worker alive: the worker's end closing is the signal.
    guard.unref();
    (guard.stdin as unknown as { unref?: () => void }).unref?.();
    this.#guard = guard;
    return true;
  }
}
