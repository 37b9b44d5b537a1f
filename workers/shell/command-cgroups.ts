import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { McpvisorError } from '../../protocol/errors';
import { fdExhaustedError, isFdExhaustion } from '../../protocol/fd-limit';
import { killCgroup, oomKills, pidsMaxEvents, readPids, removeCgroups, tryRmdir, writeOptional } from './cgroup-files';
import { ownCgroupLayout, processStartTime, type CgroupHierarchy, type CgroupLayout } from './cgroup-layout';

/** What each command's cgroup limits; a limit left out is not set. */
export interface CgroupLimits {
  /** pids.max: processes and threads of the whole command. */
  maxProcesses?: number;
  /** memory.max (v2, with no swap) or memory.limit_in_bytes and memsw (v1): the whole command's memory. */
  maxMemoryBytes?: number;
}

/** What `getSystemInfo` and the log say of the commands' cgroups. */
export interface CgroupState {
  available: boolean;
  version: 1 | 2 | null;
  /** The limits each command's cgroup really has; null where none is set. */
  maxProcesses: number | null;
  maxMemoryBytes: number | null;
  /** Why cgroups, or a wanted limit, are not available. */
  reason?: string;
}

/** One command's cgroup (one directory per hierarchy). */
export interface CommandCgroup {
  /** The argv that moves itself into the cgroup, then runs `file args` (see `enterArgv`). */
  wrap(file: string, args: string[]): { file: string; args: string[] };
  /** SIGKILLs every process in the cgroup, synchronously. Never throws. */
  kill(): void;
  /** Whether the kernel's OOM killer killed a process of the command (the memory limit was reached); asked once, at its end. */
  oomKilled(): boolean;
  /** Whether the command's pids.max refused a fork (it reached its process limit); asked once, at its end. */
  processLimitReached(): boolean;
  /**
   * Keeps the cgroup for a next command when it is empty and nothing had to be killed in it; else
   * removes it, in the background while its killed processes exit. Never throws.
   */
  release(): void;
}

/** A command cgroup (one directory per hierarchy) and its OOM kill and refused fork counts when last read. */
interface PooledCgroup {
  dirs: string[];
  oomKills: number;
  pidsMaxEvents: number;
}

/** Empty command cgroups a worker keeps for its next commands (one per command running at once, about). */
const MAX_FREE = 8;

/** The prefix of a worker's own cgroup directory: `mcpvisor-shell-<pid>-<start time>`. */
const WORKER_PREFIX = 'mcpvisor-shell-';
const WORKER_NAME = /^mcpvisor-shell-(\d+)-(\d+)$/;

/** Linux's limit on one argument (MAX_ARG_STRLEN, 32 pages), less its terminating NUL. */
const MAX_ARGUMENT_BYTES = 128 * 1024 - 1;

/** Single-quotes a path for /bin/sh. */
const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * The argv that puts a new process into a cgroup before it can fork, then runs `file args`.
 * The process writes its own pid (`$$`) to each `cgroup.procs`, which the kernel reads in the
 * writer's pid namespace, so nothing but this process moves and nothing it starts is left out.
 *
 * - `/bin/sh -c SCRIPT` (unconfined mode): the same shell moves, then runs SCRIPT written after
 *   the move on the same line, so that its line numbers and errors read as under a plain `sh -c`
 *   (with `eval "$c"` they read `eval: node: not found`, and `$c` held the script): no exec more.
 *   A SCRIPT too long to share one argument with the move (Linux's 128 KiB) gets a shell exec'd.
 * - Anything else (bwrap): `/bin/sh -c 'echo $$ >…; exec "$@"'`, one exec of a shell more.
 *
 * A move that fails exits 125 before anything of the command ran (fail closed). Inside bubblewrap
 * the cgroup file system is not mounted and capabilities are dropped, so a sandboxed command cannot
 * move itself out; an unconfined command running as root can (as it can kill the server).
 */
export function enterArgv(procsFiles: readonly string[], file: string, args: string[]): { file: string; args: string[] } {
  const move = `${procsFiles.map((procs) => `echo $$ >${quote(procs)}`).join(' && ')} || exit 125`;
  // `shift`: the command sees no arguments (`$#` 0), as under a plain `sh -c`.
  if (file === '/bin/sh' && args.length === 2 && args[0] === '-c') {
    const inline = `${move}; ${args[1]}`;
    if (Buffer.byteLength(inline) <= MAX_ARGUMENT_BYTES) return { file, args: ['-c', inline, '/bin/sh'] };
    return { file, args: ['-c', `${move}; exec /bin/sh -c "$1" /bin/sh`, '/bin/sh', args[1]] };
  }
  return { file: '/bin/sh', args: ['-c', `${move}; exec "$@"`, 'sh', file, ...args] };
}

/** The command cgroups under a worker's directory `workerDir` (`c1`, `c2`, …). */
function commandDirs(workerDir: string): string[] {
  try {
    return readdirSync(workerDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && /^c\d+$/.test(entry.name))
      .map((entry) => `${workerDir}/${entry.name}`);
  } catch {
    return [];
  }
}

/**
 * Each command of a shell worker in a cgroup of its own, under `<own cgroup>/mcpvisor-shell-<pid>-<start>`
 * (made at `open`, removed at `close`): limits for the whole command (`pids`, `memory`), and at its
 * end every process left in it is killed, daemons that left the process group (setsid, double
 * fork) included. See cgroup-layout.ts for the hierarchy chosen.
 */
export class CommandCgroups {
  readonly #version: 1 | 2;
  readonly #hierarchies: CgroupHierarchy[];
  /** The worker's directory in each hierarchy; the first is the one whose `cgroup.procs` is read to kill. */
  readonly #workerDirs: string[];
  readonly #limits: CgroupLimits;
  readonly #live = new Set<string[]>();
  #next = 0;
  /** Empty cgroups of commands that ended, with their limits as set: the next commands run in them. */
  readonly #free: PooledCgroup[] = [];
  #closed = false;

  private constructor(version: 1 | 2, hierarchies: CgroupHierarchy[], workerDirs: string[], limits: CgroupLimits) {
    this.#version = version;
    this.#hierarchies = hierarchies;
    this.#workerDirs = workerDirs;
    this.#limits = limits;
  }

  /**
   * Sets up the worker's cgroups: removes those of dead workers (and kills what is left in them),
   * makes this worker's directory, enables the controllers the limits need (v2), and checks with a
   * real `/bin/sh` that a process can move itself into a command's cgroup. Never rejects: when
   * any step fails, `cgroups` is undefined and `state.reason` says why (commands then run as
   * before, with the rlimits and the process group only). `layout`: where (tests); default this process's.
   */
  static async open(wanted: CgroupLimits, layout: CgroupLayout = ownCgroupLayout()): Promise<{ cgroups?: CommandCgroups; state: CgroupState }> {
    const none = (reason: string, version: 1 | 2 | null = null) => ({ state: { available: false, version, maxProcesses: null, maxMemoryBytes: null, reason } });
    if (layout.version === null) return none(layout.reason);
    const { version, hierarchies } = layout;
    await Promise.all(hierarchies.map((hierarchy) => removeDeadWorkers(hierarchy.dir, version)));
    const name = `${WORKER_PREFIX}${process.pid}-${processStartTime('self') ?? 0}`;
    const workerDirs: string[] = [];
    for (const hierarchy of hierarchies) {
      const dir = `${hierarchy.dir}/${name}`;
      try {
        mkdirSync(dir);
      } catch (error) {
        for (const made of workerDirs) tryRmdir(made);
        return none(`cannot create the cgroup ${dir} (${(error as NodeJS.ErrnoException).code ?? String(error)}): the server needs root, or a cgroup delegated to its user, on a writable cgroup file system`, version);
      }
      workerDirs.push(dir);
    }
    const limits: CgroupLimits = {};
    const missing: string[] = [];
    const has = (kind: CgroupHierarchy['kind']) => hierarchies.some((hierarchy) => hierarchy.kind === kind);
    if (version === 2) {
      // Controllers reach a child only through its parent's cgroup.subtree_control, which a cgroup
      // holding processes (ours holds the server) cannot change: decision, this worker never
      // changes a cgroup it did not create, so limits need them delegated already.
      let offered: string[] = [];
      try {
        offered = readFileSync(`${workerDirs[0]}/cgroup.controllers`, 'utf8').trim().split(/\s+/);
      } catch {
        // None.
      }
      const enable = [wanted.maxProcesses !== undefined && 'pids', wanted.maxMemoryBytes !== undefined && 'memory'].filter((c): c is string => c !== false);
      for (const controller of enable) {
        try {
          if (!offered.includes(controller)) throw new Error('not offered');
          writeFileSync(`${workerDirs[0]}/cgroup.subtree_control`, `+${controller}`);
          if (controller === 'pids') limits.maxProcesses = wanted.maxProcesses;
          else limits.maxMemoryBytes = wanted.maxMemoryBytes;
        } catch {
          missing.push(`the ${controller} controller is not enabled in the cgroup.subtree_control of the server's own cgroup`);
        }
      }
    } else {
      if (wanted.maxProcesses !== undefined) limits.maxProcesses = wanted.maxProcesses;
      if (wanted.maxMemoryBytes !== undefined) {
        if (has('memory')) limits.maxMemoryBytes = wanted.maxMemoryBytes;
        else missing.push('the cgroup v1 memory controller is not mounted');
      }
    }
    const cgroups = new CommandCgroups(version, hierarchies, workerDirs, limits);
    const failed = await cgroups.#probe();
    if (failed) {
      await cgroups.close();
      return none(failed, version);
    }
    return {
      cgroups,
      state: {
        available: true,
        version,
        maxProcesses: limits.maxProcesses ?? null,
        maxMemoryBytes: limits.maxMemoryBytes ?? null,
        ...(missing.length > 0 ? { reason: `no limit where ${missing.join('; ')}` } : {}),
      },
    };
  }

  /** Runs `/bin/sh` into a command cgroup as commands are; resolves the reason of a failure, or undefined. */
  async #probe(): Promise<string | undefined> {
    let cgroup: CommandCgroup;
    try {
      cgroup = this.create();
    } catch (error) {
      return (error as Error).message;
    }
    const { file, args } = cgroup.wrap('/bin/sh', ['-c', 'cat /proc/self/cgroup']);
    const reason = await new Promise<string | undefined>((resolve) => {
      execFile(file, args, { timeout: 5000, encoding: 'utf8' }, (error, _stdout, stderr) => {
        resolve(error ? `a process cannot move itself into a command's cgroup: ${stderr.trim() || error.message}` : undefined);
      });
    });
    cgroup.release();
    return reason;
  }

  /**
   * The next command's cgroup, with the limits: an empty one a command ended in, or a new one.
   * Throws `INTERNAL` when the kernel refuses to make one (someone removed the worker's directory,
   * `cgroup.max.descendants`): decision, such a command is refused rather than run without the
   * limits the server reported.
   */
  create(): CommandCgroup {
    const pooled = this.#free.pop() ?? this.#make();
    const { dirs } = pooled;
    const version = this.#version;
    const memoryDir = this.#limits.maxMemoryBytes === undefined ? undefined : this.#version === 2 ? dirs[0] : dirs[this.#hierarchies.findIndex((hierarchy) => hierarchy.kind === 'memory')];
    const pidsDir = this.#limits.maxProcesses === undefined ? undefined : dirs[0];
    let released = false;
    /** Whether processes were left to kill: a v1 cgroup then has pids.max 0, and is not used again. */
    let killed = false;
    /** Refused forks counted before the first kill: v1's kill sets pids.max to 0, which refuses some more. */
    let refusedBeforeKill: number | undefined;
    return {
      wrap: (file, args) => enterArgv(dirs.map((dir) => `${dir}/cgroup.procs`), file, args),
      kill: () => {
        if (pidsDir !== undefined) refusedBeforeKill ??= pidsMaxEvents(pidsDir);
        if (killCgroup(dirs[0], version)) killed = true;
      },
      processLimitReached: () => {
        if (pidsDir === undefined) return false;
        const count = pidsMaxEvents(pidsDir);
        const reached = (refusedBeforeKill ?? count) > pooled.pidsMaxEvents;
        pooled.pidsMaxEvents = count;
        return reached;
      },
      oomKilled: () => {
        if (memoryDir === undefined) return false;
        const count = oomKills(memoryDir, version);
        const grew = count > pooled.oomKills;
        pooled.oomKills = count;
        return grew;
      },
      release: () => {
        if (released) return;
        released = true;
        // Making and removing a cgroup per command cost ~1 ms of the worker's time (v1: two
        // hierarchies): one that ended empty and clean runs the next command instead.
        if (!killed && !this.#closed && this.#free.length < MAX_FREE && readPids(dirs[0]).length === 0) {
          this.#free.push(pooled);
          return;
        }
        // After the reply is on its way: the command's processes were killed at its exit already.
        setImmediate(() =>
          void removeCgroups(dirs, version).then((removed) => {
            // One left is removed at close, or by the next worker's start.
            if (removed) this.#live.delete(dirs);
          }),
        );
      },
    };
  }

  #make(): PooledCgroup {
    const id = `c${++this.#next}`;
    const dirs = this.#workerDirs.map((dir) => `${dir}/${id}`);
    const made: string[] = [];
    try {
      for (const dir of dirs) {
        mkdirSync(dir);
        made.push(dir);
      }
      this.#writeLimits(dirs);
    } catch (error) {
      for (const dir of made) tryRmdir(dir);
      const what = `cannot create the command's cgroup ${dirs[0]}`;
      if (isFdExhaustion(error)) throw fdExhaustedError(`${what}; nothing was run`, error, { retry: true });
      throw new McpvisorError('INTERNAL', `${what}: ${(error as Error).message}; nothing was run`);
    }
    this.#live.add(dirs);
    return { dirs, oomKills: 0, pidsMaxEvents: 0 };
  }

  #writeLimits(dirs: string[]): void {
    const { maxProcesses, maxMemoryBytes } = this.#limits;
    const at = (kind: CgroupHierarchy['kind']) => dirs[this.#hierarchies.findIndex((hierarchy) => hierarchy.kind === kind)];
    if (this.#version === 2) {
      if (maxProcesses !== undefined) writeFileSync(`${dirs[0]}/pids.max`, String(maxProcesses));
      if (maxMemoryBytes !== undefined) {
        writeFileSync(`${dirs[0]}/memory.max`, String(maxMemoryBytes));
        // No swap: the limit is all the memory the command gets, not RAM with unlimited swap beyond.
        writeOptional(`${dirs[0]}/memory.swap.max`, '0');
      }
      return;
    }
    if (maxProcesses !== undefined) writeFileSync(`${at('pids')}/pids.max`, String(maxProcesses));
    if (maxMemoryBytes !== undefined) {
      writeFileSync(`${at('memory')}/memory.limit_in_bytes`, String(maxMemoryBytes));
      // Memory and swap together (only with swap accounting), set after the memory limit it must not be under.
      writeOptional(`${at('memory')}/memory.memsw.limit_in_bytes`, String(maxMemoryBytes));
    }
  }

  /**
   * The lines of `/bin/sh` that kill every process in this worker's cgroups and remove them, for
   * the orphan guard that outlives the worker (orphan-guard.ts).
   */
  guardScript(): string {
    const [track, ...others] = this.#workerDirs;
    const kill =
      this.#version === 2
        ? `echo 1 >${quote(`${track}/cgroup.kill`)} 2>/dev/null || for d in ${quote(track)}/c*; do for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -KILL $p 2>/dev/null; done; done`
        : `for r in 1 2 3; do for d in ${quote(track)}/c*; do echo 0 >"$d/pids.max" 2>/dev/null; for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -KILL $p 2>/dev/null; done; done; done`;
    const dirs = [track, ...others].map(quote);
    // Killed processes take a moment to exit; a cgroup still busy after ~2 s is left to the next worker's start.
    const left = dirs.map((dir) => `[ -d ${dir} ]`).join(' || ');
    const remove = `i=0; while [ $i -lt 20 ] && { ${left}; }; do rmdir ${dirs.map((dir) => `${dir}/c*`).join(' ')} 2>/dev/null; rmdir ${dirs.join(' ')} 2>/dev/null || sleep 0.1; i=$((i+1)); done`;
    return `${kill}\n${remove}`;
  }

  /** Kills every command's processes and removes the worker's cgroups (for a worker about to exit). Never rejects. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#free.length = 0;
    const live = [...this.#live];
    this.#live.clear();
    for (const dirs of live) killCgroup(dirs[0], this.#version);
    // Bounded: the supervisor waits for the worker's exit; the guard or the next start removes what is left.
    await Promise.all(live.map((dirs) => removeCgroups(dirs, this.#version, [5, 20, 50, 100])));
    for (const dir of this.#workerDirs) tryRmdir(dir);
  }
}

/**
 * Kills what is left in the cgroups of shell workers that are gone (crashed, killed with SIGKILL)
 * under `parent`, and removes them. A worker is known by pid and start time, so a new process that
 * took a dead worker's pid does not keep its cgroups alive. Never rejects.
 */
async function removeDeadWorkers(parent: string, version: 1 | 2): Promise<void> {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  await Promise.all(
    names.map(async (name) => {
      const match = WORKER_NAME.exec(name);
      if (!match || processStartTime(Number(match[1])) === match[2]) return;
      const dir = `${parent}/${name}`;
      if (await removeCgroups(commandDirs(dir), version, [5, 20, 50, 100])) tryRmdir(dir);
    }),
  );
}
