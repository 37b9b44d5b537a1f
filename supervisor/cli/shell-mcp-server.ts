#!/usr/bin/env node
import path from 'node:path';
import { parseBool, setPath, type EnvSpec, type FlagSpec } from '../../config/load';
import { expandPath } from '../../config/paths';
import type { Origins } from '../../config/origins';
import { ConfigError, type Config, type ConfigInput } from '../../config/validate';
import { runProfile, SERVER_ENV, SERVER_FLAGS, type Profile } from '../profile';
import { isCommand } from './command';
import { checkWorkspace } from './workspace-check';

/** A bool variable of spec 002: `true`/`false` (also 1/0, yes/no, on/off); anything else names the variable. */
const bool = (name: string, dotted: string): EnvSpec => ({ name, kind: 'bool', path: dotted });

/** A `debug` package namespace list: it holds a `*`, a `:` or a `,` (no true/false does). */
const DEBUG_NAMESPACES = /[*:,]/;

const envVars: EnvSpec[] = [
  bool('SANDBOX_MODE', 'shell.sandbox'),
  {
    name: 'COMMAND_TIMEOUT',
    kind: 'int',
    path: 'shell.commandTimeoutMs',
    apply: (input: ConfigInput, value: unknown) => {
      const ms = value as number;
      if (!(ms > 0) || ms > 24 * 3600 * 1000) {
        throw new ConfigError(`COMMAND_TIMEOUT: expected milliseconds between 1 and 86400000, got ${ms}`);
      }
      setPath(input as Record<string, unknown>, 'shell.commandTimeoutMs', ms);
    },
  },
  {
    // Many users set DEBUG for the `debug` package in every Node program's environment
    // (`express:*`, `*`, `a,b`): such a list is not ours and is taken as unset, where refusing
    // it stopped the server. Anything else that is not true or false is still refused.
    name: 'DEBUG',
    kind: 'string',
    path: 'shell.logCommands',
    apply: (input, value) => {
      if (!DEBUG_NAMESPACES.test(String(value))) setPath(input as Record<string, unknown>, 'shell.logCommands', parseBool(String(value), 'DEBUG'));
    },
  },
  bool('SANDBOX_NETWORK', 'shell.sandboxNetwork'),
  { name: 'SHELL_WORKSPACE', kind: 'string', path: 'shell.workspace', apply: (input, value) => setPath(input as Record<string, unknown>, 'shell.workspace', path.resolve(expandPath(String(value), 'SHELL_WORKSPACE (shell.workspace)'))) },
];

/** stdio by default (spec 002); the common server flags also allow `--transport http`. */
const flags: FlagSpec[] = [...SERVER_FLAGS];

/**
 * spec 002's stdio MCP server: the shell toolset alone. Sandbox mode is on unless SANDBOX_MODE=false
 * (the schema's default, "safe by default"); the workspace defaults to the current directory.
 */
export const shellProfile: Profile = {
  command: 'shell-mcp-server',
  summary: 'MCP server with shell, file and system tools (stdio), sandboxed with bubblewrap',
  flags,
  envVars: [...envVars, ...SERVER_ENV],
  envPrefix: 'MCPVISOR_',
  defaults: { name: 'shell-mcp-server', transport: 'stdio', web: { enabled: false } },
  finalize(config: Config, origins?: Origins): Config {
    // The worker refused the root without naming the setting, after the pools had started (exit 1).
    checkWorkspace(config, origins, 'SHELL_WORKSPACE (shell.workspace)', 'set SHELL_WORKSPACE=DIR in the client\'s server config (its "env")');
    return config;
  },
  helpFooter: [
    'Environment:',
    '  SANDBOX_MODE=true|false   run every command under bubblewrap and confine file tools to the workspace (default true)',
    '  COMMAND_TIMEOUT=MS        time limit per command; the command and all it started are killed (default 30000)',
    '  DEBUG=true|false          log each command on stderr (default false; a debug-package list such as express:* is ignored)',
    '  SHELL_WORKSPACE=DIR       working directory of commands, writable in the sandbox as is its HOME (default: current directory)',
    '  SANDBOX_NETWORK=true|false  sandboxed commands share the host\'s network, and reach all it reaches, 127.0.0.1 included (default false: none)',
    '',
    'The blocked patterns (rm -rf /, mkfs, dd if=, > /dev/...) are a guardrail against accidents, not a',
    'security boundary; the sandbox is. Sandbox mode needs the Debian package bubblewrap.',
  ].join('\n'),
};

if (isCommand('shell-mcp-server')) void runProfile(shellProfile);
