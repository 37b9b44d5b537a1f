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
  // The bound on output waiting for a client that stopped reading is the SSE streams' own
  // (http.maxStreamBufferBytes): past it, stdin is not read until the client reads.
  const transport = new LineStdioTransport({ maxLineBytes: supervisor.config.http.maxBodyBytes, maxWaitingBytes: supervisor.config.http.maxStreamBufferBytes, onpause: (waitingBytes) => logger.debug({ transport: 'stdio', waitingBytes }, 'stdio: the client is not reading its answers; stdin is not read until it does') });
  const session = createSession({
    supervisor,
    logger: logger.child({ transport: 'stdio' }),
    maxConcurrentCalls: supervisor.config.http.maxConcurrentCallsPerSession,
  });
  let open = true;
  supervisor.addSessionCounter(() => (open ? 1 : 0));
  // The transport's own end of input, not stdin's 'end': lines held while the client was not
  // reading are taken first.
  const ended = new Promise<void>((resolve) => {
    transport.oninputend = resolve;
    transport.onclose = () => resolve();
  });
  void ended.then(() => (open = false));
  await session.connect(transport);
  logger.debug('stdio session ready');
  return { ended, close: () => session.server.close() };
}
