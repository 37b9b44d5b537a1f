import { statSync } from 'node:fs';
import { ConfigError } from '../../config/validate';
import type { ToolsetFactory } from './types';

/**
 * `customToolsets` of the config: worker modules of the user's own (and the test fixtures). A
 * process toolset's workers run `runWorker`; a thread toolset's module default-exports
 * `threadWorker(init)`. Throws ConfigError for a module path that is not a file.
 */
export const customToolsets: ToolsetFactory = (config, _logger, context) =>
  config.customToolsets.map((entry, index) => {
    // Named as the config file writes it, and where: custom toolsets come from a file only.
    checkModule(entry.module, `customToolsets[${index}].module${context?.configFile ? ` in ${context.configFile}` : ''}`);
    return {
      name: entry.name,
      namespace: entry.namespace,
      pools: [
        {
          name: entry.name,
          module: entry.module,
          workerConfig: entry.config,
          callTimeoutMs: entry.callTimeoutMs,
          // A failed start named nothing but the module's own error ("failed to start: no API key configured").
          label: `toolset ${entry.name} (customToolsets.${index})`,
          ...(entry.kind === 'process'
            ? { kind: 'process' as const, size: entry.workers, concurrency: entry.concurrency }
            : { kind: 'thread' as const, threads: entry.workers, concurrency: entry.concurrency }),
        },
      ],
    };
  });

/**
 * A missing module was found by the worker: Node's stack trace for MODULE_NOT_FOUND, then "worker
 * of x exited with exit code 1 before it was ready", naming neither the setting nor the path.
 */
function checkModule(module: string, setting: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(module).isFile();
  } catch (error) {
    throw new ConfigError(`${setting}: ${module} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  if (!isFile) throw new ConfigError(`${setting}: ${module} is not a file`);
}
