import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiClient } from '../../../workers/openapi/api-client';
import { rejection } from '../../helpers/rejection';

/** ApiClient against servers that answer oddly: bodies that stall, headers past Node's limit. */
describe('ApiClient when the body stalls after the headers', () => {
  test('times out and cancels while the body is read, with a declared length and without one', async () => {
    // Headers and a first chunk, then nothing: the request's abort must reach undici's body read.
    const server = createServer((req, res) => {
      if (req.url!.includes('sized')) res.setHeader('content-length', '100');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new ApiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, undefined, undefined, { requestTimeoutMs: 300 });
    try {
      for (const path of ['/stall', '/stall?sized']) {
        expect(await rejection(client.request('GET', path))).toMatchObject({ code: 'TIMEOUT', message: expect.stringContaining(`timed out after 300 ms (GET http://127.0.0.1:`) });
        const controller = new AbortController();
        const pending = rejection(client.request('GET', path, undefined, undefined, { signal: controller.signal }));
        setTimeout(() => controller.abort(Object.assign(new Error('cancelled'), { code: 'CANCELLED' })), 50);
        expect(await pending).toMatchObject({ code: 'CANCELLED' });
      }
    } finally {
      await client.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('ApiClient response headers', () => {
  test('reads responses whose headers pass 16 KiB (up to 64 KiB), and names the overflow past that', async () => {
    const server = createServer((req, res) => {
      res.setHeader('x-big', 'a'.repeat(Number(new URL(req.url!, 'http://x').searchParams.get('kb')) * 1024));
      res.end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new ApiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      // A gateway's long cookies, CSP and Link list: 30 KiB was lost whole with undici's default.
      expect((await client.request('GET', '/x', { kb: 30 })).status).toBe(200);
      expect(await rejection(client.request('GET', '/x', { kb: 80 }))).toMatchObject({ code: 'NETWORK_ERROR', message: expect.stringContaining('UND_ERR_HEADERS_OVERFLOW') });
    } finally {
      await client.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('ApiClient error messages', () => {
  test('show the values the base URL\'s own query sets as …, a key among them, and the call\'s own ones as given', async () => {
    const server = createServer(() => {
      // Never answers: the request times out.
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1?api_key=SECRET-123&api-version=2024`;
    const client = new ApiClient(base, undefined, undefined, { requestTimeoutMs: 200 });
    const refused = new ApiClient('http://127.0.0.1:9/v1?api_key=SECRET-123');
    try {
      const timeout = await rejection(client.request('GET', '/items', { page: 2 }));
      expect(timeout).toMatchObject({ code: 'TIMEOUT', message: expect.stringMatching(/\(GET http:\/\/127\.0\.0\.1:\d+\/v1\/items\?api_key=…&api-version=…&page=2\)$/) });
      const network = await rejection(refused.request('GET', '/items'));
      expect(network).toMatchObject({ code: 'NETWORK_ERROR', message: expect.stringContaining('GET http://127.0.0.1:9/v1/items?api_key=…: ') });
      expect(`${(timeout as Error).message} ${(network as Error).message}`).not.toContain('SECRET');
    } finally {
      await Promise.all([client.close(), refused.close()]);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
