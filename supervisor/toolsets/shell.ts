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
export const shellToolsets: ToolsetFactory = (config) => {
  if (!config.shell.enabled) return [];
  const { workers, concurrency, commandTimeoutMs } = config.shell;
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
          workerConfig: config.shell,
          callTimeoutMs: commandTimeoutMs + CALL_MARGIN_MS,
        },
      ],
    },
  ];
};
