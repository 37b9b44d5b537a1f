import type { Logger } from './logger';
import { createSession } from './mcp-session';
import { LineStdioTransport } from './stdio-transport';
import type { Supervisor } from './supervisor';

export interface RunningStdio {
  /** Resolves when the client closes stdin (the session is over). */
  ended: Promise<void>;
  close(): Promise<void>;
}

/** The one stdio session: JSON-RPC on stdin/stdout; logs stay on stderr. */
export async function startStdio(supervisor: Supervisor, logger: Logger): Promise<RunningStdio> {
  const transport = new LineStdioTransport({ maxLineBytes: supervisor.config.http.maxBodyBytes });
  const session = createSession({
    supervisor,
    logger: logger.child({ transport: 'stdio' }),
    maxConcurrentCalls: supervisor.config.http.maxConcurrentCallsPerSession,
  });
  let open = true;
  supervisor.addSessionCounter(() => (open ? 1 : 0));
  const ended = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    transport.onclose = () => resolve();
  });
  void ended.then(() => (open = false));
  await session.connect(transport);
  logger.debug('stdio session ready');
  return { ended, close: () => session.server.close() };
}
