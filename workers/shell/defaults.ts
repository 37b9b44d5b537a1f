import { totalmem } from 'node:os';
import type { ServerFile } from './protected-paths';

/**
 * Defaults of the `shell` config section, without zod: the worker applies them itself so it does
 * not load the schema library (12 MB of RSS in every pool worker). config/shell.ts uses the same
 * values for its schema defaults.
 */
export const SHELL_DEFAULTS = {
  enabled: true,
  sandbox: true,
  commandTimeoutMs: 30_000,
  maxOutputBytes: 10 * 1024 * 1024,
  maxResultBytes: 2 * 1024 * 1024,
  logCommands: false,
  workers: 2,
  concurrency: 16,
  maxReadBytes: 1024 * 1024,
  maxListEntries: 5_000,
  maxProcesses: 500,
  bwrapPath: '/usr/bin/bwrap',
  sandboxMaxProcesses: 512,
  commandMaxProcesses: 4096,
  sandboxMaxFileBytes: 1024 * 1024 * 1024,
  sandboxTmpBytes: 512 * 1024 * 1024,
  sandboxNetwork: false,
  commandCgroups: true,
} as const;

/** The settings a shell worker runs with (the `shell` section less `enabled` and `workers`). */
export interface ShellSettings {
  sandbox: boolean;
  workspace?: string;
  commandTimeoutMs: number;
  maxOutputBytes: number;
  maxResultBytes: number;
  logCommands: boolean;
  maxReadBytes: number;
  maxListEntries: number;
  maxProcesses: number;
  bwrapPath: string;
  sandboxMaxProcesses: number;
  sandboxMaxFileBytes: number;
  sandboxTmpBytes: number;
  /** Sandboxed commands share the host's network (default: none at all). */
  sandboxNetwork: boolean;
  /** RLIMIT_DATA of each sandboxed process in bytes, or false for none; default defaultMemoryLimit(). */
  sandboxMaxMemoryBytes: number | false;
  /**
   * Processes and threads of a whole command (its cgroup's pids.max, both modes), or false for
   * none; in sandbox mode the smaller of this and sandboxMaxProcesses. Default 4096.
   */
  commandMaxProcesses: number | false;
  /** Memory of a whole command (its cgroup, both modes) in bytes, or false for none; default defaultMemoryLimit(). */
  commandMaxMemoryBytes: number | false;
  /** Each command in a cgroup of its own when the server can make one (command-cgroups.ts). */
  commandCgroups: boolean;
  /**
   * Not part of the `shell` config section: the supervisor adds the config file and custom toolset
   * modules it was started with, which sandbox mode keeps read-only when they lie in the workspace.
   */
  serverFiles?: ServerFile[];
}

/** Fills in defaults for what `input` leaves out; the supervisor sends a validated section. */
export function shellSettings(input: unknown): ShellSettings {
  const given = input && typeof input === 'object' ? (input as Partial<ShellSettings>) : {};
  const settings = { ...SHELL_DEFAULTS, sandboxMaxMemoryBytes: defaultMemoryLimit(), commandMaxMemoryBytes: defaultMemoryLimit(), ...Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)) } as ShellSettings;
  for (const key of ['commandTimeoutMs', 'maxOutputBytes', 'maxResultBytes', 'maxReadBytes', 'maxListEntries', 'maxProcesses', 'sandboxMaxProcesses', 'sandboxMaxFileBytes', 'sandboxTmpBytes'] as const) {
    if (!Number.isInteger(settings[key]) || settings[key] <= 0) throw new TypeError(`shell.${key} must be a positive integer, got ${String(settings[key])}`);
  }
  if (settings.commandMaxProcesses !== false && (!Number.isInteger(settings.commandMaxProcesses) || settings.commandMaxProcesses <= 0)) {
    throw new TypeError(`shell.commandMaxProcesses must be false or a positive integer, got ${String(settings.commandMaxProcesses)}`);
  }
  for (const key of ['sandboxMaxMemoryBytes', 'commandMaxMemoryBytes'] as const) {
    const memory = settings[key];
    if (memory !== false && (!Number.isInteger(memory) || memory < MIN_MEMORY_LIMIT)) throw new TypeError(`shell.${key} must be false or an integer of at least ${MIN_MEMORY_LIMIT}, got ${String(memory)}`);
  }
  return settings;
}

/** The least memory limit accepted (64 MiB): below it a shell, perl or node cannot start. */
export const MIN_MEMORY_LIMIT = 64 * 1024 * 1024;

/**
 * Memory one sandboxed process may take when none is configured: half of the machine's, at most
 * 8 GiB. Why: a runaway command (a loop that appends, a whole disk image read into memory) then
 * fails with its own "out of memory" instead of sending the host's OOM killer after the server or
 * its neighbours; a build (tsc, webpack, rustc) rarely needs more than a few GiB per process.
 * The same value is the default for a whole command (`commandMaxMemoryBytes`, its cgroup): a
 * command of many processes then takes no more than one process could, and the other half stays
 * the server's and the host's; a parallel build (`make -j`, a test runner's workers) fits in it.
 */
export function defaultMemoryLimit(): number {
  return Math.min(Math.floor(totalmem() / 2), 8 * 1024 ** 3);
}

/**
 * The pids.max of each command's cgroup: `commandMaxProcesses` in both modes, and in sandbox mode
 * no more than `sandboxMaxProcesses`; undefined for none. Why unconfined too: without it a fork
 * bomb there took every pid of the host (measured: all 1,500 a test cgroup allowed, the server's
 * own forks failing beside it) until its timeout; memory was limited per command already.
 */
export function commandProcessLimit(settings: Pick<ShellSettings, 'sandbox' | 'sandboxMaxProcesses' | 'commandMaxProcesses'>): number | undefined {
  if (settings.commandMaxProcesses === false) return settings.sandbox ? settings.sandboxMaxProcesses : undefined;
  return settings.sandbox ? Math.min(settings.sandboxMaxProcesses, settings.commandMaxProcesses) : settings.commandMaxProcesses;
}
