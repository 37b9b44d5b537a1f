import { existsSync, realpathSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { McpvisorError } from '../../protocol/errors';
import { describeOpenError, directoryAccessProblem, directoryWriteProblem } from '../../protocol/access-denied';
import { RepeatSummary, windowWords } from '../../protocol/repeat-summary';
import { ERROR_META_KEY } from '../../protocol/results';
import type { ToolCall, ToolResult } from '../../protocol/tool';
import type { CallContext, WorkerLogger, WorkerService } from '../../protocol/worker-runtime';
import { findBlockedPattern } from './blocked-patterns';
import { hostCommandEnv } from './command-env';
import { CommandCgroups, type CommandCgroup } from './command-cgroups';
import { commandProcessLimit, shellSettings, type ShellSettings } from './defaults';
import { deleteFile, readTextFile, writeTextFile, type FileToolOptions } from './file-tools';
import { fitListing, fitProcesses, formatDir, formatExec, formatProcesses, formatSystemInfo } from './format';
import { gitLockNote, gitLocksLeft } from './git-locks';
import { missingNote, missingPrograms } from './hidden-programs';
import { listDirectory } from './list-directory';
import { reclaimMemory } from './reclaim';
import { fitStreams, jsonBytes, TEXT_SHARE } from './reply-budget';
import { OrphanGuard } from './orphan-guard';
import { fillPipePool, outputPipes, placePipes, releasePipes, takeOutputPipes } from './output-pipes';
import { discardPrepared, killAllCommands, prepareCommand, runCommand, type PreparedCommand } from './runner';
import { protectedPaths } from './protected-paths';
import { ensureSandboxHome, prepareSandboxHome, type SandboxHome } from './sandbox-home';
import { onSandboxPath, probeSandbox, SANDBOX_PACKAGE, sandboxArgv, sandboxEnv, shownInSandbox, type SandboxOptions, type SandboxState } from './sandbox';
import { bashSyntaxNote, systemShell } from './shell-dialect';
import { getSystemInfo, listProcesses } from './system-info';
import { MAX_COMMAND_CHARS, shellTools } from './tools';

/** Linux's limit on one argument (MAX_ARG_STRLEN, 32 pages), less its terminating NUL. */
const MAX_COMMAND_BYTES = 128 * 1024 - 1;

/** Time the worker keeps for itself before the supervisor's deadline, so its own answer arrives first. */
const DEADLINE_MARGIN_MS = 1000;
/** Output past which a full garbage collection follows the reply (bytes). */
const LARGE_OUTPUT_BYTES = 1024 * 1024;

/**
 * An unconfined shell started ahead of its command: it reads the command from stdin, then gives it
 * an empty stdin and a shell of its own (see RUN_FIRST_ARGUMENT in sandbox.ts: `eval` showed in its
 * errors, and `$cmd` held its own text).
 */
const WARM_SHELL = 'cmd=$(cat) || exit 125; exec </dev/null; exec /bin/sh -c "$cmd" /bin/sh';

/**
 * The shell toolset's service: spec 002's seven tools over the `shell` config section (defaults
 * filled in by `shellSettings`; the supervisor sends it validated).
 * The workspace must exist; in sandbox mode bubblewrap is probed once here (and again on an `exec`
 * while it is unavailable, so installing it later needs no restart).
 */
export async function createShellService(rawConfig: unknown, log: WorkerLogger): Promise<WorkerService> {
  const config: ShellSettings = shellSettings(rawConfig);
  const workspace = realWorkspace(config.workspace ?? process.cwd());
  if (config.sandbox && workspace === '/') {
    throw new McpvisorError('BAD_INPUT', 'the shell workspace is / (shell.workspace in the config, SHELL_WORKSPACE for shell-mcp-server; unset, the directory the server was started in): sandbox mode needs a workspace below the root to confine to');
  }
  // Sandbox mode only: unconfined commands and file tools act with the user's full rights anyway.
  const readOnly = config.sandbox ? protectedPaths({ workspace, serverFiles: config.serverFiles }) : [];
  if (readOnly.length > 0) {
    log.warn("the workspace holds the server's own code or config (or a pnpm or bun store whose files are hard links of that code): these paths are read-only to commands and file tools in sandbox mode (point shell.workspace in the config, or SHELL_WORKSPACE with shell-mcp-server, at a directory without them)", {
      workspace,
      readOnly: readOnly.map((entry) => entry.path),
    });
  }
  // Decision: a warning, not a refusal: commands still run and read there (a checkout's workspace
  // is read-only by design, see protected-paths.ts), but every write fails, which said nothing.
  const notWritable = directoryWriteProblem(workspace);
  if (notWritable) log.warn(`the workspace ${notWritable}: commands and writeFile cannot write there (set shell.workspace, or SHELL_WORKSPACE with shell-mcp-server, to a directory this user owns)`, { workspace });
  // Sandbox mode only: unconfined commands keep the user's own HOME, as in their terminal.
  const home: SandboxHome | undefined = config.sandbox ? prepareSandboxHome(workspace) : undefined;
  if (home?.host) log.info(`sandboxed commands' HOME (${home.inside}) is ${home.host}, kept between commands and restarts`, { home: home.host });
  else if (home) log.warn(`sandboxed commands get an empty HOME (${home.inside}) each, nothing in it kept: ${home.problem}`, { home: home.inside });
  const sandboxOptions: SandboxOptions = {
    bwrapPath: config.bwrapPath,
    workspace,
    maxProcesses: config.sandboxMaxProcesses,
    maxFileBytes: config.sandboxMaxFileBytes,
    cpuSeconds: Math.ceil(config.commandTimeoutMs / 1000) + 1,
    maxMemoryBytes: config.sandboxMaxMemoryBytes === false ? undefined : config.sandboxMaxMemoryBytes,
    network: config.sandboxNetwork,
    tmpBytes: config.sandboxTmpBytes,
    readOnly,
    home,
  };
  let sandbox: SandboxState = config.sandbox ? await probeSandbox(sandboxOptions) : { available: false, reason: 'sandbox mode is off' };
  if (config.sandbox && !sandbox.available) log.warn(`sandbox unavailable: exec will refuse commands until it is fixed; ${sandbox.fix}`, { reason: sandbox.reason, cause: sandbox.cause });
  // Processes and memory of a whole command, in both modes (see commandProcessLimit).
  const { cgroups, state: cgroupState } = config.commandCgroups
    ? await CommandCgroups.open({
        maxProcesses: commandProcessLimit(config),
        maxMemoryBytes: config.commandMaxMemoryBytes === false ? undefined : config.commandMaxMemoryBytes,
      })
    : { cgroups: undefined, state: { available: false, version: null, maxProcesses: null, maxMemoryBytes: null, reason: 'turned off (shell.commandCgroups: false)' } as const };
  const processLimit =
    cgroupState.maxProcesses === null
      ? undefined
      : { count: cgroupState.maxProcesses, setting: config.sandbox && cgroupState.maxProcesses === config.sandboxMaxProcesses ? 'shell.sandboxMaxProcesses' : 'shell.commandMaxProcesses' };
  if (!config.commandCgroups) {
    log.info('commands run without cgroups (shell.commandCgroups: false)');
  } else if (cgroups) {
    log.info('each command runs in a cgroup of its own: its leftover processes are killed when it ends', {
      cgroupVersion: cgroupState.version,
      maxProcesses: cgroupState.maxProcesses,
      maxMemoryBytes: cgroupState.maxMemoryBytes,
      ...(cgroupState.reason ? { missing: cgroupState.reason } : {}),
    });
  } else {
    log.warn('cgroups unavailable: commands run without a process or memory limit per command, and a daemon that leaves its process group (setsid) can outlive its command in unconfined mode', {
      reason: cgroupState.reason,
    });
  }
  if (!existsSync('/proc/self/stat') && !['/bin/ps', '/usr/bin/ps'].some((file) => existsSync(file))) {
    // Without /proc, kill-tree needs ps to find a tree; without either it falls back to the process group and the runner to the environment marker.
    log.warn('ps is missing (Debian package procps): timed-out commands are killed by process group and environment marker only');
  }
  const shell = systemShell();
  const files: FileToolOptions = { workspace, confined: config.sandbox, maxReadBytes: config.maxReadBytes, maxListEntries: config.maxListEntries, readOnly };
  const counters = { commands: 0, running: 0, timedOut: 0, canceled: 0, blocked: 0 };
  // A client can send blocked commands without end: one whole line per pattern and minute, then
  // a count. The command (up to 128 KiB, perhaps with a secret in it) only with logCommands, as
  // every other command; its length otherwise.
  const blockedLog = new RepeatSummary((pattern, more, windowMs) =>
    log.warn(`blocked command refused: ${more} more like this ${windowWords(windowMs)}`, { pattern, more }),
  );
  const shownCommand = (command: string) => (config.logCommands ? { command } : { commandChars: command.length });
  // Built once: reading process.env goes through getenv for every key.
  const hostEnvironment = hostCommandEnv(workspace);
  const sandboxEnvironment = sandboxEnv(workspace, config.sandboxNetwork, home?.inside);
  // One process started ahead of the next command, replaced as soon as it is taken: a sandbox (see
  // warmPrelude), or, unconfined with cgroups, a shell already moved into its command's cgroup. The
  // move takes a lock the whole system shares (v1), measured at +2-3 ms a command under load when
  // made on the call's path, +0.3-0.9 ms ahead (interleaved A/B, shell-mcp-server over stdio).
  const warmArgv = config.sandbox ? sandboxArgv(undefined, sandboxOptions) : { file: '/bin/sh', args: ['-c', WARM_SHELL] };
  const warmEnvironment = config.sandbox ? sandboxEnvironment : hostEnvironment;
  let warm: PreparedCommand | undefined;
  const prepareWarm = (pipes: ReturnType<typeof takeOutputPipes>): PreparedCommand | undefined => {
    let cgroup: CommandCgroup | undefined;
    try {
      cgroup = cgroups?.create();
    } catch {
      // The command that takes no warm sandbox makes its own cgroup, and says why it cannot.
      releasePipes(pipes);
      return undefined;
    }
    if (home) ensureSandboxHome(home);
    try {
      return prepareCommand(warmArgv.file, warmArgv.args, workspace, warmEnvironment, pipes, cgroup);
    } catch {
      // Out of file descriptors: the next command starts cold, and says so if it cannot either.
      cgroup?.release();
      return undefined;
    }
  };
  const takeWarm = (): PreparedCommand | undefined => {
    const taken = warm;
    warm = undefined;
    setImmediate(() =>
      void outputPipes().then((pipes) => {
        if (!closing && warm === undefined) warm = prepareWarm(pipes);
        else releasePipes(pipes);
      }),
    );
    return taken;
  };
  let closing = false;
  // Unconfined commands would outlive a crashed worker; bwrap --die-with-parent covers sandboxed ones.
  // With cgroups, the guard also kills and removes the worker's cgroups, in both modes.
  const guard = !config.sandbox || cgroups ? new OrphanGuard(cgroups?.guardScript()) : undefined;
  if (cgroups) guard?.arm();
  // Real pipes for the commands' output (output-pipes.ts), ready before the first one starts.
  const pipes = placePipes(config.sandbox ? workspace : undefined);
  // Only a temporary directory this user cannot write is news: one in the workspace moves by design.
  if (pipes.tmpdirNotWritable) {
    log.warn(
      pipes.parent
        ? `the temporary directory ${pipes.tmpdirNotWritable}: commands' output pipes wait in ${pipes.parent} instead (set TMPDIR to a directory this user can write)`
        : `the temporary directory ${pipes.tmpdirNotWritable}, nor is /dev/shm or /run/user/<uid>: commands get socket pairs for their output, so \`>/dev/stdout\`, \`tee /dev/stderr\` and open('/dev/stdout') fail in them (set TMPDIR to a directory this user can write)`,
      { tmpdir: tmpdir(), ...(pipes.parent ? { pipes: pipes.parent } : {}) },
    );
  }
  void fillPipePool(true);
  const warmed = config.sandbox ? sandbox.available : cgroups !== undefined;
  if (warmed) warm = prepareWarm(takeOutputPipes());

  const exec = async (args: Record<string, unknown>, context: CallContext): Promise<ToolResult> => {
    const command = args.command;
    if (typeof command !== 'string' || command.trim() === '') throw new McpvisorError('BAD_INPUT', 'command must be a non-empty string');
    if (command.includes('\0')) throw new McpvisorError('BAD_INPUT', 'command must not contain NUL characters (a shell cannot take them)');
    // Written to the shell as UTF-8, a lone surrogate became U+FFFD: another command than the one given.
    if (!(command as string & { isWellFormed(): boolean }).isWellFormed()) throw new McpvisorError('BAD_INPUT', 'command has a lone UTF-16 surrogate (half of a character), which UTF-8 cannot carry');
    if (command.length > MAX_COMMAND_CHARS) throw new McpvisorError('BAD_INPUT', `command is ${command.length} characters, over the limit of ${MAX_COMMAND_CHARS}`);
    // A cold start passes the command as an argument, which Linux caps at 128 KiB: 100,000
    // characters of `€` are 300 KB of UTF-8, and failed with E2BIG when no warm sandbox was free.
    const bytes = Buffer.byteLength(command);
    if (bytes > MAX_COMMAND_BYTES) throw new McpvisorError('BAD_INPUT', `command is ${bytes} bytes of UTF-8, over the limit of ${MAX_COMMAND_BYTES} (an argument's on Linux)`);
    const blocked = findBlockedPattern(command);
    if (blocked) {
      counters.blocked++;
      if (blockedLog.first(blocked.pattern)) context.log.warn('blocked command refused', { pattern: blocked.pattern, ...shownCommand(command) });
      throw new McpvisorError('BLOCKED', `refused: the command matches the blocked pattern "${blocked.pattern}" (${blocked.reason}: ${blocked.command}); nothing was run`, {
        data: { pattern: blocked.pattern },
      });
    }
    if (config.sandbox && !sandbox.available) {
      sandbox = await probeSandbox(sandboxOptions);
      if (!sandbox.available) {
        // The fix names what refused: an installed bwrap that the kernel keeps from making its
        // namespaces was told to install the package.
        throw new McpvisorError('BLOCKED', `sandbox mode is on but bubblewrap cannot confine commands here: ${sandbox.reason}. To fix it, ${sandbox.fix}. Nothing was run.`, {
          data: { package: SANDBOX_PACKAGE, cause: sandbox.cause },
        });
      }
    }
    const timeoutMs = Math.max(1, Math.min(config.commandTimeoutMs, context.deadlineMs - DEADLINE_MARGIN_MS));
    const prepared = config.sandbox || cgroups ? takeWarm() : undefined;
    if (!prepared && home) ensureSandboxHome(home);
    const argv = prepared ? warmArgv : !config.sandbox ? { file: '/bin/sh', args: ['-c', command] } : sandboxArgv(command, sandboxOptions);
    counters.commands++;
    counters.running++;
    const startedAt = Date.now();
    let result;
    try {
      result = await runCommand({
        ...argv,
        cwd: workspace,
        env: config.sandbox ? sandboxEnvironment : hostEnvironment,
        timeoutMs,
        maxOutputBytes: config.maxOutputBytes,
        // A reply shows at most maxResultBytes of JSON: hold no more than its head and tail.
        keepBytes: Math.min(config.maxOutputBytes, Math.ceil(config.maxResultBytes / 2)),
        signal: context.signal,
        guard: config.sandbox ? undefined : guard,
        cgroups,
        ...(prepared ? { prepared, input: command } : {}),
      });
    } finally {
      counters.running--;
    }
    if (result.stdoutBytes + result.stderrBytes > LARGE_OUTPUT_BYTES) {
      // After the reply has been sent (it is sent right after this returns): see reclaim.ts.
      setTimeout(() => reclaimMemory('major'), 50).unref();
    }
    if (result.timedOut) counters.timedOut++;
    if (result.isCanceled) counters.canceled++;
    if (config.logCommands) {
      context.log.info('command', { command, exitCode: result.exitCode, signal: result.signal, durationMs: result.durationMs, timedOut: result.timedOut, sandboxed: config.sandbox });
    }
    const { pid: _pid, sourceBytes, ...fields } = result;
    const fitted = fitStreams(result.stdout, result.stderr, config.maxResultBytes, sourceBytes);
    const structured = {
      command,
      ...fields,
      stdout: fitted.stdout,
      stderr: fitted.stderr,
      stdoutTruncated: result.stdoutTruncated || fitted.stdoutCut,
      stderrTruncated: result.stderrTruncated || fitted.stderrCut,
      sandboxed: config.sandbox,
    };
    // The text item repeats the output for people within a smaller share of the budget, cut from
    // the whole output so its marker too counts bytes of output.
    const textBudget = Math.floor(config.maxResultBytes / TEXT_SHARE);
    const shown = { ...structured, ...fitStreams(result.stdout, result.stderr, textBudget, sourceBytes) };
    const printed = `${result.stderr}\n${result.stdout}`;
    const missing = config.sandbox ? missingPrograms(printed, process.env.PATH, (dir) => shownInSandbox(dir, workspace), onSandboxPath) : [];
    const locks = result.timedOut || result.isCanceled ? gitLocksLeft(workspace, startedAt) : [];
    const notes = [...missing.map(missingNote), bashSyntaxNote(printed, shell) ?? [], locks.length > 0 ? gitLockNote(locks) : []].flat();
    const text = formatExec(shown, timeoutMs, config.maxOutputBytes, config.sandbox ? sandboxOptions.maxMemoryBytes : undefined, cgroupState.maxMemoryBytes ?? undefined, processLimit, notes);
    const output: ToolResult = { content: [{ type: 'text', text }], structuredContent: structured };
    if (result.timedOut || result.isCanceled) {
      output.isError = true;
      output._meta = { [ERROR_META_KEY]: { code: result.timedOut ? 'TIMEOUT' : 'CANCELLED' } };
    }
    return output;
  };

  const handle = async (call: ToolCall, context: CallContext): Promise<ToolResult> => {
    const args = call.arguments ?? {};
    switch (call.tool) {
      case 'exec':
        return exec(args, context);
      case 'readFile': {
        const read = await readTextFile(pathArg(args), files);
        // The content goes twice (text and structuredContent), and a control character takes six
        // bytes of JSON: 1 MiB of them made a 12.6 MiB reply, which the SDK's stdio client drops
        // with the whole connection. Such a file is not text to read this way.
        const size = jsonBytes(read.content);
        if (size > config.maxResultBytes) {
          throw new McpvisorError('BAD_INPUT', `${pathArg(args)} takes ${size} bytes as JSON text (control characters take 6 bytes each), over the ${config.maxResultBytes}-byte reply budget; look at it with exec (od -c, cat -v, head)`);
        }
        return { content: [{ type: 'text', text: read.content }], structuredContent: read };
      }
      case 'writeFile': {
        if (typeof args.content !== 'string') throw new McpvisorError('BAD_INPUT', 'content must be a string');
        const written = await writeTextFile(pathArg(args), args.content, files);
        const text = written.inPlace
          ? `wrote ${written.path} in place (${written.bytesWritten} bytes; its other hard links see the new content)`
          : `${written.created ? 'created' : 'replaced'} ${written.path} (${written.bytesWritten} bytes)`;
        return { content: [{ type: 'text', text }], structuredContent: written };
      }
      case 'deleteFile': {
        const deleted = await deleteFile(pathArg(args), files);
        return { content: [{ type: 'text', text: `deleted ${deleted.path}` }], structuredContent: deleted };
      }
      case 'listDir': {
        const { listing, cutToFit } = fitListing(await listDirectory(pathArg(args), files, context.signal), config.maxResultBytes);
        return { content: [{ type: 'text', text: formatDir(listing, cutToFit) }], structuredContent: listing };
      }
      case 'getSystemInfo': {
        const limits = {
          maxFileBytes: config.sandboxMaxFileBytes,
          maxMemoryBytes: sandboxOptions.maxMemoryBytes ?? null,
          maxProcesses: process.getuid?.() === 0 ? null : config.sandboxMaxProcesses,
          tmpBytes: config.sandboxTmpBytes,
          network: config.sandboxNetwork,
          ...(home ? { home: { path: home.inside, kept: home.host !== undefined } } : {}),
        };
        const info = await getSystemInfo(workspace, { enabled: config.sandbox, state: sandbox, limits }, config.commandTimeoutMs, cgroupState);
        return { content: [{ type: 'text', text: formatSystemInfo(info) }], structuredContent: { ...info } };
      }
      case 'listProcesses': {
        if (args.filter !== undefined && typeof args.filter !== 'string') throw new McpvisorError('BAD_INPUT', 'filter must be a string');
        // Host command lines hold what the sandbox hides (tokens in arguments): see listProcesses.
        const { listing, cutToFit } = fitProcesses(await listProcesses(args.filter as string | undefined, config.maxProcesses, { withArguments: !config.sandbox }), config.maxResultBytes);
        return { content: [{ type: 'text', text: formatProcesses(listing, cutToFit) }], structuredContent: listing };
      }
      default:
        throw new McpvisorError('UNKNOWN_TOOL', `the shell toolset has no tool ${call.tool}`);
    }
  };

  return {
    tools: shellTools({ workspace, shell, sandbox: config.sandbox, home: home && { path: home.inside, kept: home.host !== undefined }, network: config.sandboxNetwork, commandTimeoutMs: config.commandTimeoutMs, maxOutputBytes: config.maxOutputBytes, maxReadBytes: config.maxReadBytes }),
    handle,
    // The worker is exiting: no command may outlive it (the aborts it sends use `ps`, which takes longer).
    close: async () => {
      closing = true;
      blockedLog.flush();
      if (warm) discardPrepared(warm);
      killAllCommands();
      await cgroups?.close();
    },
    stats: () => ({ ...counters, sandbox: config.sandbox, sandboxAvailable: sandbox.available }),
    info: { workspace, sandbox: config.sandbox, sandboxAvailable: sandbox.available },
  };
}

function pathArg(args: Record<string, unknown>): string {
  if (typeof args.path !== 'string' || args.path === '') throw new McpvisorError('BAD_INPUT', 'path must be a non-empty string');
  return args.path;
}

function realWorkspace(dir: string): string {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') throw new McpvisorError('BAD_INPUT', `the shell workspace ${dir} (SHELL_WORKSPACE / shell.workspace): ${describeOpenError(dir, error, 'directory')}`);
    throw new McpvisorError('BAD_INPUT', `the shell workspace ${dir} does not exist (SHELL_WORKSPACE / shell.workspace)`);
  }
  if (!statSync(real).isDirectory()) throw new McpvisorError('BAD_INPUT', `the shell workspace ${dir} is not a directory (SHELL_WORKSPACE / shell.workspace)`);
  const denied = directoryAccessProblem(real);
  if (denied) throw new McpvisorError('BAD_INPUT', `the shell workspace (SHELL_WORKSPACE / shell.workspace): ${denied}`);
  return real;
}
