import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, connectSse, connectStdio, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { bin, descendants, eventually, isAlive } from '../../helpers/processes';

const INIT = (protocolVersion = '2025-03-26', id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Reads an SSE or JSON response body and returns the JSON-RPC messages in it. */
async function messagesOf(response: Response): Promise<Array<Record<string, unknown>>> {
  const text = await response.text();
  if ((response.headers.get('content-type') ?? '').includes('application/json')) return [JSON.parse(text)];
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)));
}

async function rawInitialize(server: HttpServer, protocolVersion?: string, extra: Record<string, string> = {}) {
  const response = await fetch(server.mcpUrl, { method: 'POST', headers: { ...HEADERS, ...extra }, body: JSON.stringify(INIT(protocolVersion)) });
  const sessionId = response.headers.get('mcp-session-id');
  const [message] = await messagesOf(response);
  return { response, sessionId, message };
}

describe('stdio transport', () => {
  it('initialises, lists and calls tools with the SDK client', async () => {
    const connection = await connectStdio('mcpvisor', ['--config', writeConfig(fixtureConfig())]);
    try {
      const { tools } = await connection.client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['echo', 'sleep', 'th-echo']));
      for (const tool of tools) expect(tool.inputSchema.type).toBe('object');
      const result = await connection.client.callTool({ name: 'echo', arguments: { text: 'over stdio' } });
      expect(textOf(result)).toBe('over stdio');
    } finally {
      await connection.close();
    }
  });

  it('writes nothing but JSON-RPC on stdout, even with debug logs, and exits cleanly when stdin closes', async () => {
    const child = spawn(process.execPath, [bin('mcpvisor'), '--debug', '--config', writeConfig(fixtureConfig())], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send(INIT());
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } });
    send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'no-such-tool', arguments: {} } });
    send({ jsonrpc: '2.0', id: 5, method: 'tools/list', params: { cursor: 5 } });
    send({ jsonrpc: '2.0', id: 6, method: 'constructor' });
    send({ jsonrpc: '2.0', id: 7, method: 'resources/list' });
    expect(await eventually(() => stdout.split('\n').filter(Boolean).length >= 7)).toBe(true);
    const workers = descendants(child.pid!);
    expect(workers.length).toBeGreaterThan(0);
    child.stdin.end();
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    const lines = stdout.split('\n').filter(Boolean);
    const messages = lines.map((line) => JSON.parse(line) as { jsonrpc: string; id: number; error?: { code: number; message: string } });
    expect(messages.every((message) => message.jsonrpc === '2.0')).toBe(true);
    expect(messages.map((message) => message.id).sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(messages.find((message) => message.id === 4)!.error).toEqual({ code: -32602, message: "unknown tool 'no-such-tool'" });
    // Bad params of a request the SDK serves: -32602 naming the field, not -32603 with a zod dump.
    expect(messages.find((message) => message.id === 5)!.error).toEqual({ code: -32602, message: expect.stringMatching(/^Invalid params: cursor: /) });
    // Named: the SDK's bare "Method not found" left a client author guessing which.
    expect(messages.find((message) => message.id === 6)!.error).toEqual({ code: -32601, message: expect.stringMatching(/^Method not found: constructor \(this server serves tools only/) });
    expect(messages.find((message) => message.id === 7)!.error).toEqual({ code: -32601, message: expect.stringMatching(/^Method not found: resources\/list /) });
    expect(stderr).toContain('"msg":"configuration validated"');
    expect(await eventually(() => workers.every((pid) => !isAlive(pid)))).toBe(true);
  });
});

describe('stdio transport with malformed input', () => {
  it('answers every malformed line with a JSON-RPC error and keeps serving', async () => {
    // A 4 KB message limit (the stdio line limit is http.maxBodyBytes).
    const config = fixtureConfig({ thread: false, root: { http: { maxBodyBytes: 4096 } } });
    const child = spawn(process.execPath, [bin('mcpvisor'), '--config', writeConfig(config)], { stdio: ['pipe', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stdin.write(`${JSON.stringify(INIT('2025-06-18'))}\n`);
    child.stdin.write('this is not json\n');
    child.stdin.write('[{"jsonrpc":"2.0","id":2,"method":"tools/list"}]\n');
    child.stdin.write('{"jsonrpc":"1.0","id":3,"method":"tools/list"}\n');
    // Over the limit, written in pieces: answered with its id (the SDK client writes it last).
    const long = JSON.stringify({ method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(20_000) } }, jsonrpc: '2.0', id: 5 });
    for (let at = 0; at < long.length; at += 3000) child.stdin.write(long.slice(at, at + 3000));
    child.stdin.write('\n');
    // Nested deeper than any tool input: refused before it reaches a worker.
    const deep = `${'{"a":'.repeat(150)}1${'}'.repeat(150)}`;
    child.stdin.write(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"text":"t","extra":${deep}}}}\n`);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'echo', arguments: { text: 'still here' } } })}\n`);
    expect(await eventually(() => stdout.split('\n').filter(Boolean).length >= 7)).toBe(true);
    child.stdin.end();
    await new Promise((resolve) => child.on('exit', resolve));
    const messages = stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { id: unknown; error?: { code: number } });
    const errors = messages.filter((message) => message.error).map((message) => [message.id, message.error!.code]);
    expect(errors).toEqual(expect.arrayContaining([[null, -32700], [null, -32600], [3, -32600], [5, -32600]]));
    expect(JSON.stringify(messages.find((message) => message.id === 6))).toContain('BAD_INPUT (tool echo): arguments are nested more than 100 levels deep');
    expect(JSON.stringify(messages.find((message) => message.id === 4))).toContain('still here');
  });
});

describe('Streamable HTTP and legacy SSE transports', () => {
  let server: HttpServer;

  beforeAll(async () => {
    server = await startHttp('mcpvisor', [
      '--config',
      writeConfig(fixtureConfig({ root: { http: { heartbeatIntervalMs: 200 } } })),
    ]);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('serves initialize, tools/list and tools/call to the SDK client', async () => {
    const { client } = await connectHttp(server.mcpUrl);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('echo');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'over http' } }))).toBe('over http');
    await client.close();
  });

  it('serves 50 concurrent sessions, each answered with its own results', async () => {
    // Every session sees the whole list the fixtures announce (a count written here went stale
    // whenever a fixture tool was added).
    const first = await connectHttp(server.mcpUrl, 'client-first');
    const listed = (await first.client.listTools()).tools.map((tool) => tool.name);
    await first.client.close();
    expect(listed.length).toBeGreaterThan(2);
    const results = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const { client } = await connectHttp(server.mcpUrl, `client-${i}`);
        const { tools } = await client.listTools();
        const texts = await Promise.all([0, 1].map(async (j) => textOf(await client.callTool({ name: j === 0 ? 'echo' : 'th-echo', arguments: { text: `s${i}-c${j}` } }))));
        await client.close();
        return { names: tools.map((tool) => tool.name), texts };
      }),
    );
    results.forEach((result, i) => {
      expect(result.names).toEqual(listed);
      expect(result.texts).toEqual([`s${i}-c0`, `s${i}-c1`]);
    });
  });

  it('ends a session on DELETE; the ended session then answers 404', async () => {
    const { client, transport } = await connectHttp(server.mcpUrl);
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    await client.close();
    const response = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-session-id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(response.status).toBe(404);
  });

  it('answers 415 to an initialize that is not JSON, reads Accept in any case, and reads JSON past a byte order mark', async () => {
    const notJson = await fetch(server.mcpUrl, { method: 'POST', headers: { ...HEADERS, 'content-type': 'text/plain' }, body: JSON.stringify(INIT()) });
    expect(notJson.status).toBe(415);
    const upper = await fetch(server.mcpUrl, { method: 'POST', headers: { ...HEADERS, accept: 'Application/JSON, Text/Event-Stream' }, body: `\ufeff${JSON.stringify(INIT())}` });
    expect(upper.status).toBe(200);
    expect(((await messagesOf(upper))[0] as { result?: unknown }).result).toBeDefined();
  });

  it('takes arguments: null as no arguments, and answers unusable tools/call params with -32602', async () => {
    const { sessionId } = await rawInitialize(server);
    const post = async (params: unknown) => {
      const response = await fetch(server.mcpUrl, {
        method: 'POST',
        headers: { ...HEADERS, 'mcp-session-id': sessionId!, 'mcp-protocol-version': '2025-03-26' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params }),
      });
      return (await messagesOf(response))[0] as { result?: { isError?: boolean; content: Array<{ text: string }> }; error?: { code: number; message: string } };
    };
    const nullArgs = await post({ name: 'echo', arguments: null });
    expect(nullArgs.result?.content[0].text).toMatch(/missing required argument 'text'/);
    expect(await post({ name: 5 })).toMatchObject({ error: { code: -32602, message: expect.stringContaining("'name' must be a string") } });
    expect(await post({ name: 'echo', arguments: ['x'] })).toMatchObject({ error: { code: -32602, message: expect.stringContaining("'arguments' must be an object") } });
  });

  it('answers 400 to a request without a session and 404 to an unknown session', async () => {
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const missing = await fetch(server.mcpUrl, { method: 'POST', headers: HEADERS, body: list });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toMatch(/Mcp-Session-Id header is required/);
    const unknown = await fetch(server.mcpUrl, { method: 'POST', headers: { ...HEADERS, 'mcp-session-id': 'not-a-session' }, body: list });
    expect(unknown.status).toBe(404);
    const get = await fetch(server.mcpUrl, { headers: { accept: 'text/event-stream', 'mcp-session-id': 'not-a-session' } });
    expect(get.status).toBe(404);
  });

  it('refuses a foreign Origin with 403 and accepts local ones', async () => {
    const foreign = await rawInitialize(server, undefined, { origin: 'http://evil.example' });
    expect(foreign.response.status).toBe(403);
    const local = await rawInitialize(server, undefined, { origin: 'http://localhost:5173' });
    expect(local.response.status).toBe(200);
    const sse = await fetch(`${server.baseUrl}/sse`, { headers: { origin: 'https://evil.example' } });
    expect(sse.status).toBe(403);
  });

  it('refuses a Host header that is not loopback (DNS rebinding) with 403', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(server.mcpUrl, { method: 'POST', headers: { ...HEADERS, host: 'attacker.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(JSON.stringify(INIT()));
    });
    expect(status).toBe(403);
  });

  it.each(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'])('negotiates protocol revision %s', async (version) => {
    const { message } = await rawInitialize(server, version);
    expect((message.result as { protocolVersion: string }).protocolVersion).toBe(version);
  });

  it('answers an unknown revision with the latest and rejects an unsupported MCP-Protocol-Version header', async () => {
    const { message, sessionId } = await rawInitialize(server, '1999-01-01');
    expect((message.result as { protocolVersion: string }).protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    const response = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-session-id': sessionId!, 'mcp-protocol-version': '1999-01-01' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(response.status).toBe(400);
  });

  it('sends named heartbeat events on the GET stream', async () => {
    const { sessionId } = await rawInitialize(server);
    const controller = new AbortController();
    const response = await fetch(server.mcpUrl, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId! }, signal: controller.signal });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let text = '';
    for (let i = 0; i < 50 && !text.includes('event: heartbeat'); i++) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString('utf8');
    }
    controller.abort();
    const event = text.split('\n\n').find((block) => block.startsWith('event: heartbeat'))!;
    const data = JSON.parse(event.split('\n').find((line) => line.startsWith('data: '))!.slice(6));
    expect(data.type).toBe('heartbeat');
    expect(new Date(data.timestamp).toISOString()).toBe(data.timestamp);
  });

  it('serves the legacy HTTP+SSE transport to the SDK client', async () => {
    const { client } = await connectSse(server.baseUrl);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('echo');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'over sse' } }))).toBe('over sse');
    await client.close();
  });

  it('accepts POST /message/{sessionId} as well as ?sessionId=, and 404 for an unknown id', async () => {
    const controller = new AbortController();
    const stream = await fetch(`${server.baseUrl}/sse`, { signal: controller.signal });
    const reader = stream.body!.getReader();
    let text = '';
    while (!text.includes('\n\n')) text += Buffer.from((await reader.read()).value!).toString('utf8');
    const endpoint = /data: (.*)/.exec(text)![1];
    const id = new URL(endpoint, server.baseUrl).searchParams.get('sessionId');
    const posted = await fetch(`${server.baseUrl}/message/${id}`, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT('2024-11-05')) });
    expect(posted.status).toBe(202);
    const unknown = await fetch(`${server.baseUrl}/message/nope`, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT()) });
    expect(unknown.status).toBe(404);
    // Bodies the SDK's transport would answer in plain text get JSON-RPC errors.
    const plain = await fetch(`${server.baseUrl}/message/${id}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(INIT()) });
    expect([plain.status, (await plain.json()).error.code]).toEqual([415, -32000]);
    const untyped = await fetch(`${server.baseUrl}/message/${id}`, { method: 'POST', body: new Uint8Array(Buffer.from(JSON.stringify(INIT()))) });
    expect([untyped.status, (await untyped.json()).error.code]).toEqual([415, -32000]);
    const batch = await fetch(`${server.baseUrl}/message/${id}`, { method: 'POST', headers: HEADERS, body: JSON.stringify([INIT(), INIT()]) });
    expect([batch.status, (await batch.json()).error.code]).toEqual([400, -32600]);
    controller.abort();
  });

  it('answers malformed bodies with JSON-RPC errors', async () => {
    const parse = await fetch(server.mcpUrl, { method: 'POST', headers: HEADERS, body: '{"jsonrpc": "2.0", "id": 1, "method": ' });
    expect(parse.status).toBe(400);
    expect(((await parse.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const put = await fetch(server.mcpUrl, { method: 'PUT', headers: HEADERS, body: '{}' });
    expect(put.status).toBe(405);
    // Other known paths name the methods they take; unknown ones and OPTIONS stay 404.
    for (const [method, where, allow] of [['POST', '/health', 'GET, HEAD'], ['DELETE', '/metrics', 'GET, HEAD'], ['POST', '/', 'GET, HEAD'], ['PUT', '/sse', 'GET, HEAD'], ['GET', '/message/abc', 'POST']]) {
      const wrong = await fetch(`${server.baseUrl}${where}`, { method, headers: HEADERS, body: method === 'GET' ? undefined : '{}' });
      expect([method, where, wrong.status, wrong.headers.get('allow')]).toEqual([method, where, 405, allow]);
      expect(((await wrong.json()) as { error: string }).error).toBe(`method ${method} not allowed on ${where}`);
    }
    for (const [method, where] of [['POST', '/nowhere'], ['OPTIONS', '/health']]) expect([method, where, (await fetch(`${server.baseUrl}${where}`, { method })).status]).toEqual([method, where, 404]);
    // A malformed initialize is said to be one, not a request without a session.
    const badInit = await fetch(server.mcpUrl, { method: 'POST', headers: HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 5 } }) });
    const answer = (await badInit.json()) as { error: { code: number; message: string } };
    expect([badInit.status, answer.error.code]).toEqual([400, -32600]);
    expect(answer.error.message).toContain('initialize needs params with protocolVersion');
  });

  it('answers quick calls as JSON, a batch as an array, a long call as an SSE stream, and refuses an id still in flight', async () => {
    const { sessionId } = await rawInitialize(server);
    const post = (body: unknown) =>
      fetch(server.mcpUrl, { method: 'POST', headers: { ...HEADERS, 'mcp-session-id': sessionId!, 'mcp-protocol-version': '2025-03-26' }, body: JSON.stringify(body) });
    const call = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const slow = post(call(7, 'sleep', { ms: 1500 }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const again = await post(call(7, 'echo', { text: 'x' }));
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: { message: string } }).error.message).toMatch(/request id 7 is already in use/);
    // Answered at once: plain JSON (a batch as an array).
    const batch = await post([call(8, 'echo', { text: 'a' }), call(9, 'echo', { text: 'b' })]);
    expect(batch.status).toBe(200);
    expect(batch.headers.get('content-type')).toBe('application/json');
    const answers = (await batch.json()) as Array<{ id: number; result: { content: Array<{ text: string }> } }>;
    expect(answers.map((e) => [e.id, e.result.content[0].text]).sort()).toEqual([[8, 'a'], [9, 'b']]);
    // Longer than the heartbeat interval: an SSE stream with heartbeats, then the answer.
    const first = await slow;
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/event-stream');
    const text = await first.text();
    expect(text).toMatch(/^event: heartbeat\n/m);
    expect(text).toMatch(/^event: message\ndata: .*"id":7/m);
  });

  it('describes itself on GET / and reports health on GET /health', async () => {
    const info = (await (await fetch(`${server.baseUrl}/`)).json()) as { name: string; endpoints: Record<string, string> };
    expect(info.name).toBe('mcpvisor');
    expect(info.endpoints).toMatchObject({ streamableHttp: '/mcp', sse: '/sse' });
    const health = await fetch(`${server.baseUrl}/health`);
    expect(health.status).toBe(200);
    const body = (await health.json()) as { status: string; pools: Array<{ name: string; state: string; alive: number }> };
    expect(body.status).toBe('ok');
    expect(body.pools.map((pool) => [pool.name, pool.state])).toEqual([
      ['test', 'ready'],
      ['threads', 'ready'],
    ]);
  });
});

describe('session expiry', () => {
  it('closes idle sessions after the configured timeout', async () => {
    const server = await startHttp('mcpvisor', ['--debug', '--config', writeConfig(fixtureConfig({ thread: false, root: { http: { sessionIdleTimeoutMs: 400 } } }))]);
    const { sessionId } = await rawInitialize(server);
    const notify = () =>
      fetch(server.mcpUrl, {
        method: 'POST',
        headers: { ...HEADERS, 'mcp-session-id': sessionId! },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      }).then((response) => response.status);
    expect(await notify()).toBe(202);
    await server.server.waitForLog((line) => line.msg === 'closing idle session' && line.sessionId === sessionId);
    expect(await notify()).toBe(404);
    await server.stop();
  });

  it('closes sessions whose clients keep their streams open but send nothing, on both HTTP transports', async () => {
    // A client that drops its sessions without DELETE but lives on (a gateway opening one per
    // conversation): the SDK client holds each session's GET stream, the legacy one its SSE stream.
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, root: { http: { sessionIdleTimeoutMs: 3_600_000, connectedSessionIdleTimeoutMs: 2_500 } } }))]);
    const sessions = async () => ((await (await fetch(`${server.baseUrl}/health`)).json()) as { sessions: number }).sessions;
    const { client: streamable, transport } = await connectHttp(server.mcpUrl);
    const { client: legacy } = await connectSse(server.baseUrl);
    try {
      expect(textOf(await streamable.callTool({ name: 'echo', arguments: { text: 'used once' } }))).toBe('used once');
      expect(textOf(await legacy.callTool({ name: 'echo', arguments: { text: 'used once' } }))).toBe('used once');
      expect(await sessions()).toBe(2);
      expect(await eventually(async () => (await sessions()) === 0)).toBe(true);
      // Ended as a deleted session is: the client is told to initialize again.
      const again = await fetch(server.mcpUrl, {
        method: 'POST',
        headers: { ...HEADERS, 'mcp-session-id': transport.sessionId! },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
      expect(again.status).toBe(404);
    } finally {
      await Promise.all([streamable.close(), legacy.close()]);
      await server.stop();
    }
  });

  it('keeps a session with an open stream while its calls run, however long', async () => {
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, root: { http: { connectedSessionIdleTimeoutMs: 300 } } }))]);
    try {
      const { client } = await connectHttp(server.mcpUrl);
      // Five timeouts long: sweeps pass while it runs, and the answer still comes on the session
      // (a session closed under it answers -32000, "closed before this request was answered").
      const result = await client.callTool({ name: 'sleep', arguments: { ms: 1500 } });
      expect(textOf(result)).toBe('slept 1500 ms');
      await client.close();
    } finally {
      await server.stop();
    }
  });
});
