import { z } from 'zod';

/** The `shell` section: spec 002's tools, run in the shell pool of child processes. */
export const shellSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    /** Run each command under bubblewrap and confine file tools to the workspace. */
    sandbox: z.boolean().default(true),
    /** The directory commands run in and the sandbox confines to; default: the current directory. */
    workspace: z.string().min(1).optional(),
    commandTimeoutMs: z.number().int().positive().max(24 * 3600 * 1000).default(30_000),
    maxOutputBytes: z.number().int().positive().default(10 * 1024 * 1024),
    /** Log each command (spec 002's DEBUG). */
    logCommands: z.boolean().default(false),
    workers: z.number().int().min(1).max(64).default(2),
  })
  .describe('shell toolset');

export type ShellConfig = z.infer<typeof shellSchema>;
