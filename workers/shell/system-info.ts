import { execFile } from 'node:child_process';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CgroupState } from './command-cgroups';
import type { SandboxState } from './sandbox';
import type { SandboxCause } from './sandbox-diagnosis';

export interface SystemInfo {
  platform: string;
  osType: string;
  osRelease: string;
  arch: string;
  hostname: string;
  cpuCores: number;
  cpuModel: string;
  loadAverage: number[];
  memoryTotalBytes: number;
  memoryFreeBytes: number;
  /** The file system holding the workspace. */
  disk: { path: string; totalBytes: number; freeBytes: number; availableBytes: number; usedPercent: number } | null;
  uptimeSeconds: number;
  nodeVersion: string;
  sandbox: { enabled: boolean; available: boolean; tool: 'bubblewrap'; reason?: string; cause?: SandboxCause; fix?: string; limits?: SandboxLimits };
  /** Wall-clock limit of one command, sandboxed or not. */
  commandTimeoutMs: number;
  /**
   * Each command's own cgroup (both modes): its limits for the whole command, or why there is none
   * (then the rlimits of the sandbox and the process group are all there is).
   */
  cgroup: CgroupState;
}

/** What a sandboxed command may use, so that a caller can plan for it (sandbox mode only). */
export interface SandboxLimits {
  /** Largest file a command can write. */
  maxFileBytes: number;
  /** Memory each process may allocate; null: no limit. */
  maxMemoryBytes: number | null;
  /**
   * Processes of one command (RLIMIT_NPROC, counted in the command's own user namespace, so the
   * server's user's other processes do not count); null for root, whom the kernel exempts.
   */
  maxProcesses: number | null;
  /** Size of its private /tmp. */
  tmpBytes: number;
  /** Whether it shares the host's network; false: it has none. */
  network: boolean;
  /** HOME inside the sandbox; `kept`: the same directory for every command and restart, else empty at each command. */
  home?: { path: string; kept: boolean };
}

/** Everything spec 002's getSystemInfo names, with the unit in each field name. Never throws for the disk part. */
export async function getSystemInfo(
  workspace: string,
  sandbox: { enabled: boolean; state: SandboxState; limits?: SandboxLimits },
  commandTimeoutMs: number,
  cgroup: CgroupState = { available: false, version: null, maxProcesses: null, maxMemoryBytes: null, reason: 'not set up' },
): Promise<SystemInfo> {
  const cpus = os.cpus();
  let disk: SystemInfo['disk'] = null;
  try {
    const stat = await fs.statfs(workspace);
    const totalBytes = stat.blocks * stat.bsize;
    const freeBytes = stat.bfree * stat.bsize;
    const availableBytes = stat.bavail * stat.bsize;
    const usedBytes = totalBytes - freeBytes;
    disk = {
      path: workspace,
      totalBytes,
      freeBytes,
      availableBytes,
      // df's rule: used of what this user can fill (blocks reserved for root left out), so 100 %
      // means full for the commands; of the total it read 9.7 % where df said 25 %.
      usedPercent: usedBytes + availableBytes > 0 ? round1((usedBytes / (usedBytes + availableBytes)) * 100) : 0,
    };
  } catch {
    // statfs is missing on some platforms; the rest is still useful.
  }
  return {
    platform: os.platform(),
    osType: os.type(),
    osRelease: os.release(),
    arch: os.arch(),
    hostname: os.hostname(),
    cpuCores: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    loadAverage: os.loadavg().map(round1),
    memoryTotalBytes: os.totalmem(),
    memoryFreeBytes: os.freemem(),
    disk,
    uptimeSeconds: Math.round(os.uptime()),
    nodeVersion: process.version,
    sandbox: {
      enabled: sandbox.enabled,
      available: sandbox.state.available,
      tool: 'bubblewrap',
      ...(sandbox.state.reason ? { reason: sandbox.state.reason } : {}),
      // Sandbox mode only: with it off there is nothing to fix.
      ...(sandbox.enabled && sandbox.state.cause ? { cause: sandbox.state.cause, fix: sandbox.state.fix } : {}),
      ...(sandbox.enabled && sandbox.limits ? { limits: sandbox.limits } : {}),
    },
    commandTimeoutMs,
    cgroup,
  };
}

export interface ProcessRow {
  pid: number;
  name: string;
  command: string;
  /** CPU time over the process's lifetime as a share of one core, like `ps`'s %CPU. */
  cpuPercent: number;
  memoryRssBytes: number;
  memoryPercent: number;
}

/** Linux's USER_HZ: the unit of the times in /proc/<pid>/stat. */
const CLOCK_TICKS = 100;
const MAX_COMMAND_CHARS = 300;
let pageSize: number | undefined;

/**
 * Lists processes: `name` is the kernel's process name (comm; its program's whole name when comm
 * was cut at 15 bytes, see fullName), `command` the command line (cut at
 * 300 characters). `filter` is a case-insensitive substring of the name; rows are sorted by pid and
 * at most `limit` are returned (`total` counts every match). Reads /proc; elsewhere runs `ps`.
 *
 * With `withArguments: false` (sandbox mode) `command` is the program alone, its arguments
 * dropped: the tool runs in the pool worker, outside the sandbox's pid namespace, and host command
 * lines carry secrets (`--headers "Authorization:Bearer …"`, other sessions' commands) that a
 * sandboxed command cannot see. The program is argv[0] up to its first space, since a process that
 * rewrites its title (setproctitle) puts all of it in argv[0].
 */
export async function listProcesses(
  filter: string | undefined,
  limit: number,
  { withArguments = true }: { withArguments?: boolean } = {},
): Promise<{ processes: ProcessRow[]; total: number; truncated: boolean; argumentsHidden: boolean }> {
  const rows = existsSync('/proc/self/stat') ? await fromProc(withArguments) : await fromPs(withArguments);
  const needle = filter?.toLowerCase();
  const matching = needle ? rows.filter((row) => row.name.toLowerCase().includes(needle)) : rows;
  matching.sort((a, b) => a.pid - b.pid);
  return { processes: matching.slice(0, limit), total: matching.length, truncated: matching.length > limit, argumentsHidden: !withArguments };
}

/** Linux keeps a process name (comm) to 15 bytes (TASK_COMM_LEN less its NUL). */
const COMM_MAX_BYTES = 15;

/**
 * The process name: the kernel's comm, or, when comm was cut at 15 bytes, the name of the program
 * it was cut from (argv[0]'s last path component, when that starts with comm). Filtering on the
 * cut name alone found nothing for `systemd-journald` or `containerd-shim-runc-v2`, though the
 * command column showed them.
 */
function fullName(comm: string, argv: string): string {
  if (Buffer.byteLength(comm) !== COMM_MAX_BYTES) return comm;
  const program = path.posix.basename(programOf(argv));
  return program.length > comm.length && program.startsWith(comm) ? program : comm;
}

/** The program of a command line given as its NUL-separated argv, without its arguments. */
function programOf(argv: string): string {
  return argv.split('\0')[0].split(' ')[0];
}

async function fromProc(withArguments: boolean): Promise<ProcessRow[]> {
  const uptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  const total = os.totalmem();
  const page = systemPageSize();
  const pids = (await fs.readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
  const rows = await Promise.all(
    pids.map(async (pid): Promise<ProcessRow | undefined> => {
      try {
        const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
        const open = stat.indexOf('(');
        const close = stat.lastIndexOf(')');
        const comm = stat.slice(open + 1, close);
        const fields = stat.slice(close + 2).split(' ');
        const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
        const elapsed = uptime - Number(fields[19]) / CLOCK_TICKS;
        const rss = Number(fields[21]) * page;
        const argv = (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replace(/\0+$/, '');
        const name = fullName(comm, argv);
        let command = withArguments ? argv.replace(/\0/g, ' ') : programOf(argv);
        if (command === '') command = `[${name}]`;
        return {
          pid: Number(pid),
          name,
          command: command.length > MAX_COMMAND_CHARS ? `${command.slice(0, MAX_COMMAND_CHARS - 1)}…` : command,
          cpuPercent: elapsed > 0 ? round1((cpuSeconds / elapsed) * 100) : 0,
          memoryRssBytes: rss,
          memoryPercent: round1((rss / total) * 100),
        };
      } catch {
        return undefined; // ended while we looked
      }
    }),
  );
  return rows.filter((row): row is ProcessRow => row !== undefined);
}

function fromPs(withArguments: boolean): Promise<ProcessRow[]> {
  return new Promise((resolve) => {
    execFile('ps', ['-axo', 'pid=,pcpu=,rss=,pmem=,comm=,args='], { maxBuffer: 16 * 1024 * 1024 }, (error, stdout) => {
      if (error) return resolve([]);
      const rows: ProcessRow[] = [];
      for (const line of stdout.split('\n')) {
        const match = /^\s*(\d+)\s+([\d.]+)\s+(\d+)\s+([\d.]+)\s+(\S+)\s*(.*)$/.exec(line);
        if (!match) continue;
        rows.push({
          pid: Number(match[1]),
          cpuPercent: Number(match[2]),
          memoryRssBytes: Number(match[3]) * 1024,
          memoryPercent: Number(match[4]),
          name: match[5].split('/').pop() ?? match[5],
          // ps joins argv with spaces: without arguments, only its first word is surely the program.
          command: (withArguments ? match[6] : programOf(match[6])).slice(0, MAX_COMMAND_CHARS),
        });
      }
      resolve(rows);
    });
  });
}

/** The page size, from our own RSS in bytes (libuv) and in pages (/proc/self/stat). */
function systemPageSize(): number {
  if (pageSize) return pageSize;
  try {
    const pages = Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[21]);
    const ratio = process.memoryUsage().rss / pages;
    pageSize = 2 ** Math.round(Math.log2(ratio));
  } catch {
    pageSize = 4096;
  }
  return pageSize;
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
