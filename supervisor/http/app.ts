import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { HttpConfig } from '../../config/schema';
import type { Logger } from '../logger';
import type { Supervisor } from '../supervisor';
import { originGuard, sendJsonRpcError } from './guards';
import { LegacySseSessions } from './legacy-sse';
import { StreamableSessions } from './streamable';

export interface RunningHttp {
  /** The Streamable HTTP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string;
  /** Ends every session and closes the listener. */
  close(): Promise<void>;
}

/**
 * One HTTP app for every transport: Streamable HTTP at `endpointPath`, legacy `GET /sse` +
 * `POST /message/{sessionId}`, `GET /` (server information) and `GET /health`.
 */
export function startHttp(supervisor: Supervisor, config: HttpConfig, logger: Logger): Promise<RunningHttp> {
  const log = logger.child({ component: 'http' });
  const streamable = new StreamableSessions(supervisor, config, logger);
  const legacy = new LegacySseSessions(supervisor, config, logger);
  supervisor.addSessionCounter(() => streamable.size + legacy.size);

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  const json = express.json({ limit: config.maxBodyBytes, type: ['application/json', 'application/*+json'] });
  const guard = originGuard(config);
  const wrap = (handler: (req: Request, res: Response) => Promise<void>) => (req: Request, res: Response, next: NextFunction) =>
    handler(req, res).catch(next);

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
        health: '/health',
      },
    });
  });
  app.get('/health', (_req, res) => {
    const health = supervisor.health();
    res.status(health.status === 'ok' ? 200 : 503).json(health);
  });

  app.all(config.endpointPath, guard, json, wrap((req, res) => {
    if (!['GET', 'POST', 'DELETE'].includes(req.method)) {
      res.setHeader('Allow', 'GET, POST, DELETE');
      sendJsonRpcError(res, 405, -32000, `Method ${req.method} not allowed`);
      return Promise.resolve();
    }
    return streamable.handle(req, res);
  }));
  app.get('/sse', guard, wrap((req, res) => legacy.open(req, res)));
  app.post(['/message', '/message/:sessionId'], guard, json, wrap((req, res) => legacy.post(req, res)));

  app.use((_req: Request, res: Response) => {
    res.status(404).json({ error: 'not found', endpoints: [config.endpointPath, '/sse', '/message/{sessionId}', '/health', '/'] });
  });
  // Body parser failures and anything thrown by a handler: a JSON-RPC error, never a stack trace.
  app.use((error: Error & { type?: string; status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    if (error.type === 'entity.too.large') return sendJsonRpcError(res, 413, -32600, `Request body larger than ${config.maxBodyBytes} bytes`);
    if (error.type === 'entity.parse.failed') return sendJsonRpcError(res, 400, -32700, 'Parse error: the body is not valid JSON');
    if (error.status && error.status >= 400 && error.status < 500) return sendJsonRpcError(res, error.status, -32600, error.message);
    log.error({ err: error.message }, 'request failed');
    sendJsonRpcError(res, 500, -32603, 'Internal error');
  });

  return new Promise((resolve, reject) => {
    const server: HttpServer = app.listen(config.port, config.host);
    server.once('error', reject);
    server.once('listening', () => {
      const address = server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      const url = `http://${host}:${address.port}${config.endpointPath}`;
      log.info({ url }, 'listening');
      resolve({
        url,
        async close() {
          server.close();
          await Promise.all([streamable.closeAll(), legacy.closeAll()]);
          server.closeAllConnections();
        },
      });
    });
  });
}
