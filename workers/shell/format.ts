import { constants as osConstants } from 'node:os';
import type { Listing } from './list-directory';
import { jsonBytes } from './reply-budget';
import type { RunResult } from './runner';
import type { ProcessRow, SystemInfo } from './system-info';
import { asTerminalShows } from './terminal-text';

/** The fields of an exec result that its text shows: the run's result, what ran, and where. */
export type ExecFields = Omit<RunResult, 'pid' | 'sourceBytes'> & { command: string; sandboxed: boolean };

/**
 * What programs print when an allocation fails: glibc's strerror(ENOMEM), perl, Python, C++, V8,
 * Go, the JVM. Only read for a failed sandboxed command, to point at the memory limit.
 */
const OUT_OF_MEMORY = /Cannot allocate memory|out of memory|MemoryError|std::bad_alloc|allocation failed|OutOfMemoryError/i;

/**
 * The readable text of an exec result: status line, notes, then each non-empty stream, as a
 * terminal shows it (terminal-text.ts).
 * `memoryLimitBytes`: the sandbox's per-process memory limit, named when a failed command's
 * stderr reads like an allocation that failed. `commandMemoryBytes`: the memory limit of the whole
 * command (its cgroup's), named when the kernel killed a process of the command at it.
 * `processLimit`: the process limit of the whole command and the setting it comes from.
 * `notes`: more lines to say above the output (hidden-programs.ts, shell-dialect.ts).
 */
export function formatExec(
  result: ExecFields,
  timeoutMs: number,
  capBytes: number,
  memoryLimitBytes?: number,
  commandMemoryBytes?: number,
  processLimit?: { count: number; setting: string },
  notes: readonly string[] = [],
): string {
  const status = result.exitCode !== null ? `exit code ${result.exitCode}${signalNote(result.exitCode)}` : `killed by ${result.signal ?? 'a signal'}`;
  const lines = [`${status} after ${result.durationMs} ms${result.sandboxed ? ' (sandboxed)' : ''}`];
  if (result.timedOut) lines.push(`timed out after ${timeoutMs} ms: the command and every process it started were killed; output so far below`);
  if (result.isCanceled) lines.push('cancelled: the command and every process it started were killed; output so far below');
  if (result.oomKilled && commandMemoryBytes !== undefined) {
    lines.push(`the command reached its memory limit of ${Math.round(commandMemoryBytes / 1024 ** 2)} MiB, all its processes together (shell.commandMaxMemoryBytes): the kernel killed a process of it`);
  } else if (memoryLimitBytes !== undefined && result.exitCode !== 0 && OUT_OF_MEMORY.test(result.stderr)) {
    lines.push(`each process in the sandbox may use at most ${Math.round(memoryLimitBytes / 1024 ** 2)} MiB of memory (shell.sandboxMaxMemoryBytes): the failure below may be that limit`);
  }
  if (result.processLimitReached && processLimit) {
    lines.push(`the command reached its limit of ${processLimit.count} processes and threads, all its processes together (${processLimit.setting}): the kernel refused it more ("Cannot fork", "Resource temporarily unavailable")`);
  }
  lines.push(...notes);
  const rendered = { stdout: asTerminalShows(result.stdout), stderr: asTerminalShows(result.stderr) };
  if (rendered.stdout !== result.stdout || rendered.stderr !== result.stderr) lines.push(RENDERED_NOTE);
  const stream = (name: 'stdout' | 'stderr', text: string, truncated: boolean, bytes: number) => {
    if (text === '' && !truncated) return;
    text = rendered[name];
    lines.push(`--- ${name} ---`, text.endsWith('\n') ? text.slice(0, -1) : text);
    // Cut by the output cap or only by the reply's budget: the note is true of both.
    if (truncated) lines.push(`[${name} cut: ${bytes} bytes were written in all, more than fit (the output cap of ${capBytes} bytes per stream, then the reply's size); shown: its head and tail around the marker]`);
  };
  stream('stdout', result.stdout, result.stdoutTruncated, result.stdoutBytes);
  stream('stderr', result.stderr, result.stderrTruncated, result.stderrBytes);
  if (result.stdout === '' && result.stderr === '') lines.push('(no output)');
  return lines.join('\n');
}

/** Said once above the streams when asTerminalShows changed them. */
const RENDERED_NOTE = 'output below as a terminal shows it: escape sequences (colours) dropped, lines redrawn with \\r (progress bars) in their last state; structuredContent has every byte';

/**
 * What a shell's 128 + n code usually means: a process the shell waited for was killed by signal
 * n. In sandbox mode every signal from inside reaches us this way (bubblewrap's init reports its child's
 * signal as 128 + n), so a killed command reads `exit code 143 (128 + 15: SIGTERM…)` there.
 */
function signalNote(code: number): string {
  const name = code > 128 && code < 128 + 65 ? Object.entries(osConstants.signals).find(([, n]) => n === code - 128)?.[0] : undefined;
  return name ? ` (128 + ${code - 128}: usually a process killed by ${name})` : '';
}

/** The readable text of a listing; `cutToFit`: entries were left out so that the reply fits (fitListing). */
export function formatDir(listing: Listing, cutToFit = false): string {
  const head = `${listing.path}: ${listing.total} entr${listing.total === 1 ? 'y' : 'ies'}`;
  const why = cutToFit ? ': more would not fit in one reply (shell.maxResultBytes); list a subdirectory, or use exec (ls, find)' : '';
  const tail = listing.truncated ? [`[first ${listing.entries.length} of ${listing.total} shown${why}]`] : [];
  return [head, ...listing.entries.map(dirRow), ...tail].join('\n');
}

function dirRow(entry: Listing['entries'][number]): string {
  const mark = entry.type === 'directory' ? '/' : entry.type === 'symlink' ? '@' : '';
  const odd = entry.nameNotUtf8 ? '  [name not UTF-8, shown with U+FFFD: file tools cannot reach it; exec can, e.g. ls -b]' : '';
  return `${entry.type.padEnd(9)} ${String(entry.sizeBytes).padStart(12)}  ${entry.modified}  ${shownName(entry.name)}${mark}${odd}`;
}

/** Room for the reply's envelope, the header and the closing line of a listing. */
const LISTING_ROOM = 1024;

/**
 * The listing cut to the entries whose row (text item) and entry (structuredContent) fit in
 * `budgetBytes` of JSON as UTF-8, with `truncated` set when some were left out. Each name is
 * there twice and a control character takes six bytes of JSON, seven in the quoted row: 5,000
 * names of 250 such characters (any command can make them) made a 16 MiB reply, and the SDK's
 * stdio client drops the connection past 10 MiB.
 */
export function fitListing(listing: Listing, budgetBytes: number): { listing: Listing; cutToFit: boolean } {
  const kept = rowsThatFit(listing.entries, (entry) => jsonBytes(dirRow(entry)) + Buffer.byteLength(JSON.stringify(entry)), budgetBytes - LISTING_ROOM - 2 * jsonBytes(listing.path));
  if (kept === listing.entries.length) return { listing, cutToFit: false };
  return { listing: { ...listing, entries: listing.entries.slice(0, kept), truncated: true }, cutToFit: true };
}

/** How many of `rows`, from the first, take no more than `budgetBytes` together. */
function rowsThatFit<T>(rows: T[], bytesOf: (row: T) => number, budgetBytes: number): number {
  let left = budgetBytes;
  let kept = 0;
  for (const row of rows) {
    left -= bytesOf(row);
    if (left < 0) break;
    kept++;
  }
  return kept;
}

/**
 * A file name for a one-line row: a name with a line break, a tab or another control character
 * is shown JSON-quoted (`"new\nline.txt"`), so that it stays one row; structuredContent has it
 * as it is.
 */
function shownName(name: string): string {
  return /[\u0000-\u001f\u007f]/.test(name) ? JSON.stringify(name) : name;
}

export function formatSystemInfo(info: SystemInfo): string {
  const lines = [
    `hostname: ${info.hostname}`,
    `platform: ${info.platform} (${info.osType} ${info.osRelease}, ${info.arch})`,
    `cpu: ${info.cpuCores} × ${info.cpuModel}; load ${info.loadAverage.join(' ')}`,
    `memory: ${bytesText(info.memoryFreeBytes)} free of ${bytesText(info.memoryTotalBytes)}`,
    info.disk
      ? `disk (${info.disk.path}): ${bytesText(info.disk.availableBytes)} available of ${bytesText(info.disk.totalBytes)} (${info.disk.usedPercent}% used)`
      : 'disk: unknown',
    `uptime: ${info.uptimeSeconds} s`,
    `sandbox: ${info.sandbox.enabled ? 'on' : 'off'}; bubblewrap ${info.sandbox.available ? 'available' : `unavailable${info.sandbox.reason ? ` (${info.sandbox.reason})` : ''}${info.sandbox.fix ? `; to fix it, ${info.sandbox.fix}` : ''}`}`,
    `limits: a command is killed after ${info.commandTimeoutMs / 1000} s${sandboxLimits(info.sandbox.limits)}`,
    cgroupLine(info.cgroup, info.sandbox),
  ];
  return lines.join('\n');
}

/** GiB with one decimal from 1 GiB, else MiB (a 20 MiB disk showed as "0.0 GiB"), else KiB. */
function bytesText(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  if (bytes >= 1024 ** 2) return `${Math.round(bytes / 1024 ** 2)} MiB`;
  return `${Math.round(bytes / 1024)} KiB`;
}

function sandboxLimits(limits: SystemInfo['sandbox']['limits']): string {
  if (!limits) return '';
  const memory = limits.maxMemoryBytes === null ? 'no memory limit' : `${bytesText(limits.maxMemoryBytes)} of memory per process`;
  return `; in the sandbox, files up to ${bytesText(limits.maxFileBytes)}, ${memory}, /tmp of ${bytesText(limits.tmpBytes)}, ${limits.network ? "the host's network" : 'no network'}${homeText(limits.home)}`;
}

function homeText(home: NonNullable<SystemInfo['sandbox']['limits']>['home']): string {
  if (!home) return '';
  return `, HOME ${home.path} ${home.kept ? 'kept between commands' : 'empty at each command'}`;
}

function cgroupLine(cgroup: SystemInfo['cgroup'], sandbox: SystemInfo['sandbox']): string {
  if (!cgroup.available) {
    const unavailable = `cgroups: unavailable (${cgroup.reason ?? 'unknown'})`;
    if (!sandbox.enabled || !sandbox.available || !sandbox.limits) return `${unavailable}; no process or memory limit per command, leftover processes are killed by process group only`;
    // The usual case for an ordinary user: it said "no process limit" and "by process group only",
    // though the sandbox's rlimit counts one command's processes and its pid namespace ends them all.
    const processes =
      sandbox.limits.maxProcesses === null
        ? 'no process or memory limit per command (root is exempt from the process rlimit; memory is limited per process only, above)'
        : `at most ${sandbox.limits.maxProcesses} processes per command (the sandbox's rlimit), no memory limit per command (only per process, above)`;
    return `${unavailable}; ${processes}; what a command leaves running is killed with its sandbox`;
  }
  const limits = [
    cgroup.maxProcesses === null ? 'no process limit' : `at most ${cgroup.maxProcesses} processes`,
    cgroup.maxMemoryBytes === null ? 'no memory limit' : `${Math.round(cgroup.maxMemoryBytes / 1024 ** 2)} MiB of memory`,
  ];
  return `cgroups: v${cgroup.version}, each command in its own, ${limits.join(' and ')} for the whole command; what it leaves running is killed when it ends${cgroup.reason ? ` (${cgroup.reason})` : ''}`;
}

type ProcessListing = { processes: ProcessRow[]; total: number; truncated: boolean; argumentsHidden?: boolean };

export function formatProcesses(listing: ProcessListing, cutToFit = false): string {
  const rows = listing.processes.map(processRow);
  const head = `${'PID'.padStart(7)} ${'%CPU'.padStart(6)} ${'RSS KiB'.padStart(9)}  ${'NAME'.padEnd(16)} COMMAND`;
  const why = cutToFit ? ': more would not fit in one reply (shell.maxResultBytes); give a filter' : '';
  const tail = listing.truncated ? [`[first ${listing.processes.length} of ${listing.total} shown${why}]`] : [`${listing.total} process${listing.total === 1 ? '' : 'es'}`];
  if (listing.argumentsHidden) tail.push('(sandbox mode: commands are shown without their arguments)');
  return [head, ...rows, ...tail].join('\n');
}

function processRow(row: ProcessRow): string {
  return `${String(row.pid).padStart(7)} ${String(row.cpuPercent).padStart(6)} ${String(Math.round(row.memoryRssBytes / 1024)).padStart(9)}  ${row.name.padEnd(16)} ${row.command}`;
}

/**
 * The process listing cut to the rows that fit in `budgetBytes` of JSON, as fitListing does: a
 * command line of 300 control characters takes ~4 KB as a row and an entry, so a `maxProcesses`
 * raised to a few thousand could pass the SDK stdio client's 10 MiB and drop the session.
 */
export function fitProcesses<T extends ProcessListing>(listing: T, budgetBytes: number): { listing: T; cutToFit: boolean } {
  const kept = rowsThatFit(listing.processes, (row) => jsonBytes(processRow(row)) + Buffer.byteLength(JSON.stringify(row)), budgetBytes - LISTING_ROOM);
  if (kept === listing.processes.length) return { listing, cutToFit: false };
  return { listing: { ...listing, processes: listing.processes.slice(0, kept), truncated: true }, cutToFit: true };
}
