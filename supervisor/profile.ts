import type { Config, ConfigInput } from '../config/schema';
import { loadConfig, type EnvSpec, type FlagSpec } from '../config/load';
import { ConfigError } from '../config/validate';
import type { Origins } from '../config/origins';
import { McpvisorError, toErrorInfo } from '../protocol/errors';
import { isLoopback } from './http/guards';
import { createLogger, type Logger } from './logger';
import { Supervisor } from './supervisor';
import { planToolsets } from './toolsets';
import type { ToolsetPlan } from './toolsets/types';
import { packageVersion } from '../protocol/version';
import { maskUrlForLog } from '../config/openapi';
import { clampTimerMs } from '../config/timer-ms';

/**
 * An entry point as a thin profile over the one supervisor: its flags, environment variables and
 * defaults. `runProfile` loads the configuration, starts the pools and the transport, and runs
 * until SIGTERM/SIGINT (or stdin closes in stdio mode).
 */
export interface Profile {
  /** The command name, as in package.json `bin`. */
  command: string;
  /** One line for --help. */
  summary: string;
  flags: FlagSpec[];
  envVars: EnvSpec[];
  /** Environment variables with this prefix must be known ones (typo guard). */
  envPrefix?: string;
  /** Defaults of this profile, below the config file. */
  defaults?: ConfigInput;
  /**
   * Last checks and adjustments of the loaded configuration; throw ConfigError to refuse it,
   * naming a value as `origins.name(path)` does (the flag, variable or config file it came from).
   */
  finalize?(config: Config, origins?: Origins): Config;
  /** Extra text at the end of --help. */
  helpFooter?: string;
  /** Config keys whose arrays each layer completes item by item (config/load.ts). */
  mergeByIndex?: string[];
}

/** Flags every profile has. */
export const COMMON_FLAGS: FlagSpec[] = [
  { name: 'help', kind: 'flag', help: 'print this help and exit' },
  { name: 'version', kind: 'flag', help: 'print the version and exit' },
];

/** The schema's HTTP address (config/schema.ts), for profiles that keep it. */
export const SCHEMA_HTTP_DEFAULTS = Object.freeze({ host: '127.0.0.1', port: 3000 });

/**
 * Flags of every server profile: where the configuration comes from and how it is served. The
 * help names the HTTP address the profile really uses: pass its own defaults when it sets them
 * (web-search-mcp: localhost:3001), or --help states an address the server does not bind.
 */
export function serverFlags(http: { host: string; port: number } = SCHEMA_HTTP_DEFAULTS): FlagSpec[] {
  return [
    { name: 'config', kind: 'string', arg: 'FILE', help: 'configuration file (JSON or YAML)' },
    { name: 'transport', kind: 'string', path: 'transport', arg: 'stdio|http', help: 'how clients connect (default stdio)' },
    { name: 'host', kind: 'string', path: 'http.host', arg: 'ADDRESS', help: `HTTP bind address (default ${http.host})` },
    { name: 'port', kind: 'int', path: 'http.port', arg: 'PORT', help: `HTTP port (default ${http.port}; 0 picks a free one)` },
    { name: 'path', kind: 'string', path: 'http.endpointPath', arg: 'PATH', help: 'Streamable HTTP endpoint path (default /mcp)' },
    { name: 'debug', kind: 'flag', path: 'debug', help: 'debug logs: config, pools, restarts, sessions' },
    { name: 'log-level', kind: 'string', path: 'logLevel', arg: 'LEVEL', help: 'trace|debug|info|warn|error|fatal|silent' },
    {
      name: 'dangerously-allow-unauthenticated-network',
      kind: 'flag',
      path: 'http.dangerouslyAllowUnauthenticatedNetwork',
      help: 'serve a non-loopback address without a bearer token',
    },
  ];
}

/** Server flags of a profile on the schema's HTTP address. */
export const SERVER_FLAGS: FlagSpec[] = serverFlags();

/** Environment variables every server profile reads. */
export const SERVER_ENV: EnvSpec[] = [
  { name: 'MCPVISOR_TRANSPORT', kind: 'string', path: 'transport' },
  { name: 'MCPVISOR_HOST', kind: 'string', path: 'http.host' },
  { name: 'MCPVISOR_PORT', kind: 'int', path: 'http.port' },
  { name: 'MCPVISOR_PATH', kind: 'string', path: 'http.endpointPath' },
  { name: 'MCPVISOR_DEBUG', kind: 'bool', path: 'debug' },
  { name: 'MCPVISOR_LOG_LEVEL', kind: 'string', path: 'logLevel' },
  { name: 'MCPVISOR_AUTH_TOKEN', kind: 'string', path: 'http.authToken' },
  // The config file, when --config is not given (pm2's ecosystem.config.js passes it on).
  { name: 'MCPVISOR_CONFIG', kind: 'string' },
  // Read by ecosystem.config.js itself; known here so pm2 passing them on is not an error.
  { name: 'MCPVISOR_INSTANCES', kind: 'int' },
  { name: 'MCPVISOR_BASE_PORT', kind: 'int' },
];

export interface RunningServer {
  supervisor: Supervisor;
  /** The Streamable HTTP endpoint in HTTP mode. */
  url?: string;
  /** Resolves when the server should stop by itself (stdin closed in stdio mode). */
  ended: Promise<void>;
  /**
   * Drains for `graceMs` (default `http.shutdownGraceMs`), ends sessions, stops every pool.
   * Idempotent: a later call joins the first.
   */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts the supervisor with the toolsets the configuration enables and serves it on the
 * configured transport. Rejects when a pool cannot start (with its worker's reason).
 */
export async function startServer(
  config: Config,
  options: { logger?: Logger; toolsets?: ToolsetPlan[]; signal?: AbortSignal; configFile?: string } = {},
): Promise<RunningServer> {
  checkExposure(config);
  const logger = options.logger ?? createLogger({ level: config.logLevel, debug: config.debug });
  const supervisor = new Supervisor(config, logger, options.toolsets ?? planToolsets(config, logger, { configFile: options.configFile }));
  // A stop asked for during the start (pm2 stop while a large description loads) stops the
  // pools starting, rather than waiting for them to be ready.
  const { signal } = options;
  const abandon = () => void supervisor.stop(0);
  signal?.addEventListener('abort', abandon, { once: true });
  try {
    // Workers boot in their own processes while this one loads the transport's modules.
    const starting = supervisor.start();
    const http = config.transport === 'http' ? (require('./http/app') as typeof import('./http/app')) : undefined;
    const stdio = http ? undefined : (require('./stdio') as typeof import('./stdio'));
    (require('./mcp-session') as typeof import('./mcp-session')).warmUpSessions();
    await starting.catch((error: unknown) => {
      throw signal?.aborted ? stoppedDuringStart() : error;
    });
    if (signal?.aborted) {
      // The start may have finished after the abandoning stop and marked itself running again.
      await supervisor.stop(0);
      throw stoppedDuringStart();
    }
    const server = await serve(config, logger, supervisor, http, stdio);
    if (signal?.aborted) {
      await server.stop(0);
      throw stoppedDuringStart();
    }
    return server;
  } finally {
    signal?.removeEventListener('abort', abandon);
  }
}

function stoppedDuringStart(): McpvisorError {
  return new McpvisorError('SHUTTING_DOWN', 'stopped during the start');
}

async function serve(
  config: Config,
  logger: Logger,
  supervisor: Supervisor,
  http: typeof import('./http/app') | undefined,
  stdio: typeof import('./stdio') | undefined,
): Promise<RunningServer> {
  const transport = http ? await http.startHttp(supervisor, config.http, logger) : await stdio!.startStdio(supervisor, logger);
  let stopping: Promise<void> | undefined;
  return {
    supervisor,
    url: 'url' in transport ? transport.url : undefined,
    ended: 'ended' in transport ? transport.ended : new Promise<void>(() => undefined),
    stop(graceMs = config.http.shutdownGraceMs) {
      // A second stop with a shorter grace shortens the drain of the first (Supervisor.stop).
      if (stopping) void supervisor.stop(graceMs);
      stopping ??= (async () => {
        logger.info({ graceMs }, 'shutting down');
        await supervisor.stop(graceMs);
        await transport.close();
        logger.info('stopped');
      })();
      return stopping;
    },
  };
}

/**
 * Refuses to serve a non-loopback address without a bearer token: anyone who can reach the port
 * could drive the tools (a shell among them). `dangerouslyAllowUnauthenticatedNetwork` opts out.
 * Refuses `/health` or `/metrics` set to `token` with no token to check (ConfigError, exit 2).
 */
function checkExposure(config: Config): void {
  const { http } = config;
  // `token` with no token set answered 401 to every request, the monitor's too, without a word.
  const locked = (['healthEndpoint', 'metricsEndpoint'] as const).find((key) => http[key] === 'token');
  if (config.transport === 'http' && locked !== undefined && http.authToken === undefined) {
    throw new ConfigError(
      `http.${locked} is token, but no bearer token is set: ${locked === 'healthEndpoint' ? '/health' : '/metrics'} would refuse every request; ` +
        'set MCPVISOR_AUTH_TOKEN (or http.authToken), or make it public or off',
    );
  }
  if (config.transport !== 'http' || isLoopback(http.host) || http.authToken || http.dangerouslyAllowUnauthenticatedNetwork) return;
  throw new ConfigError(
    `refusing to serve ${http.host} without a bearer token: set MCPVISOR_AUTH_TOKEN (or http.authToken), ` +
      'bind 127.0.0.1, or pass --dangerously-allow-unauthenticated-network',
  );
}

/**
 * Runs an entry point: configuration from defaults, file, environment and flags; --help and
 * --version; then the server until SIGTERM/SIGINT, or until stdin closes in stdio mode. A bad
 * configuration prints one clear message and exits 2; a failed start exits 1.
 */
export async function runProfile(profile: Profile, argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const flags = [...COMMON_FLAGS, ...profile.flags];
  let config: Config;
  try {
    const loaded = loadConfig({ argv, env, flags, envVars: profile.envVars, envPrefix: profile.envPrefix, defaults: profile.defaults, configEnv: 'MCPVISOR_CONFIG', mergeByIndex: profile.mergeByIndex });
    if (loaded.help) {
      process.stdout.write(helpText(profile, flags));
      return;
    }
    if (loaded.version) {
      process.stdout.write(`${packageVersion()}\n`);
      return;
    }
    config = profile.finalize ? profile.finalize(loaded.config, loaded.origins) : loaded.config;
    const logger = createLogger({ level: config.logLevel, debug: config.debug, name: profile.command });
    logger.debug({ sources: loaded.sources, config: forLog(config) }, 'configuration validated');
    await serveUntilStopped(config, logger, loaded.file);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${profile.command}: ${error.message}\n`);
      // Exit, not only exitCode: under pm2 the IPC channel (pm2's @pm2/io listens on it) kept
      // the process alive with no port open, and pm2 showed it `online` once listen_timeout
      // passed; `pm2 reload` with a broken config reported success after 60 s.
      process.exit(2);
    }
    process.stderr.write(`${profile.command}: failed to start: ${toErrorInfo(error).message}\n`);
    process.exit(1);
  }
}

/** The config as the debug log shows it: an inline OpenAPI description (up to megabytes) cut short. */
function forLog(config: Config): Config {
  const apis = config.apis.map((api) => ({
    ...api,
    apiBaseUrl: maskUrlForLog(api.apiBaseUrl),
    ...(api.openApiSpec && api.openApiSpec.length > 200 ? { openApiSpec: `${api.openApiSpec.slice(0, 200)}... (${api.openApiSpec.length} characters)` } : {}),
  }));
  return { ...config, apis };
}

async function serveUntilStopped(config: Config, logger: Logger, configFile: string | undefined): Promise<void> {
  // Until the server is up, a signal stops the start: its pools are stopped and the exit is 0.
  const starting = new AbortController();
  const stopStart = (why: string) => {
    if (starting.signal.aborted) return logger.info({ why }, 'already stopping');
    logger.info({ why }, 'stop requested during the start');
    setTimeout(() => process.exit(1), 10_000).unref();
    starting.abort();
  };
  const duringStart = STOP_SIGNALS.map(({ signal }) => ({ signal, handler: () => stopStart(signal) }));
  // `on`, not `once`: a second signal found no handler and killed the process by its default
  // action, its calls unanswered and its exit a signal's.
  for (const { signal, handler } of duringStart) process.on(signal, handler);
  // Started with an IPC channel (pm2's fork mode), which closes when that parent dies (kill -9 of
  // the pm2 daemon). An orphan went on serving with nobody reading its logs or able to stop it,
  // and held its port: the daemon's next `pm2 resurrect` or `pm2 start` found the port taken and
  // ended `errored`. Decision: stop at once, not after the drain grace, so the port is free
  // before a replacement listens (systemd resurrects pm2 at once); running calls are answered
  // SHUTTING_DOWN. pm2 disconnects a fork-mode process only once it has exited.
  let onParentGone = () => stopStart('parent process gone (IPC channel closed)');
  if (process.send) process.once('disconnect', () => onParentGone());
  let server: RunningServer;
  try {
    server = await startServer(config, { logger, signal: starting.signal, configFile });
  } catch (error) {
    if (!starting.signal.aborted) throw error;
    logger.info('stopped during the start');
    logger.flush();
    process.exit(0);
  } finally {
    for (const { signal, handler } of duringStart) process.off(signal, handler);
  }
  let stopRequested = false;
  const stop = async (why: string, graceMs = config.http.shutdownGraceMs) => {
    // A repeated signal (a second Ctrl-C, kill run twice) leaves the drain its grace: the force
    // timer below bounds it, and SIGKILL is there for whoever cannot wait.
    if (stopRequested) {
      // The drain goes on, shortened if this asks for less (the pm2 daemon's death: stdout, then IPC).
      logger.info({ why, graceMs }, 'already stopping');
      return void server.stop(graceMs);
    }
    stopRequested = true;
    logger.info({ why }, 'stop requested');
    const force = setTimeout(() => process.exit(1), clampTimerMs(graceMs + 10_000));
    force.unref();
    await server.stop(graceMs);
    logger.flush();
    await outputWritten(STDOUT_FLUSH_MS);
    process.exit(0);
  };
  for (const { signal, drain } of STOP_SIGNALS) process.on(signal, () => void stop(signal, drain ? config.http.shutdownGraceMs : 0));
  onParentGone = () => void stop('parent process gone (IPC channel closed)', 0);
  // In stdio mode, stdout closed under us: the one client is gone and can read no answer, so
  // running calls are cancelled at once rather than given the grace. HTTP clients still get theirs.
  process.stdout.on('error', () => void stop('stdout closed', config.transport === 'stdio' ? 0 : config.http.shutdownGraceMs));
  await server.ended;
  // Stdin at its end is the client done sending, not done reading: calls still running get
  // STDIN_END_GRACE_MS. With none, `printf '<initialize>\n<tools/call>\n' | mcpvisor` had its call
  // answered SHUTTING_DOWN, however quick; with the whole shutdownGraceMs (10 s), the SDK
  // client, which closes stdin as it leaves, would send SIGTERM after 2 s and SIGKILL 2 s later.
  await stop('stdin closed', Math.min(STDIN_END_GRACE_MS, config.http.shutdownGraceMs));
}

/**
 * The signals that stop the server, and whether running calls get `http.shutdownGraceMs` to
 * finish. Each one's default action ended the process at once, without a log line, its calls
 * unanswered and no drain: SIGHUP (the terminal or ssh session the server ran in closed; `nohup`
 * does not stop it: Node sets SIGHUP back to its default as it starts), SIGUSR2 (nodemon's restart signal; nothing here reopens logs, stderr is not
 * ours to reopen) and SIGQUIT (Ctrl-\: quit now, so no drain, also in the middle of one; no core
 * dump). SIGPIPE is ignored (Node's default: a write to a closed pipe fails with EPIPE instead)
 * and SIGUSR1 left to Node (it opens the inspector on 127.0.0.1). Exit 0 after each.
 */
const STOP_SIGNALS: ReadonlyArray<{ signal: NodeJS.Signals; drain: boolean }> = [
  { signal: 'SIGTERM', drain: true },
  { signal: 'SIGINT', drain: true },
  { signal: 'SIGHUP', drain: true },
  { signal: 'SIGUSR2', drain: true },
  { signal: 'SIGQUIT', drain: false },
];

/** How long calls still running may finish once stdin has ended: below the SDK client's 2 s wait for the exit before SIGTERM. */
const STDIN_END_GRACE_MS = 1_500;

/** How long an exit waits for stdout to take what waits for a slow client. */
const STDOUT_FLUSH_MS = 5_000;

/**
 * Resolves once stdout holds nothing unwritten (at once over HTTP, which does not use it), it
 * failed or closed (the client gone), or after `maxMs`. Why: answers wait in stdout's buffer
 * while the pipe is full, and process.exit dropped them: a client reading slowly after closing
 * stdin got a 500 KB answer cut at the pipe's 64 KB.
 */
function outputWritten(maxMs: number): Promise<void> {
  const stdout = process.stdout;
  if (stdout.writableLength === 0 || stdout.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const until = performance.now() + maxMs;
    // Polled: 'drain' comes only after a write that passed the high-water mark.
    const poll = setInterval(() => {
      if (stdout.writableLength === 0 || stdout.destroyed || performance.now() >= until) done();
    }, 20);
    const done = () => {
      clearInterval(poll);
      stdout.off('error', done);
      resolve();
    };
    stdout.once('error', done);
  });
}

/** Width of the flags' column in --help; a longer flag has its help on the next line. */
const FLAG_COLUMN = 34;

/** The text `--help` prints for `profile` with `flags`. */
export function helpText(profile: Profile, flags: FlagSpec[]): string {
  const rows = flags.map((flag) => {
    const left = `--${flag.name}${flag.kind === 'flag' ? '' : ` ${flag.arg ?? 'VALUE'}`}${flag.multiple ? ' (repeatable)' : ''}`;
    if (left.length > FLAG_COLUMN) return `  ${left}\n  ${' '.repeat(FLAG_COLUMN)} ${flag.help}`;
    return `  ${left.padEnd(FLAG_COLUMN)} ${flag.help}`;
  });
  // Variables the footer describes (web-search-mcp's, shell-mcp-server's) are not listed twice.
  const described = (name: string) => new RegExp(`\\b${name}\\b`).test(profile.helpFooter ?? '');
  const env = profile.envVars.filter((spec) => !described(spec.name)).map((spec) => `  ${spec.name}`);
  return [
    `${profile.command} ${packageVersion()}: ${profile.summary}`,
    '',
    `Usage: ${profile.command} [options]`,
    '',
    'Options:',
    ...rows,
    ...(env.length > 0 ? ['', 'Environment variables:', ...env] : []),
    ...(profile.helpFooter ? ['', profile.helpFooter] : []),
    '',
  ].join('\n');
}
