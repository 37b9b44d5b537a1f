import pino, { type Logger } from 'pino';

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

/**
 * The process logger: pino to stderr (stdout belongs to the stdio transport), with secrets
 * redacted. `debug` lowers the level to debug.
 */
export function createLogger(options: { level?: string; debug?: boolean; name?: string } = {}): Logger {
  const level = options.debug ? 'debug' : (options.level ?? 'info');
  return pino(
    { name: options.name ?? 'mcpvisor', level, redact: { paths: REDACT, censor: '[redacted]' } },
    pino.destination({ fd: 2, sync: false }),
  );
}
