import path from 'node:path';
import type { ToolsetFactory } from './types';

/**
 * Extra budget of a shell call over the command timeout: the worker kills a command at
 * `commandTimeoutMs` and answers with the output so far; the supervisor's deadline comes later, so
 * it only fires when a worker is stuck.
 */
const CALL_MARGIN_MS = 5_000;

/**
 * The shell toolset: one process pool `shell` of `shell.workers` workers. Commands are child
 * processes of a worker, so one worker runs many at once (`shell.concurrency`, default 16).
 */
export const shellToolsets: ToolsetFactory = (config, _logger, context) => {
  if (!config.shell.enabled) return [];
  const { workers, concurrency, commandTimeoutMs } = config.shell;
  // What this server reads or runs at its next start: in sandbox mode the workers keep these
  // read-only when they lie in the workspace (workers/shell/protected-paths.ts). Paths only.
  const serverFiles = [
    ...(context?.configFile ? [{ path: path.resolve(context.configFile), kind: 'config' as const }] : []),
    ...config.customToolsets.map((toolset) => ({ path: path.resolve(toolset.module), kind: 'code' as const })),
  ];
  return [
    {
      name: 'shell',
      pools: [
        {
          kind: 'process',
          name: 'shell',
          module: path.join(__dirname, '..', '..', 'workers', 'shell', 'worker.js'),
          size: workers,
          concurrency,
          workerConfig: { ...config.shell, serverFiles },
          callTimeoutMs: commandTimeoutMs + CALL_MARGIN_MS,
        },
      ],
    },
  ];
};
