import pino, { type Logger } from 'pino';
import { LogDestination } from './log-destination';

export type { Logger };

/** Paths whose values never reach a log line. */
const REDACT = [
  'authToken',
  '*.authToken',
  'headers',
  '*.headers',
  'config.http.authToken',
  'config.apis[*].headers',
  // A custom toolset's own settings are opaque to us and may hold its secrets.
  'config.customToolsets[*].config',
  'req.headers.authorization',
];

let stderr: LogDestination | undefined;

/** The one destination of every logger on fd 2, written out once more as the process exits. */
function stderrDestination(): LogDestination {
  if (stderr) return stderr;
  const destination = new LogDestination(2);
  process.once('exit', () => destination.flushSync());
  // Writes to process.stderr itself (a thread's log lines, a library's warning) after its reader
  // went away raised EPIPE as an uncaught exception that ended the server.
  process.stderr.on('error', () => undefined);
  stderr = destination;
  return destination;
}

/**
 * The process logger: pino to stderr (stdout belongs to the stdio transport), with secrets
 * redacted. `debug` lowers the level to debug. A stderr that fails (its reader gone, a full
 * disk) never stops or stalls the server: see LogDestination.
 */
export function createLogger(options: { level?: string; debug?: boolean; name?: string } = {}): Logger {
  const level = options.debug ? 'debug' : (options.level ?? 'info');
  return pino({ name: options.name ?? 'mcpvisor', level, redact: { paths: REDACT, censor: '[redacted]' } }, stderrDestination());
}
