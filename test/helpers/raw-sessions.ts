/**
 * Many sessions from one process without an SDK client each (an SDK client per session costs
 * the load generator more than the server): Streamable HTTP initialise, calls, GET stream,
 * DELETE, legacy `GET /sse`, and clients that stop reading, over Node's http on loopback.
 */
import { Agent, request, type ClientRequest, type IncomingMessage } from 'node:http';

const initializeBody = (protocolVersion: string) =>
  JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'many-sessions', version: '1' } } });
const INITIALIZED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });

/** Keep-alive sockets for the short requests; streams get a socket of their own. */
export const shortAgent = new Agent({ keepAlive: true, maxSockets: 64 });

/** One request with a body; resolves with status, headers and the body read whole. */
export function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: shortAgent }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const POST_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Initialises a Streamable HTTP session (initialize + initialized); returns its id. */
export async function initialize(mcpUrl: string, protocolVersion = '2025-06-18'): Promise<string> {
  const first = await send(mcpUrl, 'POST', POST_HEADERS, initializeBody(protocolVersion));
  const id = first.headers['mcp-session-id'];
  if (first.status !== 200 || typeof id !== 'string') throw new Error(`initialize answered ${first.status}: ${first.body.slice(0, 200)}`);
  const second = await send(mcpUrl, 'POST', { ...POST_HEADERS, 'mcp-session-id': id, 'mcp-protocol-version': protocolVersion }, INITIALIZED);
  if (second.status !== 202) throw new Error(`initialized answered ${second.status}`);
  return id;
}

/** A tools/call on a session; resolves with the status and body. */
export function call(mcpUrl: string, sessionId: string, id: number, name: string, args: Record<string, unknown>, progressToken?: string): Promise<{ status: number; body: string }> {
  const params = { name, arguments: args, ...(progressToken === undefined ? {} : { _meta: { progressToken } }) };
  return send(mcpUrl, 'POST', { ...POST_HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' }, JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }));
}

/** DELETE of a session; resolves with the status. */
export async function end(mcpUrl: string, sessionId: string): Promise<number> {
  return (await send(mcpUrl, 'DELETE', { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' })).status;
}

export interface OpenStream {
  req: ClientRequest;
  res: IncomingMessage;
  /** Bytes read so far (0 for a stream opened with `read: false`). */
  bytes(): number;
  close(): void;
}

/**
 * Opens a stream (the session's GET, or legacy `GET /sse`) on a socket of its own. With `read:
 * false` the client reads nothing after the headers: its socket's receive buffer fills and the
 * server's writes wait (a client that stopped reading).
 */
export function openStream(url: string, headers: Record<string, string>, read = true): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', headers: { accept: 'text/event-stream', ...headers }, agent: false }, (res) => {
      let bytes = 0;
      if (read) res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      else res.pause();
      res.on('error', () => undefined);
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`GET ${url} answered ${res.statusCode}`));
        return;
      }
      resolve({ req, res, bytes: () => bytes, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

/** A legacy SSE session: its stream, and its id read from the `endpoint` event. */
export function openLegacy(baseUrl: string): Promise<{ id: string; stream: OpenStream }> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}/sse`, { method: 'GET', headers: { accept: 'text/event-stream' }, agent: false }, (res) => {
      let text = '';
      let bytes = 0;
      res.setEncoding('utf8');
      res.on('error', () => undefined);
      const onData = (chunk: string) => {
        bytes += chunk.length;
        text += chunk;
        const match = /sessionId=([0-9a-f-]+)/.exec(text);
        if (match) {
          res.off('data', onData);
          res.on('data', (more: string) => (bytes += more.length));
          resolve({ id: match[1], stream: { req, res, bytes: () => bytes, close: () => req.destroy() } });
        }
      };
      res.on('data', onData);
    });
    req.on('error', reject);
    req.end();
  });
}

export interface StalledResponse {
  res: IncomingMessage;
  /** Reads the rest: its text, and whether it ended normally (not cut by the server). */
  readRest(): Promise<{ text: string; complete: boolean }>;
}

/**
 * A request whose answer the client does not read: the headers are taken, then nothing, until
 * `readRest`. Its socket is its own.
 */
export function stalledRequest(url: string, method: string, headers: Record<string, string>, body?: string): Promise<StalledResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      res.pause();
      // From the start: a cut may come while nobody reads.
      const closed = new Promise<boolean>((done) => {
        res.once('close', () => done(res.complete));
        res.once('error', () => done(false));
      });
      const readRest = async () => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.resume();
        const complete = await closed;
        return { text, complete };
      };
      resolve({ res, readRest });
    });
    req.on('error', reject);
    req.end(body);
  });
}
