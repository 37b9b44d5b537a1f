import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import path from 'node:path';
import { bigArticle, SERP } from '../web/util';

/** A local server on 127.0.0.1 (port 0) that counts what it answered, and nothing more (it runs for hours). */
export interface Local {
  origin: string;
  /** Requests answered, by route name. */
  counts: Map<string, number>;
  close(): Promise<void>;
}

type Route = (req: IncomingMessage, res: ServerResponse, url: URL, body: string) => string;

async function serve(route: Route): Promise<Local> {
  const counts = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const name = route(req, res, url, Buffer.concat(chunks).toString('utf8'));
      counts.set(name, (counts.get(name) ?? 0) + 1);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** What `GET /items/{id}` answers, so the client can check each answer. */
export const itemTag = (id: number) => `item-${id}-${(id * 7919) % 100_003}`;

/** The OpenAPI description of the soak upstream. Summaries carry a marker the driver finds tools by. */
export function soakDescription(): Record<string, unknown> {
  const id = { name: 'id', in: 'path', required: true, schema: { type: 'integer' } };
  const ok = { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } };
  return {
    openapi: '3.0.3',
    info: { title: 'soak', version: '1.0.0' },
    paths: {
      '/items/{id}': { get: { operationId: 'getItem', summary: 'SOAK:get', parameters: [id], responses: ok } },
      '/items': {
        post: {
          operationId: 'putItem',
          summary: 'SOAK:post',
          requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties: { name: { type: 'string' }, n: { type: 'integer' } }, required: ['name', 'n'] } } } },
          responses: ok,
        },
      },
      '/status/{code}': { get: { operationId: 'statusOf', summary: 'SOAK:status', parameters: [{ ...id, name: 'code' }], responses: ok } },
      '/slow/{ms}': { get: { operationId: 'slowOne', summary: 'SOAK:slow', parameters: [{ ...id, name: 'ms' }], responses: ok } },
      '/big/{bytes}': { get: { operationId: 'bigOne', summary: 'SOAK:big', parameters: [{ ...id, name: 'bytes' }], responses: ok } },
    },
  };
}

/** The upstream API: items, chosen statuses, slow answers, large bodies. */
export function startUpstream(): Promise<Local> {
  return serve((_req, res, url, body) => {
    const json = (status: number, value: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    let m: RegExpExecArray | null;
    if ((m = /^\/items\/(\d+)$/.exec(url.pathname))) return json(200, { id: Number(m[1]), tag: itemTag(Number(m[1])) }), 'item';
    if (url.pathname === '/items') {
      const sent = JSON.parse(body) as { name: string; n: number };
      return json(201, { created: sent.name, doubled: sent.n * 2 }), 'post';
    }
    if ((m = /^\/status\/(\d+)$/.exec(url.pathname))) return json(Number(m[1]), { error: `status ${m[1]}` }), `status-${m[1]}`;
    if ((m = /^\/slow\/(\d+)$/.exec(url.pathname))) {
      const timer = setTimeout(() => json(200, { waited: Number(m![1]) }), Number(m[1]));
      res.on('close', () => clearTimeout(timer));
      return 'slow';
    }
    if ((m = /^\/big\/(\d+)$/.exec(url.pathname))) return json(200, { data: 'x'.repeat(Number(m[1])), end: 'BIG-END' }), 'big';
    json(404, { error: 'no route' });
    return 'unknown';
  });
}

/** A page whose main text carries `marker`, for fetch checks. */
const pageHtml = (marker: string) =>
  `<!doctype html><html><head><title>Page ${marker}</title></head><body><nav>menu</nav><main><article><h1>Page ${marker}</h1>` +
  `<p>This page is number ${marker}. It holds a paragraph long enough for readability to keep it as the main content of the page.</p>` +
  `<p>A second paragraph, so the article has more than one block of text and the extraction has something to choose.</p></article></main></body></html>`;

/**
 * The web: pages (`/page/<n>`), a 300 KB article (`/large`), slow pages (`/slow/<ms>/<n>`),
 * redirect chains (`/redirect/<k>/<n>`), and a DuckDuckGo whose HTML endpoint (`/ddg/html/`)
 * answers the saved result page duckduckgo-1.html.
 */
export function startWeb(): Promise<Local> {
  // ../shared beside the checkout; a worktree elsewhere reads the main one's.
  const serp = readFileSync(path.join(existsSync(SERP) ? SERP : '/work/shared/fixtures/serp', 'duckduckgo-1.html'));
  const large = bigArticle();
  return serve((_req, res, url) => {
    const html = (body: string | Buffer) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    let m: RegExpExecArray | null;
    if (url.pathname === '/ddg/html/' || url.pathname === '/ddg/html') return html(serp), 'serp';
    if ((m = /^\/page\/(\d+)$/.exec(url.pathname))) return html(pageHtml(m[1])), 'page';
    if (url.pathname === '/large') return html(large), 'large';
    if ((m = /^\/slow\/(\d+)\/(\d+)$/.exec(url.pathname))) {
      const timer = setTimeout(() => html(pageHtml(m![2])), Number(m[1]));
      res.on('close', () => clearTimeout(timer));
      return 'slow';
    }
    if ((m = /^\/redirect\/(\d+)\/(\d+)$/.exec(url.pathname))) {
      const left = Number(m[1]);
      res.writeHead(302, { location: left > 1 ? `/redirect/${left - 1}/${m[2]}` : `/page/${m[2]}` }).end();
      return 'redirect';
    }
    if (url.pathname === '/favicon.ico') return res.writeHead(404).end(), 'favicon';
    res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>not found</body></html>');
    return 'unknown';
  });
}
