import type { ToolsetFactory } from './types';

/**
 * `customToolsets` of the config: worker modules of the user's own (and the test fixtures). A
 * process toolset's workers run `runWorker`; a thread toolset's module default-exports
 * `threadWorker(init)`.
 */
export const customToolsets: ToolsetFactory = (config) =>
  config.customToolsets.map((entry) => ({
    name: entry.name,
    namespace: entry.namespace,
    pools: [
      entry.kind === 'process'
        ? { kind: 'process', name: entry.name, module: entry.module, size: entry.workers, concurrency: entry.concurrency, workerConfig: entry.config, callTimeoutMs: entry.callTimeoutMs }
        : { kind: 'thread', name: entry.name, module: entry.module, threads: entry.workers, concurrency: entry.concurrency, workerConfig: entry.config, callTimeoutMs: entry.callTimeoutMs },
    ],
  }));
