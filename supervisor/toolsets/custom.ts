import { statSync } from 'node:fs';
import { ConfigError } from '../../config/validate';
import { ERROR_META_KEY } from '../../protocol/results';
import type { ToolResult } from '../../protocol/tool';
import type { AroundCall, ToolsetFactory } from './types';

/**
 * `customToolsets` of the config: worker modules of the user's own (and the test fixtures). A
 * process toolset's workers run `runWorker`; a thread toolset's module default-exports
 * `threadWorker(init)`. Throws ConfigError for a module path that is not a file, unless the
 * toolset has `affectsHealth: false`: such a toolset is not required (types.ts), so one that
 * cannot start is left out and tried again by the supervisor, as an optional API is.
 */
export const customToolsets: ToolsetFactory = (config, _logger, context) =>
  config.customToolsets.map((entry, index) => {
    // Named as the config file writes it, and where: custom toolsets come from a file only.
    // Decision: an optional toolset's missing module is left out like any other failure to start
    // (its start then says "Cannot find module …"): a module deployed after the server comes in
    // at the next retry.
    if (entry.affectsHealth) checkModule(entry.module, `customToolsets[${index}].module${context?.configFile ? ` in ${context.configFile}` : ''}`);
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
          label: `toolset ${entry.name} (customToolsets[${index}])`,
          aroundCall: namingErrors(entry.name, entry.namespace),
          required: entry.affectsHealth,
          ...(entry.kind === 'process'
            ? { kind: 'process' as const, size: entry.workers, concurrency: entry.concurrency }
            : { kind: 'thread' as const, threads: entry.workers, concurrency: entry.concurrency }),
        },
      ],
    };
  });

/**
 * A custom toolset's error results name the tool and the toolset, as the supervisor's own do
 * (`BAD_INPUT (tool x): …`): what its handler threw, a crash, a timeout of its worker came as
 * `INTERNAL: plain error`, and a user with several toolsets could not tell whose it was.
 */
function namingErrors(toolset: string, namespace: string | undefined): AroundCall {
  return async (call, options, next) => {
    const result = await next(call, options);
    const code = (result?._meta?.[ERROR_META_KEY] as { code?: unknown } | undefined)?.code;
    const first = result?.isError === true && Array.isArray(result.content) ? result.content[0] : undefined;
    if (typeof code !== 'string' || first?.type !== 'text' || typeof first.text !== 'string' || !first.text.startsWith(`${code}: `)) return result;
    const tool = namespace === undefined ? call.tool : `${namespace}-${call.tool}`;
    const text = `${code} (tool ${tool}, toolset ${toolset}): ${first.text.slice(code.length + 2)}`;
    return { ...result, content: [{ ...first, text }, ...result.content.slice(1)] } satisfies ToolResult;
  };
}

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
