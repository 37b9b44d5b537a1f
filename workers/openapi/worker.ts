import { runWorker } from '../../protocol/worker-runtime';
import { ApiToolService, type ApiServiceOptions } from './service';

/**
 * The api worker process: one per configured API (supervisor/toolsets/openapi.ts). `init` carries
 * one `apis[]` entry; the description is loaded, resolved and executed here, never in the
 * supervisor. Calls run concurrently (I/O bound). The service stores its compiled description
 * in the spec cache after `ready` has left, and `close` waits for that write.
 */
runWorker(async (config, log) => {
  const service = await ApiToolService.create(config as ApiServiceOptions, log);
  return {
    tools: service.toolTexts(),
    handle: (call, context) => service.handle(call.tool, call.arguments, { signal: context.signal }),
    stats: () => ({ ...service.getStats() }),
    close: () => service.close(),
    // The request builder, HTTP client and validator, loaded when the supervisor asks: once the
    // whole server has started (supervisor.ts). A call arriving earlier loads them itself.
    warmUp: () => {
      const started = performance.now();
      service.warmUp();
      log.debug('warmed up', { ms: Math.round(performance.now() - started) });
    },
    info: { ...service.getStats() },
  };
});
