import type { ToolDescriptor } from '../../protocol/tool';

const str = { type: 'string' };
const int = { type: 'integer', minimum: 0 };
const num = { type: 'number' };
const bool = { type: 'boolean' };
const pathInput = (what: string) => ({
  type: 'object' as const,
  properties: { path: { type: 'string', minLength: 1, description: `${what}; relative paths resolve against the workspace` } },
  required: ['path'],
  additionalProperties: false,
});

/** Maximum length of an `exec` command in characters (Linux refuses single arguments past 128 KiB). */
export const MAX_COMMAND_CHARS = 100_000;

/** What `shellTools` says of the server's settings. */
export interface ShellToolContext {
  /** Real path of the workspace. */
  workspace: string;
  /** The program behind /bin/sh (shell-dialect.ts). */
  shell: string;
  sandbox: boolean;
  /** Sandbox mode only: whether commands share the host's network. */
  network: boolean;
  /** Sandbox mode only: HOME inside the sandbox, and whether what is written there is kept (sandbox-home.ts). */
  home?: { path: string; kept: boolean };
  commandTimeoutMs: number;
  maxOutputBytes: number;
  /** readFile's size limit in bytes. */
  maxReadBytes: number;
}

/** File tools, which sandbox mode confines to the workspace. */
const FILE_TOOLS = ['readFile', 'writeFile', 'deleteFile', 'listDir'];

/**
 * The tools as a model sees them in tools/list: `exec` also names the workspace, the time limit,
 * the output cap and what the sandbox allows, since an assistant plans by them (a download in a
 * sandbox without network, files left in /tmp for the next call, a build longer than the limit).
 * Only settings go in: every worker of the pool must announce the same list (announced-list.ts).
 */
export function shellTools(context: ShellToolContext): ToolDescriptor[] {
  const mib = Math.round((context.maxOutputBytes / 1024 ** 2) * 10) / 10;
  const home = context.home
    ? `HOME is ${context.home.path}, ${context.home.kept ? 'kept between commands (git config --global, ~/.npmrc)' : 'empty at each command'}`
    : 'HOME is the workspace';
  const where = context.sandbox
    ? `Sandboxed: only the workspace, HOME and a private /tmp are writable, /tmp starts empty at each command (keep files in the workspace), ${home}, programs come from /usr, /bin and /opt (none installed under a home directory), ${
        context.network ? "the host's network is reachable" : 'there is no network (downloads and package installs fail; work with what is installed)'
      }.`
    : "Not sandboxed: commands run with the full rights of the server's user and reach the host's network.";
  const dialect = context.shell === 'bash' ? '' : ` /bin/sh is ${context.shell} here (POSIX sh, not bash: no [[ ]], arrays, {1..3}, source or set -o pipefail; use bash -c '...' for them).`;
  const facts = `${dialect} Workspace (working directory of every command; relative paths of all tools resolve there): ${context.workspace}. Time limit: ${context.commandTimeoutMs} ms per command. Output cap: ${mib} MiB per stream. ${where}`;
  // A sandboxed command's /tmp is its own: a file tool asked for /tmp/x was refused, with no word of why before.
  const confined = context.sandbox ? ` Sandbox mode: only paths inside the workspace (${context.workspace}); a command's /tmp is its own and gone after it.` : '';
  const extra: Record<string, string> = {
    exec: facts,
    readFile: ` Files over ${context.maxReadBytes} bytes are refused (use exec: head, sed -n, grep).${confined}`,
  };
  for (const name of FILE_TOOLS) extra[name] ??= confined;
  return SHELL_TOOLS.map((tool) => (extra[tool.name] ? { ...tool, description: tool.description + extra[tool.name] } : tool));
}

/**
 * The seven tools of spec 002 with the names and required inputs of the spec. Each declares an
 * `outputSchema`; results carry the same data as `structuredContent` and as readable text.
 */
export const SHELL_TOOLS: ToolDescriptor[] = [
  {
    name: 'exec',
    title: 'Run a shell command',
    description:
      'Runs a command with /bin/sh -c in the workspace and returns stdout, stderr, the exit code (or signal) and the duration. ' +
      'stdin is empty (a read gets end of file); the command and everything it started are killed at the time limit; each stream is cut at the output cap. ' +
      'Each call is a fresh shell: cd, export and background jobs (cmd &) do not carry over to the next call (chain them: cd sub && make). ' +
      'There is no terminal: no editor or prompt can wait for input (git commit needs -m or -F; an interactive program such as vi waits until the time limit). ' +
      'The text result shows output as a terminal would (colour codes dropped, lines redrawn with \\r at their last state); structuredContent keeps every byte. ' +
      'Destructive patterns (rm -rf /, mkfs, dd if=, > /dev/...) are refused.',
    inputSchema: {
      type: 'object',
      properties: { command: { type: 'string', minLength: 1, maxLength: MAX_COMMAND_CHARS, description: 'Shell command line' } },
      required: ['command'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        command: str,
        stdout: str,
        stderr: str,
        exitCode: { type: ['integer', 'null'] },
        signal: { type: ['string', 'null'] },
        durationMs: num,
        timedOut: bool,
        isCanceled: bool,
        stdoutTruncated: bool,
        stderrTruncated: bool,
        stdoutBytes: int,
        stderrBytes: int,
        sandboxed: bool,
        oomKilled: bool,
        processLimitReached: bool,
      },
      required: ['command', 'stdout', 'stderr', 'exitCode', 'signal', 'durationMs', 'timedOut', 'isCanceled', 'stdoutTruncated', 'stderrTruncated', 'sandboxed'],
    },
    annotations: { destructiveHint: true, openWorldHint: true },
  },
  {
    name: 'readFile',
    title: 'Read a text file',
    description: 'Returns the contents of a text file. Binary files and files over the size limit are refused.',
    inputSchema: pathInput('File to read'),
    outputSchema: {
      type: 'object',
      properties: { path: str, content: str, sizeBytes: int, modified: str },
      required: ['path', 'content', 'sizeBytes', 'modified'],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'writeFile',
    title: 'Write a file',
    description:
      'Writes content to a file atomically (temporary file + rename), creating parent directories. A new file is not executable (run a script with sh FILE, or chmod +x it first); an existing file keeps its mode. A file with other hard links is written in place (inPlace), so all its names see the new content. FIFOs, sockets and devices are refused.',
    inputSchema: {
      type: 'object',
      properties: {
        path: { type: 'string', minLength: 1, description: 'File to write; relative paths resolve against the workspace' },
        content: { type: 'string', description: 'The whole new content (UTF-8)' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: { path: str, bytesWritten: int, created: bool, inPlace: bool },
      required: ['path', 'bytesWritten', 'created'],
    },
    annotations: { destructiveHint: true, idempotentHint: true },
  },
  {
    name: 'deleteFile',
    title: 'Delete a file',
    description: 'Deletes one file (or symlink). Directories are refused.',
    inputSchema: pathInput('File to delete'),
    outputSchema: { type: 'object', properties: { path: str, deleted: bool }, required: ['path', 'deleted'] },
    annotations: { destructiveHint: true },
  },
  {
    name: 'listDir',
    title: 'List a directory',
    description: 'Lists a directory: name, type, size and modification time of each entry, sorted by name.',
    inputSchema: pathInput('Directory to list'),
    outputSchema: {
      type: 'object',
      properties: {
        path: str,
        entries: {
          type: 'array',
          items: {
            type: 'object',
            properties: { name: str, type: { enum: ['file', 'directory', 'symlink', 'other'] }, sizeBytes: int, modified: str, nameNotUtf8: bool },
            required: ['name', 'type', 'sizeBytes', 'modified'],
          },
        },
        total: int,
        truncated: bool,
      },
      required: ['path', 'entries', 'total', 'truncated'],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'getSystemInfo',
    title: 'System information',
    description: 'Platform, OS, CPU, memory, disk usage of the workspace, uptime, hostname, the sandbox state and the limits a command runs under (time; in the sandbox: file size, memory per process, /tmp size, network or none; with cgroups: processes and memory of the whole command).',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    outputSchema: {
      type: 'object',
      properties: {
        platform: str,
        osType: str,
        osRelease: str,
        arch: str,
        hostname: str,
        cpuCores: int,
        cpuModel: str,
        loadAverage: { type: 'array', items: num },
        memoryTotalBytes: int,
        memoryFreeBytes: int,
        disk: {
          type: ['object', 'null'],
          properties: { path: str, totalBytes: int, freeBytes: int, availableBytes: int, usedPercent: num },
        },
        uptimeSeconds: int,
        nodeVersion: str,
        sandbox: {
          type: 'object',
          properties: {
            enabled: bool,
            available: bool,
            tool: str,
            reason: str,
            cause: { type: 'string', enum: ['not-installed', 'user-namespaces-off', 'sandbox-failed'] },
            fix: str,
            limits: {
              type: 'object',
              properties: {
                maxFileBytes: int,
                maxMemoryBytes: { type: ['integer', 'null'] },
                maxProcesses: { type: ['integer', 'null'] },
                tmpBytes: int,
                network: bool,
                home: { type: 'object', properties: { path: str, kept: bool }, required: ['path', 'kept'] },
              },
              required: ['maxFileBytes', 'maxMemoryBytes', 'maxProcesses', 'tmpBytes', 'network'],
            },
          },
          required: ['enabled', 'available', 'tool'],
        },
        commandTimeoutMs: int,
        cgroup: {
          type: 'object',
          properties: {
            available: bool,
            version: { type: ['integer', 'null'] },
            maxProcesses: { type: ['integer', 'null'] },
            maxMemoryBytes: { type: ['integer', 'null'] },
            reason: str,
          },
          required: ['available', 'version', 'maxProcesses', 'maxMemoryBytes'],
        },
      },
      required: ['platform', 'osType', 'osRelease', 'hostname', 'cpuCores', 'cpuModel', 'memoryTotalBytes', 'memoryFreeBytes', 'disk', 'uptimeSeconds', 'sandbox'],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'listProcesses',
    title: 'List processes',
    description:
      'Lists running processes (pid, name, command, CPU and memory use), optionally only those whose name contains `filter` (case-insensitive). In sandbox mode a command is shown without its arguments.',
    inputSchema: {
      type: 'object',
      properties: { filter: { type: 'string', description: 'Case-insensitive substring of the process name' } },
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        processes: {
          type: 'array',
          items: {
            type: 'object',
            properties: { pid: int, name: str, command: str, cpuPercent: num, memoryRssBytes: int, memoryPercent: num },
            required: ['pid', 'name', 'command', 'cpuPercent', 'memoryRssBytes', 'memoryPercent'],
          },
        },
        total: int,
        truncated: bool,
        argumentsHidden: bool,
      },
      required: ['processes', 'total', 'truncated', 'argumentsHidden'],
    },
    annotations: { readOnlyHint: true },
  },
];
