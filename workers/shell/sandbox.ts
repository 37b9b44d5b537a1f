import { spawn } from 'node:child_process';
import { accessSync, constants, lstatSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { sandboxCommandEnv } from './command-env';
import { readOnlyMountArgs, type ProtectedPath } from './protected-paths';
import { diagnoseSandbox, namespaceSettings, type SandboxCause } from './sandbox-diagnosis';

/** The Debian package that provides `bwrap`; named in every refusal. */
export const SANDBOX_PACKAGE = 'bubblewrap';

export interface SandboxOptions {
  /** Path of the bwrap binary; default `/usr/bin/bwrap`. */
  bwrapPath: string;
  /** Real path (symlinks resolved) of the one writable directory. */
  workspace: string;
  /** RLIMIT_NPROC. The kernel exempts uid 0 from it: as root the pid namespace and the timeout bound a fork bomb. */
  maxProcesses: number;
  /** RLIMIT_FSIZE in bytes, rounded down to 512-byte blocks: no single file written grows past it. */
  maxFileBytes: number;
  /** RLIMIT_CPU in seconds (whole seconds, at least 1). */
  cpuSeconds: number;
  /** Share the host's network namespace instead of an empty one of its own. Default false. */
  network?: boolean;
  /** RLIMIT_DATA in bytes (heap and private writable mappings of each process); none when unset. */
  maxMemoryBytes?: number;
  /** Size of the private /tmp (tmpfs) in bytes. */
  tmpBytes: number;
  /** Paths inside the workspace bound read-only over it: the server's own code and config (protected-paths.ts). Default none. */
  readOnly?: readonly ProtectedPath[];
  /** HOME: a host directory bound read-write at `inside`, or without `host` an empty tmpfs there (sandbox-home.ts). */
  home?: { inside: string; host?: string };
}

export interface SandboxState {
  available: boolean;
  /** Why it is not available (missing binary, no namespaces), when it is not. */
  reason?: string;
  /** When it is not available: the cause (sandbox-diagnosis.ts), a stable word for programs. */
  cause?: SandboxCause;
  /** When it is not available: what to do about it, for people. */
  fix?: string;
}

/** Top-level system directories, bound read-only when they are directories, recreated when symlinks (merged /usr). */
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt'];
/**
 * Files hidden behind empty ones even though /etc is visible: password hashes and their backups
 * (the sandbox runs as the server's user, which may be root and so read them), and the host's SSH
 * private keys (found at start); directories of private keys are covered by an empty tmpfs.
 */
const HIDDEN_FILES = ['/etc/shadow', '/etc/gshadow', '/etc/shadow-', '/etc/gshadow-', '/etc/security/opasswd'];
const HIDDEN_DIRS = ['/etc/ssl/private'];
/** Size of the sandbox's /dev/shm (POSIX shared memory, semaphores), as Docker's default; at most `tmpBytes`. */
const MAX_SHM_BYTES = 64 * 1024 * 1024;
const PATH_INSIDE = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

let systemMounts: string[] | undefined;

/**
 * With the host's network: the file /etc/resolv.conf names, bound at its own path when it lies
 * outside the system directories (systemd-resolved's `/run/systemd/resolve/stub-resolv.conf`),
 * so that the link resolves inside the sandbox and names resolve; none otherwise.
 */
export function resolverMountArgs(resolvConf = '/etc/resolv.conf'): string[] {
  let real: string;
  try {
    real = realpathSync(resolvConf);
  } catch {
    return [];
  }
  return SYSTEM_PATHS.some((dir) => real === dir || real.startsWith(`${dir}/`)) ? [] : ['--ro-bind', real, real];
}

function systemMountArgs(): string[] {
  if (systemMounts) return systemMounts;
  const args: string[] = [];
  for (const dir of SYSTEM_PATHS) {
    try {
      const stat = lstatSync(dir);
      if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
      else if (stat.isDirectory()) args.push('--ro-bind', dir, dir);
    } catch {
      // Not on this system.
    }
  }
  let hostKeys: string[] = [];
  try {
    hostKeys = readdirSync('/etc/ssh').filter((name) => /^ssh_host_.*_key$/.test(name)).map((name) => `/etc/ssh/${name}`);
  } catch {
    // No SSH server here.
  }
  for (const file of [...HIDDEN_FILES, ...hostKeys]) {
    try {
      if (lstatSync(file).isFile()) args.push('--ro-bind', '/dev/null', file);
    } catch {
      // Not there.
    }
  }
  for (const dir of HIDDEN_DIRS) {
    try {
      if (lstatSync(dir).isDirectory()) args.push('--tmpfs', dir);
    } catch {
      // Not there.
    }
  }
  systemMounts = args;
  return args;
}

/**
 * Kernel settings read-only for a sandbox started by root. Root inside is the host's root (no
 * user namespace is made for root), and writing `/proc/sys` takes no capability, only the file's
 * owner: `kernel.core_pattern` would run a program as root outside the sandbox. bubblewrap 0.8
 * covers `/proc/irq` and `/proc/bus` itself but not these. Another user cannot write them anyway.
 * The host's `/proc/sys` shows the reader's namespaces (the sandbox's loopback-only `net`).
 */
const ROOT_PROC_COVERS = ['--ro-bind', '/proc/sys', '/proc/sys', '--ro-bind-try', '/proc/sysrq-trigger', '/proc/sysrq-trigger'];

/**
 * The argv that runs `command` with `/bin/sh -c` under bubblewrap:
 *
 * - `--unshare-all` (user where possible, ipc, pid, net, uts, cgroup): no network but a private
 *   loopback, its own pid namespace (the supervisor and every other process are invisible and
 *   cannot be signalled; when the command ends, bwrap's pid 1 takes every descendant with it,
 *   double-forked daemons included), `--die-with-parent` (the worker dies → the sandbox dies),
 *   `--new-session` (no TIOCSTI into a terminal), `--cap-drop ALL` (root inside keeps no
 *   capabilities: it cannot remount, mknod or load modules) and `/proc/sys` read-only for root.
 * - System directories read-only (`/usr`, `/etc`, `/opt` and the `/bin`, `/lib*` links), password
 *   hashes hidden, a fresh `/proc` and a minimal, read-only `/dev` with a `/dev/shm` of at most
 *   64 MiB, a private `/tmp` of `tmpBytes`, HOME (`home`, sandbox-home.ts), and the
 *   workspace bound read-write at its own path as the working directory, less `readOnly` (the
 *   server's own code and config when the workspace holds them). Nothing else of the host file
 *   system exists inside.
 * - Resource limits set by the sandboxed shell before it evaluates the command (see
 *   `limitsPrelude`): processes, file size, CPU seconds, memory, no core dumps. The wall-clock limit is the
 *   runner's timeout. Each extra mount costs ~1 ms here, so only the two hash files are masked.
 *
 * The environment is not inherited: the caller passes `sandboxEnv()` to the spawn.
 */
export function sandboxArgv(command: string | undefined, options: SandboxOptions): { file: string; args: string[] } {
  const ws = options.workspace;
  const args = [
    '--die-with-parent',
    '--new-session',
    '--unshare-all',
    ...(options.network ? ['--share-net'] : []),
    '--hostname',
    'sandbox',
    ...(process.getuid?.() === 0 ? ['--cap-drop', 'ALL'] : []),
    ...systemMountArgs(),
    ...(options.network ? resolverMountArgs() : []),
    '--proc',
    '/proc',
    ...(process.getuid?.() === 0 ? ROOT_PROC_COVERS : []),
    '--dev',
    '/dev',
    // bwrap's /dev is a tmpfs of no set size (half the host's RAM): a command filled it with
    // gigabytes the OOM killer cannot take back from it. Read-only but for a capped /dev/shm.
    '--size',
    String(Math.min(options.tmpBytes, MAX_SHM_BYTES)),
    '--tmpfs',
    '/dev/shm',
    '--remount-ro',
    '/dev',
    '--size',
    String(options.tmpBytes),
    '--tmpfs',
    '/tmp',
    ...homeMountArgs(options),
    // After /tmp, so a workspace under /tmp is not hidden by the private one.
    '--bind',
    ws,
    ws,
    // After the workspace's bind, which they cover.
    ...(options.readOnly?.length ? readOnlyMountArgs(ws, options.readOnly) : []),
    '--chdir',
    ws,
    '--',
    '/bin/sh',
    '-c',
    command === undefined ? warmPrelude(options) : limitsPrelude(options),
    'sh',
    ...(command === undefined ? [] : [command]),
  ];
  return { file: options.bwrapPath, args };
}

/** The sandbox's HOME, kept between commands when it has a host directory; never in the workspace (homeInside). */
function homeMountArgs(options: SandboxOptions): string[] {
  const home = options.home;
  if (!home) return [];
  return home.host ? ['--bind', home.host, home.inside] : ['--size', String(options.tmpBytes), '--tmpfs', home.inside];
}

/**
 * The script of a sandbox started ahead of its command (`sandboxArgv(undefined, …)`): it waits for
 * the command on stdin, then gives the command an empty stdin and runs it as `limitsPrelude` does.
 * Starting bubblewrap is most of a sandboxed command's cost (~5 ms here); a worker keeps one such
 * sandbox ready so the next command does not wait for it. Each sandbox still runs one command.
 */
export function warmPrelude(options: Pick<SandboxOptions, 'maxProcesses' | 'maxFileBytes' | 'cpuSeconds' | 'maxMemoryBytes'>): string {
  return `cmd=$(cat) || exit 125; exec </dev/null; ${limitsPrelude(options).replace(RUN_FIRST_ARGUMENT, RUN_COMMAND_READ)}`;
}

/**
 * Runs the command given as `$1` in a shell of its own, as a plain `sh -c` would: `$0` sh, `$#` 0,
 * no variable of ours. It was `eval "$c"` in this shell, one exec fewer (~0.4 ms of CPU, ~1 ms on a
 * busy machine), but dash then prefixed every "not found" and syntax error with the builtin's name
 * (`sh: 1: eval: node: not found`), and the command saw our variables: `$c`, or in a warm sandbox
 * `$cmd` holding the command's own text. exec keeps the process, its limits and its pid.
 */
const RUN_FIRST_ARGUMENT = 'exec /bin/sh -c "$1" sh';
const RUN_COMMAND_READ = 'exec /bin/sh -c "$cmd" sh';

/**
 * The script that sets the resource limits with the shell's own `ulimit` and then runs the command
 * (`$1`) in a shell exec'd in its place: one exec fewer than `prlimit … sh -c` (measured ~1-2.5 ms of
 * a ~10 ms sandboxed command here). `ulimit -f` counts 512-byte blocks in POSIX shells, `-d` KiB; the
 * process limit is `-p` in dash and `-u` in bash, so both are tried quietly.
 * Memory is RLIMIT_DATA, not RLIMIT_AS: address space only reserved (V8's pointer cage, wasm
 * guard regions, the JVM's heap reservation) does not count, so node and java start under it,
 * while what a process really allocates does; past it malloc fails (perl "Out of memory!",
 * Python MemoryError, V8 aborting with "allocation failed").
 */
export function limitsPrelude(options: Pick<SandboxOptions, 'maxProcesses' | 'maxFileBytes' | 'cpuSeconds' | 'maxMemoryBytes'>): string {
  const blocks = Math.max(1, Math.floor(options.maxFileBytes / 512));
  const processes = options.maxProcesses;
  const memory = options.maxMemoryBytes === undefined ? '' : `ulimit -d ${Math.max(1, Math.floor(options.maxMemoryBytes / 1024))}; `;
  return (
    `{ ulimit -p ${processes} || ulimit -u ${processes}; } 2>/dev/null; ` +
    `ulimit -f ${blocks}; ulimit -t ${Math.max(1, options.cpuSeconds)}; ulimit -c 0; ${memory}${RUN_FIRST_ARGUMENT}`
  );
}

/** Whether the sandbox shows directory `dir` of the host (a system directory, or in the workspace), by real path. */
export function shownInSandbox(dir: string, workspace: string): boolean {
  const real = realPathOf(dir);
  return [...SYSTEM_PATHS, workspace].some((shown) => real === shown || real.startsWith(`${shown}/`));
}

/** Whether `dir` is, by real path, a directory of the sandbox's PATH. */
export function onSandboxPath(dir: string): boolean {
  const real = realPathOf(dir);
  return PATH_INSIDE.split(':').some((entry) => realPathOf(entry) === real);
}

function realPathOf(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/** The whole environment of a sandboxed command: nothing of the host's leaks in (command-env.ts). */
export function sandboxEnv(workspace: string, network = false, home?: string): NodeJS.ProcessEnv {
  // Last on PATH, where `pip install --user` and `npm`'s user prefix put programs: found, but a
  // program left there by one session's command never shadows a system one in another's.
  return sandboxCommandEnv(workspace, home ? `${PATH_INSIDE}:${home}/.local/bin` : PATH_INSIDE, network, home);
}

/**
 * Checks that bubblewrap is installed and can create its namespaces here, by running `true` in
 * the exact sandbox commands get. Resolves (never rejects) within `timeoutMs` (default 5000).
 */
export function probeSandbox(options: SandboxOptions, timeoutMs = 5000): Promise<SandboxState> {
  try {
    accessSync(options.bwrapPath, constants.X_OK);
  } catch {
    return Promise.resolve({ available: false, reason: `${options.bwrapPath} is not installed or not executable`, ...diagnoseSandbox(false, process.getuid?.(), {}) });
  }
  const failed = (reason: string): SandboxState => ({ available: false, reason, ...diagnoseSandbox(true, process.getuid?.(), namespaceSettings()) });
  return new Promise((resolve) => {
    const { file, args } = sandboxArgv('true', options);
    let stderr = '';
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'], env: sandboxEnv(options.workspace, options.network, options.home?.inside) });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(failed(`bwrap did not finish a test run within ${timeoutMs} ms`));
    }, timeoutMs);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 2000) stderr += chunk;
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve(failed(`cannot run ${file}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ available: true });
      else resolve(failed(`bwrap cannot create its sandbox here (${stderr.trim() || `exit ${code ?? signal}`})`));
    });
  });
}
