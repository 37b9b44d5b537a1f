import { isIP } from 'node:net';
import { z } from 'zod';
import { timerMs } from './timer-ms';
import { apiSchema } from './openapi';
import { shellSchema } from './shell';
import { webSchema } from './web';

const restartSchema = z.strictObject({
  /** More than `maxRestarts` in `windowMs` marks the pool degraded (OTP's MaxR in MaxT). */
  maxRestarts: z.number().int().min(0).default(5),
  windowMs: timerMs().default(60_000),
  backoffBaseMs: timerMs().default(100),
  backoffMaxMs: timerMs().default(30_000),
});

const poolsSchema = z.strictObject({
  /** Default budget of a tool call, queueing included; toolsets may set their own. */
  callTimeoutMs: timerMs().default(60_000),
  /**
   * A call whose request carries a progress token gets a `notifications/progress` this often while
   * it runs (its progress: seconds so far), so a client that resets its timeout on progress (the
   * SDK's `resetTimeoutOnProgress`; its default timeout is 60 s) waits for a long command or
   * search instead of giving up on it. 0: none.
   */
  progressIntervalMs: timerMs(0).default(15_000),
  /**
   * How long a worker may take to honour a cancel before it is killed with its tree: once past it,
   * when it answers a sign of life without having stopped, or sends nothing for max(this, 1 s)
   * (protocol/rpc.ts; an answer already sent can still be crossing the IPC channel).
   */
  cancelGraceMs: timerMs().default(1_000),
  /** Calls waiting for a free worker, per pool; past it calls answer BUSY at once. */
  maxQueue: z.number().int().min(0).default(256),
  /**
   * Running calls are never taken back: while a session holding none of a pool's slots is open
   * beside one holding some, the pool keeps its last this many free slots for such a session
   * (one filling the pool with slow calls waits for them instead), when the pool has more slots
   * than this (supervisor/pools/wait-queue.ts). 0: off.
   */
  reservedSlots: z.number().int().min(0).default(1),
  /** How long a worker may take to initialise and say `ready`. */
  startTimeoutMs: timerMs().default(60_000),
  /**
   * Every ready worker process is asked this often whether it still answers (0 turns it off), and
   * killed and replaced when it has not within `livenessTimeoutMs`: a stopped or stuck worker no
   * longer looks healthy until a call runs into its deadline. Decision: 5 s and 15 s; no worker of
   * ours blocks its event loop for seconds, and a pathological one is found within 20 s.
   */
  livenessIntervalMs: timerMs(0).default(5_000),
  livenessTimeoutMs: timerMs().default(15_000),
  /**
   * V8 old-generation heap of each piscina thread (web fetch, thread toolsets), in MB. The threads
   * live in the supervisor's process: past it the thread dies with its calls (WORKER_CRASHED) and
   * is replaced, instead of one page growing the supervisor by gigabytes. Decision: 512, several
   * times what converting a 10 MB page needs, and 2 fetch threads stay under pm2's 1 GB restart.
   */
  threadMaxOldGenerationSizeMb: z.number().int().min(16).default(512),
  /**
   * The largest tool result passed on, as UTF-8 JSON, of every toolset; a larger one is answered
   * as an OUTPUT_TRUNCATED error naming the tool, its size and this cap (catalogue.ts). The MCP
   * SDK's stdio client drops the whole connection on a message over 10 MiB: raise it past 8 MiB
   * for HTTP clients only.
   */
  maxResultBytes: z.number().int().min(1024).default(8 * 1024 * 1024),
  restart: restartSchema.prefault({}),
});

/** Paths the HTTP server answers besides endpointPath (supervisor/http/app.ts). */
const RESERVED_PATHS = ['/', '/sse', '/message', '/health', '/metrics'];

function isReservedPath(value: string): boolean {
  const trimmed = value.replace(/\/+$/, '') || '/';
  return RESERVED_PATHS.includes(trimmed) || trimmed.startsWith('/message/');
}

/**
 * An IPv6 bind address may be written as in a URL, `[::1]`: the same address as `::1`. Node's
 * listen looked `[::1]` up as a name (getaddrinfo ENOTFOUND), while the token rule already
 * counted it as loopback.
 */
function bindHost(host: string): string {
  return host.startsWith('[') && host.endsWith(']') && isIP(host.slice(1, -1)) === 6 ? host.slice(1, -1) : host;
}

const httpSchema = z.strictObject({
  /** A name or an IP literal; an IPv6 one bare (`::1`, `::`) or bracketed (`[::1]`). */
  host: z.string().min(1).transform(bindHost).default('127.0.0.1'),
  port: z.number().int().min(0).max(65_535).default(3000),
  endpointPath: z
    .string()
    .regex(/^\/[A-Za-z0-9/_.-]*$/, 'endpointPath must start with / and hold only [A-Za-z0-9/_.-]')
    // The Streamable endpoint is matched before the other routes: `/health` answered monitors
    // 400 "Mcp-Session-Id header is required", and `/` hid the server information.
    .refine((value) => !isReservedPath(value), `endpointPath may not be one of the server's other paths (${RESERVED_PATHS.join(', ')}, /message/...)`)
    .default('/mcp'),
  /** Sessions with no request and no running call for this long, and no open GET stream, are closed. */
  sessionIdleTimeoutMs: timerMs().default(30 * 60_000),
  /**
   * Sessions with no request and no running call for this long are closed even though their
   * stream is open (a Streamable HTTP GET stream, or a legacy SSE session's stream); 0: never.
   * An open stream says the client process lives, not that it still uses the session: one that
   * drops a session without DELETE (a gateway opening one per conversation) keeps its stream,
   * and its sessions piled up until `maxSessions` refused every new one. Decision: 24 h, past any
   * pause of a person at a client; the client is then told as after a restart (404: initialize).
   */
  connectedSessionIdleTimeoutMs: timerMs(0).default(24 * 3_600_000),
  /** Interval of the `heartbeat` events on GET SSE streams. */
  heartbeatIntervalMs: timerMs().default(15_000),
  /** Origins allowed besides the local ones (http(s)://localhost, 127.0.0.1, [::1] on any port). */
  allowedOrigins: z.array(z.string().min(1)).default([]),
  /** Bearer token every MCP request must carry; MCPVISOR_AUTH_TOKEN sets it too. */
  authToken: z.string().min(16, 'authToken must be at least 16 characters').optional(),
  /** Serve a non-loopback address with no token. Named to be noticed in a review. */
  dangerouslyAllowUnauthenticatedNetwork: z.boolean().default(false),
  maxSessions: z.number().int().positive().default(10_000),
  maxBodyBytes: z.number().int().positive().default(4 * 1024 * 1024),
  maxConcurrentCallsPerSession: z.number().int().positive().default(32),
  /** Let in-flight calls finish for this long on SIGTERM before the pools are stopped. */
  shutdownGraceMs: timerMs(0).default(10_000),
  /** `public`: anyone may read it; `token`: only with the bearer token; `off`: 404. */
  healthEndpoint: z.enum(['public', 'token', 'off']).default('public'),
  metricsEndpoint: z.enum(['public', 'token', 'off']).default('public'),
  /**
   * Token buckets; a breach answers 429 at once. 0 turns a limit off. The defaults stop floods, not
   * busy clients (an assistant makes a few calls a second); behind a proxy every client shares
   * the proxy's address, so raise or drop the per-client limit there.
   */
  rateLimit: z
    .strictObject({
      perIpRequestsPerSecond: z.number().min(0).default(5_000),
      perIpBurst: z.number().int().min(1).default(10_000),
      perSessionRequestsPerSecond: z.number().min(0).default(1_000),
      perSessionBurst: z.number().int().min(1).default(2_000),
    })
    .prefault({}),
  /**
   * Proxies whose X-Forwarded-For is believed (express's `trust proxy`: `false`, `true`, `loopback`,
   * a hop count or addresses). Set it behind nginx so per-client limits see real clients.
   */
  trustProxy: z.union([z.boolean(), z.number().int().min(0), z.string().min(1)]).default(false),
  /** A client must send its request headers within this time (slowloris). */
  headersTimeoutMs: timerMs().default(10_000),
  /** ... and its whole request (headers and body) within this time. */
  requestTimeoutMs: timerMs().default(30_000),
  /** An SSE stream whose client stopped reading is closed once this much output is waiting. */
  maxStreamBufferBytes: z.number().int().positive().default(4 * 1024 * 1024),
  /**
   * ... and every SSE stream's together: past it the streams with the most waiting are closed
   * first. Decision: 256 MiB (64 streams at maxStreamBufferBytes): 1,000 clients that stopped
   * reading held up to 4 GB under the per-stream bound alone, while streams of clients that read
   * hold next to nothing.
   */
  maxTotalStreamBufferBytes: z.number().int().positive().default(256 * 1024 * 1024),
  /**
   * Streamable HTTP resumability (MCP "Resumability and Redelivery"): the events of a call's SSE
   * response carry ids, and a client whose stream was cut resumes it with a GET carrying
   * `Last-Event-ID`. Each session keeps its recent SSE events, bounded by count, bytes and age;
   * JSON answers (the usual fast call) are not kept. Decision: 1000 events, 4 MiB (the size of
   * a stream's own send buffer, maxStreamBufferBytes) and 5 min per session; a call whose stream
   * dropped runs on for 2 min waiting for a resume, then is cancelled as a dropped request is
   * without resumability (a network change or a proxy's reconnect takes seconds; clients give
   * up sooner: the SDK's after ~2.5 s). A stream whose last event was written out whole is let go
   * 10 s later (a client cut just then resumes within seconds), and all sessions together keep at
   * most `maxTotalBytes` (128 MiB): 10,000 sessions at 4 MiB each would be 40 GB.
   */
  resumability: z
    .strictObject({
      enabled: z.boolean().default(true),
      maxEvents: z.number().int().positive().default(1000),
      maxBytes: z.number().int().positive().default(4 * 1024 * 1024),
      maxTotalBytes: z.number().int().positive().default(128 * 1024 * 1024),
      eventTtlMs: timerMs().default(5 * 60_000),
      resumeWindowMs: timerMs().default(2 * 60_000),
      /**
       * Legacy `GET /sse` streams resume too (with `enabled`). Decision: off by default. The SDK's
       * SSEClientTransport (1.32) never sends Last-Event-ID, so it cannot resume, and with this on
       * each legacy stream its client closed leaves its session and calls running for
       * resumeWindowMs; clients that send the header (browsers' EventSource) gain from it.
       */
      legacySse: z.boolean().default(false),
    })
    .prefault({}),
});

const customToolsetSchema = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, 'name must be 1-32 characters of [a-z0-9-], starting with a letter'),
  /** Path of the worker module (compiled JavaScript), relative to the config file's folder. */
  module: z.string().min(1),
  kind: z.enum(['process', 'thread']).default('process'),
  workers: z.number().int().min(1).max(64).default(1),
  /** Calls one worker (process or thread) runs at once. */
  concurrency: z.number().int().min(1).max(1000).default(1),
  callTimeoutMs: timerMs().optional(),
  /** Prefix for the tool names, `<namespace>-<tool>`. */
  namespace: z.string().regex(/^[a-z0-9-]{1,20}$/).optional(),
  config: z.unknown().optional(),
  /**
   * false: its pool does not turn /health 503, and a toolset that cannot start (its module missing
   * or throwing, its init failing) is left out and tried again rather than stop the start, as an
   * API's (`apis[].affectsHealth`).
   */
  affectsHealth: z.boolean().default(true),
});

/** The whole configuration of the supervisor; every entry point is a profile over it. */
export const configSchema = z.strictObject({
  name: z.string().min(1).default('mcpvisor'),
  version: z.string().min(1).optional(),
  transport: z.enum(['stdio', 'http'], { error: 'transport must be stdio or http' }).default('stdio'),
  debug: z.boolean().default(false),
  logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  http: httpSchema.prefault({}),
  pools: poolsSchema.prefault({}),
  shell: shellSchema.prefault({}),
  web: webSchema.prefault({}),
  apis: z.array(apiSchema).default([]),
  customToolsets: z.array(customToolsetSchema).default([]),
});

export type Config = z.infer<typeof configSchema>;
/** What a user may write: every field optional. */
export type ConfigInput = z.input<typeof configSchema>;
export type HttpConfig = Config['http'];
export type PoolsConfig = Config['pools'];
export type RestartConfig = PoolsConfig['restart'];
export type CustomToolsetConfig = Config['customToolsets'][number];
