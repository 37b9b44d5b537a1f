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
  sandboxMaxFileBytes: 1024 * 1024 * 1024,
  sandboxTmpBytes: 512 * 1024 * 1024,
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
  /**
   * Not part of the `shell` config section: the supervisor adds the config file and custom toolset
   * modules it was started with, which sandbox mode keeps read-only when they lie in the workspace.
   */
  serverFiles?: ServerFile[];
}

/** Fills in defaults for what `input` leaves out; the supervisor sends a validated section. */
export function shellSettings(input: unknown): ShellSettings {
  const given = input && typeof input === 'object' ? (input as Partial<ShellSettings>) : {};
  const settings = { ...SHELL_DEFAULTS, ...Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)) } as ShellSettings;
  for (const key of ['commandTimeoutMs', 'maxOutputBytes', 'maxResultBytes', 'maxReadBytes', 'maxListEntries', 'maxProcesses', 'sandboxMaxProcesses', 'sandboxMaxFileBytes', 'sandboxTmpBytes'] as const) {
    if (!Number.isInteger(settings[key]) || settings[key] <= 0) throw new TypeError(`shell.${key} must be a positive integer, got ${String(settings[key])}`);
  }
  return settings;
}
