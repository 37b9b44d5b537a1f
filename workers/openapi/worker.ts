import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
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
  void service.built().then((built) => {
    if (built) collectGarbage(log);
  });
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

/**
 * One full collection after a start that read and built the description: what parsing it left
 * behind stayed in the worker until something else made V8 collect, which an idle worker never
 * does (GitHub's: 165 MB of RSS after a first start against 71 MB from the spec cache; 30 such
 * APIs, 3.8 GB for the tree). Without `--expose-gc` at the worker's start: the flag is set now and
 * `gc` read from a new context, the one way Node offers without a flag on the command line
 * (a spare worker, supervisor/pools/spare-worker.ts, is forked before its description is known).
 */
function collectGarbage(log: { debug(msg: string, fields?: Record<string, unknown>): void }): void {
  const before = process.memoryUsage().rss;
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  log.debug('garbage collected after building the description', { rssBeforeMb: Math.round(before / 1048576), rssAfterMb: Math.round(process.memoryUsage().rss / 1048576) });
}
