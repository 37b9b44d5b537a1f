import type { WorkerLogger } from '../../protocol/worker-runtime';

let shared: WorkerLogger | undefined;

/**
 * The logger of a library object whose caller gave none: pino at level `warn`, one JSON line per
 * entry on stderr (fd 2; stdout belongs to the caller's program, an MCP stdio server perhaps).
 * Spec 001 says a search that fails "logs it", so the default cannot be silent; a caller routes
 * or silences the lines by passing its own `log`. Writes are synchronous: warnings are rare, and
 * a line must not be lost when the program exits right after the failed search. pino loads on
 * first use, so the worker processes, which always pass their own logger, never load it.
 */
export function libraryLogger(): WorkerLogger {
  if (shared) return shared;
  const pino = require('pino') as typeof import('pino');
  const logger = pino.default({ name: 'mcpvisor-web', level: 'warn' }, pino.destination({ fd: 2, sync: true }));
  shared = {
    debug: (msg, fields) => logger.debug(fields ?? {}, msg),
    info: (msg, fields) => logger.info(fields ?? {}, msg),
    warn: (msg, fields) => logger.warn(fields ?? {}, msg),
    error: (msg, fields) => logger.error(fields ?? {}, msg),
  };
  return shared;
}
