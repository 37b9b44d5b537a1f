import net from 'node:net';
import { ApiClient } from '../../../workers/openapi/api-client';
import { httpFetch } from '../../../workers/web/http-fetch';

/**
 * An HTTP/1.1 server that answers every request, except that the first connection to get a second
 * request is reset as it arrives (once): what a keep-alive connection the server closed as idle
 * gives when the client reuses it at that moment. `requests` counts the requests each method reached it with.
 */
async function racingServer(): Promise<{ url: string; requests: Map<string, number>; close(): Promise<void> }> {
  const requests = new Map<string, number>();
  let raced = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let served = 0;
    let buffer = '';
    socket.on('error', () => undefined);
    socket.on('data', (data) => {
      buffer += data.toString('latin1');
      for (let end = buffer.indexOf('\r\n\r\n'); end >= 0; end = buffer.indexOf('\r\n\r\n')) {
        const head = buffer.slice(0, end);
        const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffer.length < end + 4 + length) return;
        buffer = buffer.slice(end + 4 + length);
        const method = head.split(' ', 1)[0];
        requests.set(method, (requests.get(method) ?? 0) + 1);
        if (++served === 2 && !raced) {
          raced = true;
          return void socket.resetAndDestroy();
        }
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  // The clients' idle keep-alive connections would hold close() for seconds.
  const close = () => new Promise<void>((resolve) => {
    server.close(() => resolve());
    for (const socket of sockets) socket.destroy();
  });
  return { url: `http://127.0.0.1:${port}`, requests, close };
}

describe('a keep-alive connection reset as it is reused', () => {
  test('web fetch sends the GET again on a new connection and gets its page', async () => {
    const server = await racingServer();
    try {
      for (let i = 0; i < 6; i++) expect((await httpFetch(`${server.url}/page`, { allowPrivateNetwork: true })).text).toBe('ok');
      expect(server.requests.get('GET')).toBe(7);
    } finally {
      await server.close();
    }
  });

  test('the API client sends a GET again', async () => {
    const server = await racingServer();
    const client = new ApiClient(server.url);
    try {
      for (let i = 0; i < 6; i++) expect((await client.request('GET', '/items')).status).toBe(200);
      expect(server.requests.get('GET')).toBe(7);
    } finally {
      await client.close();
      await server.close();
    }
  });

  test('the API client never sends a POST again: the one that meets the reset fails, naming it', async () => {
    const server = await racingServer();
    const client = new ApiClient(server.url);
    try {
      const outcomes: string[] = [];
      for (let i = 0; i < 6; i++) outcomes.push(await client.request('POST', '/items', { a: i }).then(() => 'ok', (error: { code?: string; message?: string }) => `${error.code}: ${error.message}`));
      expect(outcomes.filter((outcome) => outcome !== 'ok')).toEqual([expect.stringMatching(/^NETWORK_ERROR: .*ECONNRESET/)]);
      expect(server.requests.get('POST')).toBe(6);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
