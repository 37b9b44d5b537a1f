import { z } from 'zod';
import { MIN_MEMORY_LIMIT, SHELL_DEFAULTS as D } from '../workers/shell/defaults';

/** The `shell` section: spec 002's tools, run in the shell pool of child processes. */
export const shellSchema = z
  .strictObject({
    enabled: z.boolean().default(D.enabled),
    /** Run each command under bubblewrap and confine file tools to the workspace. */
    sandbox: z.boolean().default(D.sandbox),
    /** The directory commands run in and the sandbox confines to; default: the current directory. */
    workspace: z.string().min(1).optional(),
    commandTimeoutMs: z.number().int().positive().max(24 * 3600 * 1000).default(D.commandTimeoutMs),
    /** Output cap per stream in bytes (spec 002's 10 MB, here 10 MiB); past it output is read and dropped. Default 10 MiB. */
    maxOutputBytes: z.number().int().positive().default(D.maxOutputBytes),
    /**
     * JSON bytes of output one exec reply carries, both streams together (default 2 MiB): the
     * official SDK's stdio client drops a message over 10 MiB, a reply repeats its output in text and
     * structuredContent, and each MB costs a pool worker several MB of IPC copies. Larger capped output
     * is shown as its head and tail with a marker (workers/shell/reply-budget.ts).
     */
    maxResultBytes: z.number().int().min(1024).default(D.maxResultBytes),
    /** Log each command (spec 002's DEBUG). */
    logCommands: z.boolean().default(D.logCommands),
    workers: z.number().int().min(1).max(64).default(D.workers),
    /** `exec` calls one shell worker runs at once (each is a child process of its own). */
    concurrency: z.number().int().min(1).max(256).default(D.concurrency),
    /** readFile refuses larger files (bytes). */
    maxReadBytes: z.number().int().positive().default(D.maxReadBytes),
    /** listDir returns at most this many entries; listProcesses at most `maxProcesses` rows. */
    maxListEntries: z.number().int().positive().default(D.maxListEntries),
    maxProcesses: z.number().int().positive().default(D.maxProcesses),
    /** Path of the bubblewrap binary (Debian package `bubblewrap`). */
    bwrapPath: z.string().min(1).default(D.bwrapPath),
    /**
     * Resource limits inside the sandbox (set with ulimit by the sandboxed shell): processes (the
     * rlimit, which the kernel does not enforce for root, and the pids limit of each command's cgroup
     * when there is one), file size (bytes), private /tmp size (bytes).
     */
    sandboxMaxProcesses: z.number().int().positive().default(D.sandboxMaxProcesses),
    sandboxMaxFileBytes: z.number().int().positive().default(D.sandboxMaxFileBytes),
    sandboxTmpBytes: z.number().int().positive().default(D.sandboxTmpBytes),
    /**
     * true: sandboxed commands share the host's network (npm install, git clone, curl), and with it
     * everything the host reaches: services on its 127.0.0.1, the private network, a cloud's
     * metadata endpoint. Default false: no network at all.
     */
    sandboxNetwork: z.boolean().default(D.sandboxNetwork),
    /**
     * Memory (RLIMIT_DATA: heap and private mappings) each sandboxed process may take, in bytes,
     * or false for no limit. Default: half of the machine's memory, at most 8 GiB (defaultMemoryLimit).
     */
    sandboxMaxMemoryBytes: z
      .union([z.number().int().min(MIN_MEMORY_LIMIT, `shell.sandboxMaxMemoryBytes must be at least ${MIN_MEMORY_LIMIT} (64 MiB)`), z.literal(false)], {
        error: 'shell.sandboxMaxMemoryBytes must be a number of bytes or false',
      })
      .optional(),
    /**
     * Memory a whole command may take, all its processes together, in bytes, or false for no limit:
     * the memory limit of the cgroup each command runs in (both modes) when the server can create
     * cgroups (root, or a delegated cgroup); past it the kernel kills a process of the command.
     * Default: as sandboxMaxMemoryBytes, half of the machine's memory, at most 8 GiB.
     */
    /**
     * Each command in a cgroup of its own when the server can make one (root, or a delegated
     * cgroup): the limits above for the whole command, and every process it leaves behind killed
     * at its end. false: commands run as without cgroups (~0.3-0.9 ms less a command under load).
     */
    commandCgroups: z.boolean().default(D.commandCgroups),
    /**
     * Processes and threads a whole command may run at once (the pids.max of its cgroup, both
     * modes, when the server can create cgroups), or false for none; in sandbox mode no more than
     * sandboxMaxProcesses. Past it a fork fails ("Cannot fork", EAGAIN). Default 4096.
     */
    commandMaxProcesses: z
      .union([z.number().int().positive(), z.literal(false)], { error: 'shell.commandMaxProcesses must be a positive number of processes or false' })
      .default(D.commandMaxProcesses),
    commandMaxMemoryBytes: z
      .union([z.number().int().min(MIN_MEMORY_LIMIT, `shell.commandMaxMemoryBytes must be at least ${MIN_MEMORY_LIMIT} (64 MiB)`), z.literal(false)], {
        error: 'shell.commandMaxMemoryBytes must be a number of bytes or false',
      })
      .optional(),
  })
  .describe('shell toolset');

export type ShellConfig = z.infer<typeof shellSchema>;
