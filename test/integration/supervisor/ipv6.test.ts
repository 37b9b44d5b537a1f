import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, connectSse, textOf } from '../../helpers/mcp';
import { spawnBin, type Spawned } from '../../helpers/processes';

const TOKEN = 'a-long-test-token-0123456789';

/** Starts mcpvisor over HTTP on `host` and waits for its `listening` line's URL. */
async function serve(host: string, root: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<{ server: Spawned; url: string }> {
  const config = writeConfig(fixtureConfig({ thread: false, root }));
  const server = spawnBin('mcpvisor', ['--transport', 'http', '--host', host, '--port', '0', '--config', config], env);
  const entry = await server.waitForLog((line) => line.msg === 'listening');
  return { server, url: String(entry.url) };
}

/** A GET over IPv6 loopback with the headers given (Host included, which fetch does not let a caller set). */
function get(port: number, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '::1', port, path, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject).end();
  });
}

describe('serving IPv6', () => {
  it('takes --host [::1] as ::1 (as written in a URL), and serves Streamable HTTP, legacy SSE and /health there', async () => {
    const { server, url } = await serve('[::1]');
    try {
      expect(url).toMatch(/^http:\/\/\[::1\]:\d+\/mcp$/);
      const port = Number(new URL(url).port);
      const streamable = await connectHttp(url);
      expect(textOf(await streamable.client.callTool({ name: 'echo', arguments: { text: 'six' } }))).toBe('six');
      await streamable.client.close();
      // The legacy endpoint event is a path the client resolves against its own [::1] URL.
      const sse = await connectSse(new URL(url).origin);
      expect(textOf(await sse.client.callTool({ name: 'echo', arguments: { text: 'legacy' } }))).toBe('legacy');
      await sse.client.close();
      expect(await get(port, '/health', { host: `[::1]:${port}` })).toBe(200);
      // Still a loopback bind: a rebound name is refused, the loopback literals are not.
      expect(await get(port, '/health', { host: `evil.example:${port}` })).toBe(403);
      expect(await get(port, '/health', { host: `[0:0:0:0:0:0:0:1]:${port}` })).toBe(200);
    } finally {
      await server.stop();
    }
  });

  it('counts every spelling of a loopback address as loopback: no token needed, Host checked', async () => {
    const { server, url } = await serve('0:0:0:0:0:0:0:1');
    try {
      expect(url).toMatch(/^http:\/\/\[::1\]:\d+\/mcp$/);
      const port = Number(new URL(url).port);
      expect(await get(port, '/health', { host: `evil.example:${port}` })).toBe(403);
    } finally {
      await server.stop();
    }
  });

  it('on :: with a token, serves IPv4 and IPv6 clients alike (dual stack)', async () => {
    const { server, url } = await serve('::', {}, { MCPVISOR_AUTH_TOKEN: TOKEN });
    try {
      expect(url).toMatch(/^http:\/\/\[::\]:\d+\/mcp$/);
      const port = new URL(url).port;
      for (const base of [`http://127.0.0.1:${port}/mcp`, `http://[::1]:${port}/mcp`]) {
        const transport = new StreamableHTTPClientTransport(new URL(base), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
        const client = new Client({ name: 'dual-stack', version: '1' });
        await client.connect(transport);
        expect(textOf(await client.callTool({ name: 'echo', arguments: { text: base } }))).toBe(base);
        await client.close();
      }
    } finally {
      await server.stop();
    }
  });

  it('matches a listed IPv6 origin however it is written, as browsers send it (CORS and the Origin check)', async () => {
    const { server, url } = await serve('::1', { http: { allowedOrigins: ['http://[0:0:0:0:0:0:0:1]:5173', 'http://[2001:DB8::a]:5174/'] } });
    try {
      const preflight = (origin: string) =>
        fetch(url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, mcp-session-id' } });
      for (const origin of ['http://[::1]:5173', 'http://[2001:db8::a]:5174']) {
        const answer = await preflight(origin);
        expect(answer.status).toBe(204);
        expect(answer.headers.get('access-control-allow-origin')).toBe(origin);
      }
      const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { origin: 'http://[2001:db8::a]:5174' } } });
      const client = new Client({ name: 'listed-origin', version: '1' });
      await client.connect(transport);
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'origin' } }))).toBe('origin');
      await client.close();
      // Not listed: no CORS answer, and the Origin check refuses it.
      expect((await preflight('http://[2001:db8::b]:5174')).headers.get('access-control-allow-origin')).toBeNull();
      expect((await fetch(url, { method: 'POST', headers: { origin: 'http://[2001:db8::b]:5174', 'content-type': 'application/json' }, body: '{}' })).status).toBe(403);
    } finally {
      await server.stop();
    }
  });

  it('rate-limits an IPv6 client by its /64, so a new address per request does not reset its bucket', async () => {
    // Behind a proxy on loopback, which names the client in X-Forwarded-For. Two requests per client, then none.
    const rateLimit = { perIpRequestsPerSecond: 0.001, perIpBurst: 2 };
    const { server, url } = await serve('::1', { http: { trustProxy: 'loopback', rateLimit } });
    try {
      const port = Number(new URL(url).port);
      const from = (client: string) => get(port, '/mcp', { host: `[::1]:${port}`, 'x-forwarded-for': client, accept: 'text/event-stream' });
      const statuses = [];
      for (let i = 1; i <= 4; i++) statuses.push(await from(`2001:db8:1:2::${i}`));
      expect(statuses.slice(0, 2)).not.toContain(429);
      expect(statuses.slice(2)).toEqual([429, 429]);
      // Another /64 is another client.
      expect(await from('2001:db8:1:3::1')).not.toBe(429);
      // IPv4 clients, mapped or not, are one bucket per address.
      expect(await from('203.0.113.7')).not.toBe(429);
      expect(await from('::ffff:203.0.113.7')).not.toBe(429);
      expect(await from('203.0.113.7')).toBe(429);
      expect(await from('203.0.113.8')).not.toBe(429);
    } finally {
      await server.stop();
    }
  });
});
