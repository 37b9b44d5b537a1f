import { McpvisorError } from '../../protocol/errors';
import { threadWorker } from '../../protocol/thread-runtime';
import { FETCH_TOOL, runFetchTool, type FetchToolConfig } from './fetch-tool';

const DEFAULTS: FetchToolConfig = { timeoutMs: 15_000, maxBodyBytes: 10 * 1024 * 1024, maxRedirects: 5, allowPrivateNetwork: false, maxOutputChars: 10_000 };

/**
 * The `web-fetch` thread module (piscina): fetch + HTML to Markdown off the supervisor's event
 * loop. `workerData.config` is config.web.fetch. Rate limits are not applied here but in the
 * supervisor (beforeCall), so they hold across threads and sessions.
 */
export default threadWorker(async (raw) => {
  const config: FetchToolConfig = { ...DEFAULTS, ...(raw as Partial<FetchToolConfig> | undefined) };
  return {
    tools: [FETCH_TOOL],
    handle: async (call, context) => {
      if (call.tool !== FETCH_TOOL.name) throw new McpvisorError('UNKNOWN_TOOL', `the fetch pool has no tool ${call.tool}`);
      return runFetchTool(call.arguments, config, context);
    },
  };
});
