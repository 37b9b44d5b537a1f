import path from 'node:path';
import { ConfigError } from '../../config/validate';
import type { ToolsetFactory } from './types';
import { maskUrlForLog } from '../../config/openapi';
import { clampTimerMs } from '../../config/timer-ms';

/** Slack over twice the upstream timeout (one auth retry) for loading and building the request. */
const CALL_SLACK_MS = 5_000;

/**
 * The openapi toolset (spec 000): one process pool per entry of `apis`, named
 * `api-<namespace or index>`, whose workers load, resolve and execute that description
 * (workers/openapi/worker.ts). Calls are I/O bound, so each worker runs `concurrency` at once
 * (default 64). With a namespace the supervisor lists the tools as `<namespace>-<name>`; the
 * worker keeps names within 64 characters including that prefix. `specInputMethod: stdin` is
 * refused here: workers have no standard input (openapi-mcp-server reads it before starting).
 */
export const openapiToolsets: ToolsetFactory = (config, logger) => {
  checkPoolNames(config.apis.map((api) => api.namespace));
  return config.apis.map((api, index) => {
    if (api.specInputMethod === 'stdin') {
      throw new ConfigError(`apis[${index}].specInputMethod: stdin is only read by openapi-mcp-server; give a file, URL or inline content in the configuration`);
    }
    const name = `api-${api.namespace ?? index}`;
    logger.debug({ pool: name, apiBaseUrl: maskUrlForLog(api.apiBaseUrl), toolsMode: api.toolsMode }, 'openapi toolset planned');
    return {
      name,
      namespace: api.namespace,
      pools: [
        {
          kind: 'process' as const,
          name,
          module: path.join(__dirname, '..', '..', 'workers', 'openapi', 'worker.js'),
          size: api.workers,
          concurrency: api.concurrency,
          workerConfig: api,
          callTimeoutMs: clampTimerMs(api.requestTimeoutMs * 2 + CALL_SLACK_MS),
          required: api.affectsHealth,
          // With several APIs, a failure to start says which one (its reason rarely does).
          label: config.apis.length > 1 ? `${name} (apis[${index}])` : undefined,
        },
      ],
    };
  });
};

/**
 * Each API its own pool name (`/health`, metrics): two APIs with one namespace, or a namespace
 * that is another API's index (`2` and the third API without one, both `api-2`), are a config
 * error at once. They were found only after every worker had started, as duplicate tools, with
 * advice to add a namespace both had; metrics showed one pool for two.
 */
function checkPoolNames(namespaces: Array<string | undefined>): void {
  const seen = new Map<string, number>();
  namespaces.forEach((namespace, index) => {
    const name = namespace ?? String(index);
    const other = seen.get(name);
    if (other !== undefined) {
      const what = (i: number) => (namespaces[i] === undefined ? `apis[${i}] (no namespace)` : `apis[${i}] (namespace '${namespaces[i]}')`);
      throw new ConfigError(`${what(other)} and ${what(index)} would share the pool name api-${name}: give them different namespaces`);
    }
    seen.set(name, index);
  });
}
