import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { request } from 'node:http';
import { connect } from 'node:net';
import path from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { ROOT, spawnBin } from '../../helpers/processes';

const TOKEN = 'a-long-test-token-0123456789';
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The status line's code of a request written byte for byte (fetch and http.request send one Host). */
function rawStatus(port: number, head: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${head}Connection: close\r\n\r\n`));
    let reply = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (reply += chunk));
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(reply)?.[1] ?? 0)));
    socket.on('error', reject);
  });
}

describe('bearer-token auth', () => {
  let server: HttpServer;

  beforeAll(async () => {
    server = await startHttp('mcpvisor', ['--debug', '--config', writeConfig(fixtureConfig({ thread: false, root: { http: { metricsEndpoint: 'token' } } }))], {
      MCPVISOR_AUTH_TOKEN: TOKEN,
    });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers 401 with WWW-Authenticate without a token or with a wrong one, on every MCP endpoint', async () => {
    const none = await fetch(server.mcpUrl, { method: 'POST', headers: HEADERS, body: INIT });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="mcpvisor"');
    const wrong = await fetch(server.mcpUrl, { method: 'POST', headers: { ...HEADERS, authorization: 'Bearer not-the-token' }, body: INIT });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="mcpvisor", error="invalid_token"');
    expect((await fetch(`${server.baseUrl}/sse`)).status).toBe(401);
    expect((await fetch(`${server.baseUrl}/message/x`, { method: 'POST', headers: HEADERS, body: INIT })).status).toBe(401);
  });

  it('lets the SDK client in with the token', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
    const client = new Client({ name: 'authorised', version: '1' });
    await client.connect(transport);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'in' } }))).toBe('in');
    await client.close();
  });

  it('keeps /health public and /metrics behind the token when configured so', async () => {
    expect((await fetch(`${server.baseUrl}/health`)).status).toBe(200);
    expect((await fetch(`${server.baseUrl}/metrics`)).status).toBe(401);
    const metrics = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(metrics.status).toBe(200);
  });

  it('never writes the token to the logs or /health', async () => {
    const health = await (await fetch(`${server.baseUrl}/health`)).text();
    expect(health).not.toContain(TOKEN);
    expect(server.server.stderr()).toContain('configuration validated');
    expect(server.server.stderr()).not.toContain(TOKEN);
  });
});

describe('debug logs', () => {
  it('never write an API key held in the base URL\'s query (or its userinfo): pm2 keeps these logs on disk', async () => {
    const api = { name: 'keyed', openApiSpec: path.join(ROOT, 'test', 'fixtures', 'openapi', 'arguments.yaml'), apiBaseUrl: 'http://user:pass-in-url@127.0.0.1:9/v1?api_key=key-in-query&v=2' };
    const config = writeConfig({ debug: true, shell: { enabled: false }, web: { enabled: false }, apis: [api] });
    const server = spawnBin('mcpvisor', ['--transport', 'http', '--port', '0', '--config', config]);
    await server.waitForLog((line) => line.msg === 'listening');
    await server.stop();
    expect(server.stderr()).toContain('"apiBaseUrl":"http://***@127.0.0.1:9/v1?api_key=***&v=***"');
    expect(server.stderr()).not.toMatch(/key-in-query|pass-in-url/);
  });
});

describe('debug logs of a custom toolset', () => {
  it("never write its own settings (opaque to the server; they may hold the toolset's secrets)", async () => {
    const config = writeConfig(fixtureConfig({ thread: false, process: { config: { upstreamKey: 'custom-secret-value' } }, root: { debug: true } }));
    const server = spawnBin('mcpvisor', ['--transport', 'http', '--port', '0', '--config', config]);
    await server.waitForLog((line) => line.msg === 'listening');
    await server.stop();
    expect(server.stderr()).toContain('configuration validated');
    expect(server.stderr()).toContain('"config":"[redacted]"');
    expect(server.stderr()).not.toContain('custom-secret-value');
  });
});

describe('exposure rules', () => {
  it('refuses to bind a non-loopback address without a token', async () => {
    const server = spawnBin('mcpvisor', ['--transport', 'http', '--host', '0.0.0.0', '--port', '0', '--config', writeConfig(fixtureConfig({ thread: false }))]);
    expect(await server.exited).toBe(2);
    expect(server.stderr()).toContain('refusing to serve 0.0.0.0 without a bearer token');
  });

  it('refuses /health or /metrics behind a token when no token is set: every request, the monitor\'s too, got 401', async () => {
    for (const key of ['healthEndpoint', 'metricsEndpoint'] as const) {
      const server = spawnBin('mcpvisor', ['--transport', 'http', '--port', '0', '--config', writeConfig(fixtureConfig({ thread: false, root: { http: { [key]: 'token' } } }))]);
      expect(await server.exited).toBe(2);
      const endpoint = key === 'healthEndpoint' ? '/health' : '/metrics';
      expect(server.stderr()).toContain(`mcpvisor: http.${key} is token, but no bearer token is set: ${endpoint} would refuse every request; set MCPVISOR_AUTH_TOKEN (or http.authToken), or make it public or off`);
    }
  });

  it('binds a non-loopback address with the loud opt-out flag', async () => {
    const server = spawnBin('mcpvisor', [
      '--transport', 'http', '--host', '0.0.0.0', '--port', '0', '--dangerously-allow-unauthenticated-network',
      '--config', writeConfig(fixtureConfig({ thread: false })),
    ]);
    try {
      const listening = await server.waitForLog((line) => line.msg === 'listening');
      expect(String(listening.url)).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/mcp$/);
      // RFC 9112: two Host lines get 400 on any bind address (Node would keep the first and go on).
      const port = Number(new URL(String(listening.url)).port);
      expect(await rawStatus(port, 'GET /health HTTP/1.1\r\nHost: 10.0.0.5\r\nHost: internal.example\r\n')).toBe(400);
      expect(await rawStatus(port, 'GET /health HTTP/1.1\r\nHost: 10.0.0.5\r\n')).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

describe('limits', () => {
  it('answers 429 with Retry-After past the per-client rate limit, at once', async () => {
    const server = await startHttp('mcpvisor', [
      '--config',
      writeConfig(fixtureConfig({ thread: false, root: { http: { rateLimit: { perIpRequestsPerSecond: 1, perIpBurst: 5 } } } })),
    ]);
    const statuses = [];
    for (let i = 0; i < 8; i++) statuses.push((await fetch(server.mcpUrl, { method: 'POST', headers: HEADERS, body: INIT })).status);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
    const limited = await fetch(server.mcpUrl, { method: 'POST', headers: HEADERS, body: INIT });
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(((await limited.json()) as { error: { message: string } }).error.message).toMatch(/per-client rate limit/);
    await server.stop();
  });

  it('keys the per-client limit on X-Forwarded-For only behind a trusted proxy; a spoofed header dodges nothing', async () => {
    const limits = { rateLimit: { perIpRequestsPerSecond: 1, perIpBurst: 3 } };
    const statuses = async (url: string) => {
      const seen: number[] = [];
      for (let i = 0; i < 5; i++) seen.push((await fetch(url, { method: 'POST', headers: { ...HEADERS, 'x-forwarded-for': `203.0.113.${i}` }, body: INIT })).status);
      return seen;
    };
    const direct = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, root: { http: limits } }))]);
    expect(await statuses(direct.mcpUrl)).toEqual([200, 200, 200, 429, 429]);
    await direct.stop();
    const proxied = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, root: { http: { ...limits, trustProxy: 'loopback' } } }))]);
    expect(await statuses(proxied.mcpUrl)).toEqual([200, 200, 200, 200, 200]);
    await proxied.stop();
  });

  it('answers 413 to a body over the limit and keeps serving', async () => {
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, root: { http: { maxBodyBytes: 1024 } } }))]);
    const { client, transport } = await connectHttp(server.mcpUrl);
    const big = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-session-id': transport.sessionId! },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(5000) } } }),
    });
    expect(big.status).toBe(413);
    // Bodies still being uploaded when the 413 is written: the client reads it (no reset), every time.
    const statuses: number[] = [];
    for (const size of [2_000_000, 6_000_000, 6_000_000, 6_000_000]) {
      const res = await fetch(server.mcpUrl, {
        method: 'POST',
        headers: { ...HEADERS, 'mcp-session-id': transport.sessionId! },
        body: JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(size) } } }),
      });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses).toEqual([413, 413, 413, 413]);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'small' } }))).toBe('small');
    await client.close();
    await server.stop();
  });

  it('refuses new sessions past maxSessions with 503, counting both transports together', async () => {
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, root: { http: { maxSessions: 2 } } }))]);
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await fetch(server.mcpUrl, { method: 'POST', headers: HEADERS, body: INIT })).status);
      expect(statuses).toEqual([200, 200, 503]);
      const legacy = await fetch(`${server.baseUrl}/sse`);
      await legacy.body?.cancel();
      expect(legacy.status).toBe(503);
    } finally {
      await server.stop();
    }
  });

  it('closes a connection that trickles its headers soon after headersTimeoutMs', async () => {
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, root: { http: { headersTimeoutMs: 2505, requestTimeoutMs: 5000 } } }))]);
    try {
      const url = new URL(server.mcpUrl);
      const socket = connect(Number(url.port), url.hostname);
      const started = Date.now();
      const line = 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ';
      let sent = 0;
      // One byte every 100 ms, never ending the headers; bounded by the 12 s wait below.
      const drip = setInterval(() => socket.writable && socket.write(line[sent++ % line.length]), 100);
      const closedAfter = await new Promise<number>((resolve) => {
        socket.on('close', () => resolve(Date.now() - started));
        socket.on('error', () => undefined);
        setTimeout(() => resolve(-1), 12_000);
      });
      clearInterval(drip);
      socket.destroy();
      // Node checks on connectionsCheckingInterval (30 s by default); now a tenth of the timeout,
      // a whole number of ms (2505 ms gave 250.5, which Node refused, and the server did not start).
      expect(closedAfter).toBeGreaterThanOrEqual(2400);
      expect(closedAfter).toBeLessThan(8000);
    } finally {
      await server.stop();
    }
  });

  it('keeps no per-session bucket for session ids it does not hold: made-up ids get 404, never 429', async () => {
    const server = await startHttp('mcpvisor', [
      '--config',
      writeConfig(fixtureConfig({ thread: false, root: { http: { rateLimit: { perSessionRequestsPerSecond: 1, perSessionBurst: 2 } } } })),
    ]);
    try {
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await fetch(server.mcpUrl, { headers: { accept: 'text/event-stream', 'mcp-session-id': 'made-up-'.padEnd(4000, 'x') } })).status);
      expect(statuses).toEqual([404, 404, 404, 404, 404]);
      // A real session still has its limit.
      const { transport } = await connectHttp(server.mcpUrl);
      const ping = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping' });
      const own = [];
      for (let i = 0; i < 3; i++) own.push((await fetch(server.mcpUrl, { method: 'POST', headers: { ...HEADERS, 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': '2025-03-26' }, body: ping })).status);
      expect(own).toContain(429);
    } finally {
      await server.stop();
    }
  });

  it('takes only IPv4 loopback literals as loopback Host names, not names that start like one', async () => {
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false }))]);
    const post = (host: string) => new Promise<number>((resolve, reject) => {
      const url = new URL(server.mcpUrl);
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { ...HEADERS, host } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(INIT);
    });
    try {
      expect(await post('127.0.0.1.evil.example')).toBe(403);
      expect(await post('127.0.0.1.nip.io:8080')).toBe(403);
      expect(await post('127.0.0.2')).toBe(200);
      expect(await post(`localhost:${new URL(server.mcpUrl).port}`)).toBe(200);
      // A second Host line behind a local first one is not let through on the first one's word.
      expect(await rawStatus(Number(new URL(server.mcpUrl).port), 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nhost: evil.example\r\n')).toBe(400);
    } finally {
      await server.stop();
    }
  });
  it('holds /, /health and /metrics to a loopback Host too: a DNS-rebinding page reads none of them', async () => {
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false }))]);
    const get = (path: string, host: string) => new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(server.baseUrl);
      const req = request({ host: url.hostname, port: url.port, path, headers: { host } }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    try {
      for (const path of ['/', '/health', '/metrics', '/nowhere']) {
        const rebound = await get(path, `evil.example:${new URL(server.baseUrl).port}`);
        expect({ path, status: rebound.status }).toEqual({ path, status: 403 });
        expect(rebound.body).toContain('host evil.example');
        expect(rebound.body).not.toMatch(/tools_calls|"pools"|"tools"/);
      }
      expect((await get('/health', `localhost:${new URL(server.baseUrl).port}`)).status).toBe(200);
      expect((await get('/metrics', '127.0.0.1')).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

describe('metrics', () => {
  it('exports sessions, calls by tool and outcome, latency, pool state and event-loop lag', async () => {
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false }))]);
    const { client } = await connectHttp(server.mcpUrl);
    await client.callTool({ name: 'echo', arguments: { text: 'a' } });
    await client.callTool({ name: 'fail', arguments: { code: 'UPSTREAM_ERROR' } });
    const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
    expect(text).toMatch(/^mcpvisor_sessions 1$/m);
    expect(text).toMatch(/^mcpvisor_tool_calls_total\{tool="echo",outcome="ok"\} 1$/m);
    expect(text).toMatch(/^mcpvisor_tool_calls_total\{tool="fail",outcome="UPSTREAM_ERROR"\} 1$/m);
    expect(text).toMatch(/^mcpvisor_pool_call_duration_seconds_count\{pool="test"\} 2$/m);
    expect(text).toMatch(/^mcpvisor_pool_workers_alive\{pool="test"\} 1$/m);
    expect(text).toMatch(/^mcpvisor_pool_queue_depth\{pool="test"\} 0$/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
    await client.close();
    await server.stop();
  });

  it('counts calls a session refuses for its own limit', async () => {
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, root: { http: { maxConcurrentCallsPerSession: 2 } } }))]);
    try {
      const { client } = await connectHttp(server.mcpUrl);
      const results = await Promise.all(Array.from({ length: 4 }, () => client.callTool({ name: 'sleep', arguments: { ms: 300 } })));
      expect(results.filter((r) => r.isError).length).toBe(2);
      const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
      expect(text).toMatch(/^mcpvisor_tool_calls_total\{tool="sleep",outcome="BUSY"\} 2$/m);
      expect(text).toMatch(/^mcpvisor_tool_calls_total\{tool="sleep",outcome="ok"\} 2$/m);
      await client.close();
    } finally {
      await server.stop();
    }
  });
});
