#!/usr/bin/env node
import { runProfile, SERVER_ENV, SERVER_FLAGS, type Profile } from '../profile';
import { isCommand } from './command';
import { checkWorkspace } from './workspace-check';

/** The supervisor with every toolset the configuration enables (default: shell sandboxed + web). */
export const mcpvisorProfile: Profile = {
  command: 'mcpvisor',
  summary: 'MCP tool server: OpenAPI APIs, web search and fetch, a sandboxed shell, from one supervisor',
  flags: SERVER_FLAGS,
  envVars: SERVER_ENV,
  envPrefix: 'MCPVISOR_',
  finalize(config, origins) {
    if (config.shell.enabled) {
      checkWorkspace(config, origins, 'shell.workspace (unset: the current directory)', 'point shell.workspace at another directory in a --config file (or set shell.enabled: false)');
    }
    return config;
  },
  helpFooter: 'Configuration: defaults < --config FILE < MCPVISOR_* environment < flags. See README.md.',
};

if (isCommand('mcpvisor')) void runProfile(mcpvisorProfile);
