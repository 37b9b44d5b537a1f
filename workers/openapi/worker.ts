import { runWorker } from '../../protocol/worker-runtime';
import { ApiToolService, type ApiServiceOptions } from './service';

/**
 * The api worker process: one per configured API (supervisor/toolsets/openapi.ts). `init` carries
 * one `apis[]` entry; the description is loaded, resolved and executed here, never in the
 * supervisor. Calls run concurrently (I/O bound). The service stores its compiled description
 * in the spec cache after `ready` has left, and `close` waits for that write.
 */
/** Delay before loading the lazy modules, ms. */
const WARM_UP_DELAY_MS = 300;

runWorker(async (config, log) => {
  const service = await ApiToolService.create(config as ApiServiceOptions, log);
  // Once `ready` (with a tool list of up to a few MB) has left through the pipe: load the request
  // builder, HTTP client and validator before the first call needs them. A call arriving earlier
  // loads them itself.
  setTimeout(() => service.warmUp(), WARM_UP_DELAY_MS).unref();
  return {
    tools: service.toolTexts(),
    handle: (call, context) => service.handle(call.tool, call.arguments, { signal: context.signal }),
    stats: () => ({ ...service.getStats() }),
    close: () => service.close(),
    info: { ...service.getStats() },
  };
});
