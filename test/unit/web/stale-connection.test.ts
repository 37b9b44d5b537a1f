import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { httpFetch } from '../../../workers/web/http-fetch';

/**
 * A server that answers the first request of each connection and drops the connection on the
 * second: what a client sees when a server closes a kept-alive connection just as it is reused.
 */
let server: Server;
let base: string;
const served = new WeakMap<Socket, number>();

beforeAll(async () => {
  server = createServer((req, res) => {
    const count = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, count);
    if (count > 1) return void req.socket.destroy();
    res.writeHead(200, { 'content-type': 'text/plain', connection: 'keep-alive' });
    res.end(`answer ${req.url}`);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('httpFetch on a kept-alive connection the server drops', () => {
  it('sends a GET once more on a fresh connection and gets its answer', async () => {
    const first = await httpFetch(`${base}/one`, { allowPrivateNetwork: true, timeoutMs: 5000 });
    expect(first.text).toBe('answer /one');
    const second = await httpFetch(`${base}/two`, { allowPrivateNetwork: true, timeoutMs: 5000 });
    expect(second.text).toBe('answer /two');
  });
});
