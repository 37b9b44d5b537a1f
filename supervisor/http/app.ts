import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import proxyaddr from 'proxy-addr';
import type { HttpConfig } from '../../config/schema';
import type { Logger } from '../logger';
import type { Supervisor } from '../supervisor';
import { bearerAuth, digest, hasToken } from './auth';
import { readJsonBody } from './body';
import { corsCheck } from './cors';
import { hostGuard, middleware, originGuard, sendJsonRpcError, type Check } from './guards';
import { clientKey, KeyedRateLimiter, rateLimit } from './rate-limit';
import { LegacySseSessions, messageSessionId } from './legacy-sse';
import { StreamableSessions } from './streamable';
import { listenErrorHint } from './listen-error';
import { openFilesWarning } from './open-files';
import { refusalRecorder } from './refusals';
import { StreamBudget, type StreamCut } from './stream-budget';
import { RepeatSummary, windowWords } from '../../protocol/repeat-summary';

export interface RunningHttp {
  /** The Streamable HTTP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string;
  /** Ends every session and closes the listener. */
  close(): Promise<void>;
}

/**
 * One HTTP server for every transport: Streamable HTTP at `endpointPath`, legacy `GET /sse` +
 * `POST /message/{sessionId}`, `GET /` (server information), `GET /health` and `GET /metrics`.
 * The Streamable HTTP endpoint, where every tool call goes, is served on Node's http module
 * directly: express's routing and body parsing cost about 40 % of the supervisor's CPU per call
 * (measured, bench/openapi/throughput.ts). Express serves everything else.
 */
export function startHttp(supervisor: Supervisor, config: HttpConfig, logger: Logger): Promise<RunningHttp> {
  const log = logger.child({ component: 'http' });
  void supervisor.metrics; // count calls from the first one on
  const { budget: streamBudget, flush: flushStreamCuts } = streamBudgetOf(supervisor, config, log);
  const streamable = new StreamableSessions(supervisor, config, logger, streamBudget);
  const legacy = new LegacySseSessions(supervisor, config, logger, streamBudget, streamable.resumeBudget);
  supervisor.addSessionCounter(() => streamable.size + legacy.size);

  const app = express();
  app.disable('x-powered-by');
  // Behind a proxy, the client is the one X-Forwarded-For names, so per-client limits see clients.
  app.set('trust proxy', config.trustProxy);
  const trust = app.get('trust proxy fn') as (address: string, hop: number) => boolean;
  // The legacy endpoint reads bodies as the Streamable one does (body.ts), not with express.json,
  // which made bytes that are not UTF-8 U+FFFD silently, read a Latin-1 charset as UTF-8 and
  // inflated gzip bodies.
  const json = (req: Request, res: Response, next: NextFunction) => {
    readJsonBody(req, res, config.maxBodyBytes).then((read) => {
      if (!read.ok) return;
      req.body = read.body;
      next();
    }, next);
  };
  // Every route, not only the MCP ones (guards.ts).
  const hostAllowed = hostGuard(config);
  const limits = config.rateLimit;
  // Without a trusted proxy the client is the socket's peer: no X-Forwarded-For parse per request.
  const clientOf = config.trustProxy === false ? (req: IncomingMessage) => req.socket.remoteAddress : (req: IncomingMessage) => proxyaddr(req, trust);
  const refusals = refusalRecorder(supervisor.metrics, logger, clientOf);
  // Logs name the client's address; the limit keys an IPv6 client by its /64 (rate-limit.ts,
  // clientKey). The key of the address seen last is kept: an IPv6 one takes ~2 µs to work out,
  // and calls come in runs from one client (or one proxy).
  let lastAddress: string | undefined;
  let lastKey: string | undefined;
  const keyOf = (req: IncomingMessage) => {
    const address = clientOf(req);
    if (address !== lastAddress) [lastAddress, lastKey] = [address, clientKey(address)];
    return lastKey;
  };
  const perIp = rateLimit(new KeyedRateLimiter(limits.perIpRequestsPerSecond, limits.perIpBurst), keyOf, 'per-client');
  const perSession = rateLimit(
    new KeyedRateLimiter(limits.perSessionRequestsPerSecond, limits.perSessionBurst),
    // Known sessions only: a bucket per unknown id would let a flood of made-up ids (any length,
    // answered 404 anyway) hold memory.
    (req) => {
      const session = sessionOf(req, config.endpointPath);
      return session && (session.legacy ? legacy.has(session.id) : streamable.has(session.id)) ? session.id : undefined;
    },
    'per-session',
  );
  // Cheap checks first, so a refused request costs no body parsing.
  // CORS before the token: a browser's preflight carries none.
  const checks: Check[] = [perIp, originGuard(config), corsCheck(config), bearerAuth(config.authToken), perSession];
  const mcp = checks.map(middleware);
  const wrap = (handler: (req: Request, res: Response) => Promise<void>) => (req: Request, res: Response, next: NextFunction) =>
    handler(req, res).catch(next);
  const tokenDigest = config.authToken === undefined ? undefined : digest(config.authToken);
  /** `off`: 404; `token`: 401 without the bearer token; `public`: open. */
  const exposed = (mode: 'public' | 'token' | 'off', handler: (req: Request, res: Response) => void | Promise<void>) =>
    (req: Request, res: Response, next: NextFunction) => {
      if (mode === 'off') return next();
      if (mode === 'token' && (tokenDigest === undefined || !hasToken(req, tokenDigest))) {
        res.setHeader('WWW-Authenticate', 'Bearer realm="mcpvisor"');
        res.status(401).json({ error: 'unauthorized' });
        return;
      }
      Promise.resolve(handler(req, res)).catch(next);
    };

  app.get('/', (_req, res) => {
    const health = supervisor.health();
    res.json({
      name: supervisor.config.name,
      version: health.version,
      status: health.status,
      tools: supervisor.catalogue.size,
      endpoints: {
        streamableHttp: config.endpointPath,
        sse: '/sse',
        messages: '/message/{sessionId}',
        ...(config.healthEndpoint === 'off' ? {} : { health: '/health' }),
        ...(config.metricsEndpoint === 'off' ? {} : { metrics: '/metrics' }),
      },
    });
  });
  app.get('/health', exposed(config.healthEndpoint, (_req, res) => {
    const health = supervisor.health();
    res.status(health.status === 'ok' ? 200 : 503).json(health);
  }));
  app.get('/metrics', exposed(config.metricsEndpoint, async (_req, res) => {
    res.setHeader('Content-Type', supervisor.metrics.registry.contentType);
    res.send(await supervisor.metrics.registry.metrics());
  }));

  /** The Streamable HTTP endpoint, without express (see above). */
  const endpoint = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    for (const check of checks) if (!check(req, res)) return void req.resume();
    if (req.method !== 'GET' && req.method !== 'POST' && req.method !== 'DELETE') {
      res.setHeader('Allow', 'GET, POST, DELETE');
      req.resume();
      return sendJsonRpcError(res, 405, -32000, `Method ${req.method} not allowed`);
    }
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readJsonBody(req, res, config.maxBodyBytes);
      if (!read.ok) return;
      body = read.body;
    } else {
      req.resume();
    }
    await streamable.handle(req, res, body);
  };
  // Preflights of listed browser origins (cors.ts); any other OPTIONS falls through to the 404.
  app.options(['/sse', '/message', '/message/:sessionId'], ...mcp, (_req: Request, _res: Response, next: NextFunction) => next());
  app.get('/sse', ...mcp, wrap((req, res) => legacy.open(req, res)));
  app.post(['/message', '/message/:sessionId'], ...mcp, json, wrap((req, res) => legacy.post(req, res)));

  // A known path asked with a method it does not take: 405 naming the ones it does (a 404 "not
  // found" for `POST /health` sent operators looking for a missing route). OPTIONS stays a 404
  // (cors.ts), and an endpoint turned off stays unknown.
  const methodsOf = (path: string): string | undefined => {
    if (path === '/' || path === '/sse') return 'GET, HEAD';
    if (path === '/health') return config.healthEndpoint === 'off' ? undefined : 'GET, HEAD';
    if (path === '/metrics') return config.metricsEndpoint === 'off' ? undefined : 'GET, HEAD';
    if (path === '/message' || /^\/message\/[^/]+$/.test(path)) return 'POST';
    return undefined;
  };
  app.use((req: Request, res: Response, next: NextFunction) => {
    const allow = req.method === 'OPTIONS' ? undefined : methodsOf(req.path);
    if (!allow) return next();
    req.resume();
    res.setHeader('Allow', allow);
    res.status(405).json({ error: `method ${req.method} not allowed on ${req.path}`, allow: allow.split(', ') });
  });
  app.use((_req: Request, res: Response) => {
    res.status(404).json({ error: 'not found', endpoints: [config.endpointPath, '/sse', '/message/{sessionId}', '/health', '/'] });
  });
  // Anything thrown by a handler: a JSON-RPC error, never a stack trace.
  app.use((error: Error & { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    if (error.status && error.status >= 400 && error.status < 500) return sendJsonRpcError(res, error.status, -32600, error.message);
    log.error({ err: error.message }, 'request failed');
    sendJsonRpcError(res, 500, -32603, 'Internal error');
  });

  return new Promise((resolve, reject) => {
    // Node checks the two timeouts below on this period (30 s by default), which let a slow client
    // hold its socket up to 30 s past them: a tenth of the shorter one keeps them near their word.
    const connectionsCheckingInterval = Math.max(250, Math.floor(Math.min(config.headersTimeoutMs, config.requestTimeoutMs) / 10));
    const server = createServer({ connectionsCheckingInterval }, (req, res) => {
      refusals.watch(req, res);
      if (!hostAllowed(req, res)) return void req.resume();
      const path = req.url === undefined ? '' : req.url.split('?', 1)[0];
      if (path !== config.endpointPath) return app(req, res);
      endpoint(req, res).catch((error: Error) => {
        log.error({ err: error.message }, 'request failed');
        sendJsonRpcError(res, 500, -32603, 'Internal error');
      });
    });
    server.listen(config.port, config.host);
    // Slow or stalled clients (slowloris) cannot hold sockets open forever.
    server.headersTimeout = config.headersTimeoutMs;
    server.requestTimeout = config.requestTimeoutMs;
    server.keepAliveTimeout = 5_000;
    // Named with what was asked for: getaddrinfo's ENOTFOUND for a mistyped host named neither.
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`cannot listen on host ${JSON.stringify(config.host)}, port ${config.port} (http.host, http.port): ${error.message}${listenErrorHint(error, config.port)}`)),
    );
    server.once('listening', () => {
      const address = server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      const url = `http://${host}:${address.port}${config.endpointPath}`;
      log.info({ url }, 'listening');
      const filesWarning = openFilesWarning(config.maxSessions);
      if (filesWarning) log.warn(filesWarning);
      // pm2 (`wait_ready`) counts the process online only from here, so a reload waits for it.
      if (process.send && process.connected) process.send('ready', undefined, undefined, () => undefined);
      resolve({
        url,
        async close() {
          server.close();
          await Promise.all([streamable.closeAll(), legacy.closeAll()]);
          server.closeAllConnections();
          refusals.flush();
          flushStreamCuts();
        },
      });
    });
  });
}

/**
 * The bound on output waiting on SSE streams (stream-budget.ts), counted in `/metrics`, and a
 * warning per reason and minute naming the bound: a stream closed this way is otherwise only a
 * client's reconnect.
 */
function streamBudgetOf(supervisor: Supervisor, config: HttpConfig, log: Logger): { budget: StreamBudget; flush: () => void } {
  const summary = new RepeatSummary((cut, more, windowMs) => log.warn({ more }, `SSE streams closed: ${more} more ${cutWords(cut as StreamCut)} ${windowWords(windowMs)}`));
  const budget = new StreamBudget({ maxStreamBytes: config.maxStreamBufferBytes, maxTotalBytes: config.maxTotalStreamBufferBytes }, (cut, waitingBytes) => {
    supervisor.metrics.streamCut(cut);
    if (summary.first(cut)) log.warn({ waitingBytes, streams: budget.size }, `SSE stream closed ${cutWords(cut)}`);
  });
  supervisor.metrics.watchStreamWaiting(() => budget.waitingBytes);
  return { budget, flush: () => summary.flush() };
}

function cutWords(cut: StreamCut): string {
  return cut === 'stream'
    ? 'for a client not reading (its output waiting over http.maxStreamBufferBytes)'
    : 'for clients not reading (the output waiting on every stream together over http.maxTotalStreamBufferBytes; the fullest close first)';
}

/**
 * The session a request names, as its transport reads it: the Streamable endpoint's
 * `Mcp-Session-Id`, a legacy `POST /message`'s id (as LegacySseSessions.post reads it). Each
 * route by its own rule: a legacy POST with an `Mcp-Session-Id` header of its own making went
 * unlimited, keyed by a session that did not exist.
 */
function sessionOf(req: IncomingMessage, endpointPath: string): { id: string; legacy: boolean } | undefined {
  const path = (req.url ?? '').split('?', 1)[0];
  if (path === endpointPath) {
    const header = req.headers['mcp-session-id'];
    return typeof header === 'string' ? { id: header, legacy: false } : undefined;
  }
  if (!path.startsWith('/message')) return undefined;
  // An express request here: the checks run as the /message routes' middleware.
  const id = messageSessionId(req as Request);
  return id === undefined ? undefined : { id, legacy: true };
}
