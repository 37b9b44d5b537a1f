import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectStdio, startHttp, type HttpServer } from '../../helpers/mcp';
import { bin, eventually } from '../../helpers/processes';

/**
 * The protocol rules the SDK's Server leaves to us: batches by negotiated revision, one
 * initialize per session, tools/list cursors, ids a JSON parser cannot keep exact, and what a
 * closed stdin does to calls still running.
 */
const INIT = (protocolVersion: string, id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

type Child = ChildProcessByStdio<Writable, Readable, null>;
type Answer = { id: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } };

/** A raw stdio server: `send` writes lines as given, `lines` are its stdout lines parsed. */
function stdioServer(root: Record<string, unknown> = {}): { child: Child; send(line: string): void; lines(): unknown[] } {
  const child = spawn(process.execPath, [bin('mcpvisor'), '--config', writeConfig(fixtureConfig({ thread: false, root }))], { stdio: ['pipe', 'pipe', 'ignore'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
  return {
    child,
    send: (line) => void child.stdin.write(`${line}\n`),
    lines: () => stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as unknown),
  };
}

/** Opens a legacy SSE stream and reads the POST endpoint it announces; abort `controller` to close it. */
async function legacyEndpoint(baseUrl: string): Promise<{ endpoint: URL; controller: AbortController }> {
  const controller = new AbortController();
  const stream = await fetch(`${baseUrl}/sse`, { signal: controller.signal });
  const reader = stream.body!.getReader();
  let text = '';
  while (!text.includes('\n\n')) text += Buffer.from((await reader.read()).value!).toString('utf8');
  return { endpoint: new URL(/data: (.*)/.exec(text)![1], baseUrl), controller };
}


async function finish(child: Child): Promise<number | null> {
  child.stdin.end();
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

describe('protocol rules over stdio', () => {
  it('answers a batch under 2025-03-26 with one array of its answers, invalid members included', async () => {
    const server = stdioServer();
    server.send(JSON.stringify(INIT('2025-03-26')));
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    server.send(
      JSON.stringify([
        { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'echo', arguments: { text: 'first' } } },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 'b', method: 'ping' },
        { jsonrpc: '1.0', id: 'c', method: 'ping' },
      ]),
    );
    expect(await eventually(() => server.lines().some(Array.isArray))).toBe(true);
    await finish(server.child);
    const batch = server.lines().find(Array.isArray) as Answer[];
    expect(batch.map((answer) => answer.id).sort()).toEqual(['a', 'b', 'c']);
    expect(JSON.stringify(batch.find((answer) => answer.id === 'a')!.result)).toContain('first');
    expect(batch.find((answer) => answer.id === 'b')!.result).toEqual({});
    expect(batch.find((answer) => answer.id === 'c')!.error!.code).toBe(-32600);
  });

  it('refuses a batch under 2025-06-18, a second initialize, a tools/list cursor and an id it cannot keep exact', async () => {
    const server = stdioServer();
    server.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}');
    server.send(JSON.stringify(INIT('2025-06-18', 2)));
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    server.send(JSON.stringify([{ jsonrpc: '2.0', id: 3, method: 'ping' }]));
    server.send(JSON.stringify(INIT('2024-11-05', 4)));
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list', params: { cursor: 'not-ours' } }));
    server.send('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}');
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'ping' }));
    expect(await eventually(() => server.lines().some((line) => (line as Answer).id === 6))).toBe(true);
    await finish(server.child);
    const answers = server.lines() as Answer[];
    const byId = (id: unknown) => answers.find((answer) => answer.id === id)!;
    // A malformed initialize is bad params; a good one after it is the session's initialize.
    expect(byId(1).error).toMatchObject({ code: -32602, message: expect.stringMatching(/^Invalid params: /) });
    expect(byId(2).result).toMatchObject({ protocolVersion: '2025-06-18' });
    const nulls = answers.filter((answer) => answer.id === null);
    expect(nulls.map((answer) => answer.error!.message)).toEqual([
      expect.stringContaining('batches are not accepted under protocol revision 2025-06-18'),
      expect.stringContaining('a numeric id must be an integer within'),
    ]);
    expect(byId(4).error).toEqual({ code: -32600, message: 'Invalid Request: the session is already initialized' });
    expect(byId(5).error).toMatchObject({ code: -32602, message: expect.stringContaining('unknown cursor') });
    expect(byId(6).result).toEqual({});
    // The rounded id was never answered as if it were the request's.
    expect(answers.some((answer) => answer.id === 9007199254740992)).toBe(false);
  });

  it('refuses a call whose id a running call of the session holds, so the per-session limit counts it', async () => {
    const server = stdioServer({ http: { maxConcurrentCallsPerSession: 2 } });
    server.send(JSON.stringify(INIT('2025-11-25')));
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    const sleep = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 300 } } });
    server.send([sleep(7), sleep(7), sleep(7)].join('\n'));
    // The first is answered last (it sleeps): by then the others are.
    expect(await eventually(() => (server.lines() as Answer[]).some((line) => line.id === 7 && line.result))).toBe(true);
    await finish(server.child);
    const answers = (server.lines() as Answer[]).filter((line) => line.id === 7);
    expect(answers.map((answer) => answer.error ?? answer.result)).toEqual([
      { code: -32600, message: 'Invalid Request: request id 7 is already in use in this session' },
      { code: -32600, message: 'Invalid Request: request id 7 is already in use in this session' },
      { content: [{ type: 'text', text: 'slept 300 ms' }] },
    ]);
  });

  it('takes `_meta: null` as no _meta, and answers an unusable _meta or positional params with -32602 under the request id, naming them', async () => {
    const server = stdioServer();
    server.send(JSON.stringify(INIT('2025-11-25')));
    const call = (id: number, meta: unknown) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: `call ${id}` }, _meta: meta } });
    server.send(call(2, null));
    server.send(call(3, { progressToken: 1.5 }));
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping', params: { _meta: 'x' } }));
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list', params: [] }));
    expect(await eventually(() => [2, 3, 4, 5].every((id) => (server.lines() as Answer[]).some((line) => line.id === id)))).toBe(true);
    await finish(server.child);
    const answers = server.lines() as Answer[];
    const byId = (id: unknown) => answers.find((answer) => answer.id === id)!;
    expect(JSON.stringify(byId(2).result)).toContain('call 2');
    // All three were -32600 "not a JSON-RPC 2.0 message".
    expect(byId(3).error).toEqual({ code: -32602, message: 'Invalid params: _meta.progressToken: must be a string or an integer' });
    expect(byId(4).error).toEqual({ code: -32602, message: 'Invalid params: _meta: Invalid input: expected object, received string' });
    expect(byId(5).error).toEqual({ code: -32602, message: 'Invalid params: params must be an object (MCP has no positional params)' });
  });

  it('answers calls piped in with stdin closed behind them, as `printf … | mcpvisor` sends them (they answered SHUTTING_DOWN)', async () => {
    const server = stdioServer();
    server.child.stdin.end(
      [
        JSON.stringify(INIT('2025-11-25')),
        JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'piped' } } }),
        JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 300 } } }),
        '',
      ].join('\n'),
    );
    expect(await new Promise((resolve) => server.child.on('exit', resolve))).toBe(0);
    const answers = server.lines() as Answer[];
    expect(answers.find((answer) => answer.id === 2)!.result).toMatchObject({ content: [{ type: 'text', text: 'piped' }] });
    expect(answers.find((answer) => answer.id === 3)!.result).toEqual({ content: [{ type: 'text', text: 'slept 300 ms' }] });
  });

  it('cancels calls still running when stdin closes, instead of waiting out the shutdown grace', async () => {
    const server = stdioServer({ http: { shutdownGraceMs: 60_000 } });
    server.send(JSON.stringify(INIT('2025-11-25')));
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 20_000 } } }));
    expect(await eventually(() => server.lines().length >= 1)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await finish(server.child)).toBe(0);
    // With the grace, the sleep would have finished and been answered as a success.
    const answer = (server.lines() as Answer[]).find((line) => line.id === 2)!;
    expect(JSON.stringify(answer.result)).toContain('SHUTTING_DOWN');
  });
});

describe('results a custom toolset returns that MCP clients refuse', () => {
  it('are answered as INTERNAL error results naming the problem, not left to the SDK client to time out on or throw', async () => {
    const config = writeConfig(fixtureConfig({ thread: false, process: { config: { rawResults: true } } }));
    const { client, close } = await connectStdio('mcpvisor', ['--config', config]);
    // Short: a string result was never answered as far as the SDK client could tell.
    const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }, undefined, { timeout: 5000 }) as Promise<{ content: Array<{ text: string }>; isError?: boolean; structuredContent?: unknown }>;
    const refused = async (name: string, args: Record<string, unknown>) => {
      const result = await call(name, args);
      expect(result.isError).toBe(true);
      return result.content[0].text;
    };
    try {
      const prefix = (tool: string) => `INTERNAL (tool ${tool}): the tool returned a result MCP clients refuse: `;
      expect(await refused('raw-result', { result: 'just text' })).toBe(`${prefix('raw-result')}a result must be an object with 'content', not "just text"`);
      // It was -32603 "Cannot read properties of null (reading 'isError')".
      expect(await refused('raw-result', { result: null })).toBe(`${prefix('raw-result')}a result must be an object with 'content', not null`);
      expect(await refused('raw-result', { result: { content: [{ type: 'html', html: '<b>' }] } })).toBe(`${prefix('raw-result')}content[0]: 'type' must be one of text, image, audio, resource_link, resource (it is "html")`);
      // The SDK client threw on these two, checking the tool's outputSchema.
      expect(await refused('typed-result', { structured: { n: 'one' } })).toBe(`${prefix('typed-result')}structuredContent.n does not match the tool's outputSchema: must be number`);
      expect(await refused('typed-result', {})).toBe(`${prefix('typed-result')}the tool declares an outputSchema but returned no structuredContent`);
      expect((await call('typed-result', { structured: { n: 1 } })).structuredContent).toEqual({ n: 1 });
    } finally {
      await close();
    }
  });
});

describe('protocol rules over HTTP', () => {
  let server: HttpServer;
  beforeAll(async () => {
    server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false }))]);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('refuses batches in a 2025-06-18 session and an empty batch in any; valid JSON that is not JSON-RPC is -32600', async () => {
    const init = await fetch(server.mcpUrl, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT('2025-06-18')) });
    const sessionId = init.headers.get('mcp-session-id')!;
    await init.text();
    const post = (body: unknown) => fetch(server.mcpUrl, { method: 'POST', headers: { ...HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' }, body: JSON.stringify(body) });
    const batch = await post([{ jsonrpc: '2.0', id: 2, method: 'ping' }]);
    const batchAnswer = (await batch.json()) as Answer;
    expect([batch.status, batchAnswer.error!.code]).toEqual([400, -32600]);
    expect(batchAnswer.error!.message).toContain('under protocol revision 2025-06-18');
    const empty = await post([]);
    expect([empty.status, ((await empty.json()) as Answer).error!.message]).toEqual([400, 'Invalid Request: an empty batch']);
    const single = await post({ jsonrpc: '2.0', id: 3, method: 'ping' });
    expect(((await single.json()) as Answer).result).toEqual({});
    // Valid JSON that is no JSON-RPC message: Invalid Request, not a parse error.
    const notRpc = await post({ jsonrpc: '1.0', id: 4, method: 'ping' });
    expect([notRpc.status, ((await notRpc.json()) as Answer).error!.code]).toEqual([400, -32600]);
  });

  it('answers an unusable _meta with -32602 under the request id on both HTTP transports, and takes `_meta: null` as none', async () => {
    const init = await fetch(server.mcpUrl, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT('2025-11-25')) });
    const sessionId = init.headers.get('mcp-session-id')!;
    await init.text();
    const post = (body: unknown) => fetch(server.mcpUrl, { method: 'POST', headers: { ...HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify(body) });
    const call = (id: number, meta: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: `call ${id}` }, _meta: meta } });
    const refused = await post(call(2, { progressToken: { nested: true } }));
    expect([refused.status, await refused.json()]).toEqual([400, { jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'Invalid params: _meta.progressToken: must be a string or an integer' } }]);
    const taken = await post(call(3, null));
    expect([taken.status, JSON.stringify(await taken.json())]).toEqual([200, expect.stringContaining('call 3')]);

    const { endpoint, controller } = await legacyEndpoint(server.baseUrl);
    // It said "a request needs a string or integer id", of a request whose id is 4.
    const legacy = await fetch(endpoint, { method: 'POST', headers: HEADERS, body: JSON.stringify(call(4, 'not an object')) });
    expect([legacy.status, await legacy.json()]).toEqual([400, { jsonrpc: '2.0', id: 4, error: { code: -32602, message: 'Invalid params: _meta: Invalid input: expected object, received string' } }]);
    controller.abort();
  });

  it('lets a second GET stream of a session take the place of the first, which ends (a client reconnecting over a half-open connection got 409)', async () => {
    const init = await fetch(server.mcpUrl, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT('2025-11-25')) });
    const sessionId = init.headers.get('mcp-session-id')!;
    await init.text();
    const open = () => fetch(server.mcpUrl, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' } });
    const first = await open();
    expect(first.status).toBe(200);
    const second = await open();
    expect(second.status).toBe(200);
    // The first ends; the second is the session's stream: ending the session ends it.
    expect(await first.text()).toBe('');
    const ended = second.text();
    const deleted = await fetch(server.mcpUrl, { method: 'DELETE', headers: { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' } });
    expect(deleted.status).toBe(200);
    expect(await ended).toBe('');
  });

  it('answers a legacy SSE message with a null id as JSON-RPC, not plain text', async () => {
    const { endpoint, controller } = await legacyEndpoint(server.baseUrl);
    const posted = await fetch(endpoint, { method: 'POST', headers: HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: null, method: 'ping' }) });
    expect(posted.status).toBe(400);
    expect(((await posted.json()) as Answer).error).toMatchObject({ code: -32600, message: expect.stringContaining('not a JSON-RPC 2.0 message') });
    controller.abort();
  });
});

describe('clients whose Accept admits one answer type, or any (406 without both)', () => {
  let server: HttpServer;
  beforeAll(async () => {
    // Heartbeats and progress every 100 ms: either would turn an answer into a stream.
    const root = { http: { heartbeatIntervalMs: 100 }, pools: { cancelGraceMs: 300, progressIntervalMs: 100, restart: { maxRestarts: 3, windowMs: 60000, backoffBaseMs: 50, backoffMaxMs: 2000 } } };
    server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, root }))]);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers JSON only with the answer alone, SSE only with a stream, and any type or none as usual', async () => {
    let session: string | undefined;
    const post = (accept: string | undefined, body: unknown) =>
      fetch(server.mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(accept === undefined ? {} : { accept }), ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}) },
        body: JSON.stringify(body),
      });
    const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });
    // JSON only (Claude Code's HTTP client): a call that outlasts the heartbeat and has progress.
    const init = await post('application/json', INIT('2025-11-25'));
    expect([init.status, init.headers.get('content-type')]).toEqual([200, 'application/json']);
    session = init.headers.get('mcp-session-id')!;
    await init.text();
    const call = await post('application/json', { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 400 }, _meta: { progressToken: 'p' } } });
    expect([call.status, call.headers.get('content-type')]).toEqual([200, 'application/json']);
    expect(await call.json()).toEqual({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'slept 400 ms' }] } });
    // SSE only (Anthropic's remote-MCP proxy): even a ping is answered on a stream.
    const sse = await post('text/event-stream', ping(3));
    expect([sse.status, sse.headers.get('content-type')]).toEqual([200, 'text/event-stream']);
    // Lines with data: the first event, an id with empty data, primes a 2025-11-25 client to resume.
    const events = (await sse.text()).split('\n').filter((line) => line.startsWith('data: ') && line.length > 6).map((line) => JSON.parse(line.slice(6)) as Answer);
    expect(events.filter((event) => event.id === 3)).toEqual([{ jsonrpc: '2.0', id: 3, result: {} }]);
    for (const [id, accept] of [[4, '*/*'], [5, undefined], [6, 'application/*;q=0.9, text/html']] as const) {
      const answer = await post(accept, ping(id));
      expect([accept, answer.status, ((await answer.json()) as Answer).result]).toEqual([accept, 200, {}]);
    }
    const refused = await post('text/html, application/json;q=0', ping(7));
    expect(refused.status).toBe(406);
    const stream = await fetch(server.mcpUrl, { headers: { accept: '*/*', 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } });
    expect([stream.status, stream.headers.get('content-type')]).toEqual([200, 'text/event-stream']);
    await stream.body!.cancel();
  });
  it('keeps the other answers of a JSON-only batch whose last open call is cancelled', async () => {
    const headers = (session?: string): Record<string, string> => ({ 'content-type': 'application/json', accept: 'application/json', ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26' } : {}) });
    const init = await fetch(server.mcpUrl, { method: 'POST', headers: headers(), body: JSON.stringify(INIT('2025-03-26')) });
    const session = init.headers.get('mcp-session-id')!;
    await init.text();
    const batch = fetch(server.mcpUrl, {
      method: 'POST',
      headers: headers(session),
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 'quick', method: 'ping' },
        { jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'sleep', arguments: { ms: 5000 } } },
      ]),
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const cancel = await fetch(server.mcpUrl, { method: 'POST', headers: headers(session), body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow' } }) });
    expect(cancel.status).toBe(202);
    const answer = await batch;
    // It was a bare 202: the ping's answer, held for the batch, was lost.
    expect([answer.status, answer.headers.get('content-type')]).toEqual([200, 'application/json']);
    expect(await answer.json()).toEqual([{ jsonrpc: '2.0', id: 'quick', result: {} }]);
  });
});
