import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectSse, startHttp, textOf, untilCallRunning, type HttpServer } from '../../helpers/mcp';
import { eventually, tempCacheEnv } from '../../helpers/processes';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy';
import { tempDir } from '../../helpers/temp';
import { flakyApi } from '../../helpers/flaky-api';

// A legacy HTTP+SSE session (GET /sse, POST /message/{sessionId}) whose GET /sse stream is cut
// (a proxy's idle timeout, a network change), through a TCP proxy on 127.0.0.1 the test cuts.

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean };

const TOKEN = 'legacy-resume-token';

/** Legacy resume is opt-in (`http.resumability.legacySse`); `resumability` here adds to it. */
const config = ({ resumability, ...http }: Record<string, unknown> = {}) =>
  writeConfig(
    fixtureConfig({ thread: false, process: { callTimeoutMs: 30_000 }, root: { pools: { cancelGraceMs: 300, progressIntervalMs: 0 }, http: { ...http, resumability: { legacySse: true, ...(resumability as object) } } } }),
    'legacy-resume.json',
  );

const sessions = async (server: HttpServer) => Number(/^mcpvisor_sessions (\d+)/m.exec(await (await fetch(`${server.baseUrl}/metrics`)).text())?.[1]);
const inFlight = async (server: HttpServer) => ((await (await fetch(`${server.baseUrl}/health`)).json()) as { inFlightCalls: number }).inFlightCalls;

/**
 * A fetch for SSEClientTransport's `eventSourceInit` that sends `Last-Event-ID` on a reconnect.
 * The SDK's transport (1.32) hands its EventSource a fetch that replaces the request's headers
 * with its own, dropping the `Last-Event-ID` the EventSource sets; this one remembers the id of
 * each event read whole, as an EventSource does, and sends it again.
 */
function lastEventIdFetch(): typeof fetch {
  let lastEventId: string | undefined;
  return async (url, init) => {
    const headers = new Headers(init?.headers);
    if (lastEventId !== undefined) headers.set('Last-Event-ID', lastEventId);
    const response = await fetch(url, { ...init, headers });
    if (!response.body) return response;
    const decoder = new TextDecoder();
    let pending = '';
    let id: string | undefined;
    const watch = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        pending += decoder.decode(chunk, { stream: true });
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const line of lines) {
          if (line.startsWith('id:')) id = line.slice(3).trim();
          else if (line === '' && id !== undefined) [lastEventId, id] = [id, undefined];
        }
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(watch), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** The SDK client over legacy SSE at `origin`, its EventSource resuming with Last-Event-ID. */
async function connectResuming(origin: string, token?: string): Promise<{ client: Client; transport: SSEClientTransport }> {
  const auth = token === undefined ? undefined : { Authorization: `Bearer ${token}` };
  const transport = new SSEClientTransport(new URL('/sse', origin), { eventSourceInit: { fetch: lastEventIdFetch() }, requestInit: { headers: auth } });
  const client = new Client({ name: 'mcpvisor-legacy-resume-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** The session the SDK transport posts to now. */
const endpointOf = (transport: SSEClientTransport) => (transport as unknown as { _endpoint?: URL })._endpoint?.searchParams.get('sessionId');

interface RawEvent {
  id?: string;
  event: string;
  data: string;
}

/** A raw GET /sse: its status, and its events as they come. */
async function rawSse(url: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const events: RawEvent[] = [];
  let ended = false;
  void (async () => {
    const decoder = new TextDecoder();
    let pending = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        pending += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = pending.indexOf('\n\n')) >= 0) {
          const block = pending.slice(0, end);
          pending = pending.slice(end + 2);
          const event: RawEvent = { event: 'message', data: '' };
          for (const line of block.split('\n')) {
            const [field, ...rest] = line.split(': ');
            if (field === 'id') event.id = rest.join(': ');
            else if (field === 'event') event.event = rest.join(': ');
            else if (field === 'data') event.data = rest.join(': ');
          }
          events.push(event);
        }
      }
    } catch {
      // aborted
    }
    ended = true;
  })();
  return {
    status: response.status,
    events,
    get ended() {
      return ended;
    },
    async next(predicate: (event: RawEvent) => boolean): Promise<RawEvent> {
      if (!(await eventually(() => events.some(predicate)))) throw new Error(`no such event within 10 s; got ${JSON.stringify(events)}`);
      return events.find(predicate)!;
    },
    close: () => controller.abort(),
  };
}

const sessionIdOf = (endpoint: RawEvent) => new URL(endpoint.data, 'http://x').searchParams.get('sessionId')!;

async function post(origin: string, sessionId: string, message: Record<string, unknown>, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(`${origin}/message?sessionId=${sessionId}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(message) });
  await response.arrayBuffer();
  return response.status;
}

/** Opens a raw legacy session and initialises it; returns its stream and id. */
async function rawSession(origin: string, headers: Record<string, string> = {}) {
  const stream = await rawSse(`${origin}/sse`, headers);
  const sessionId = sessionIdOf(await stream.next((event) => event.event === 'endpoint'));
  const init = { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'raw', version: '1' } };
  expect(await post(origin, sessionId, { jsonrpc: '2.0', id: 0, method: 'initialize', params: init }, headers)).toBe(202);
  await stream.next((event) => event.data.includes('"id":0'));
  expect(await post(origin, sessionId, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).toBe(202);
  return { stream, sessionId };
}

describe('a legacy SSE session whose GET /sse stream is cut', () => {
  let server: HttpServer;
  let proxy: TcpProxy;
  beforeAll(async () => {
    server = await startHttp('mcpvisor', ['--config', config({ resumability: { maxBytes: 4096 } })]);
    proxy = await startTcpProxy(server.baseUrl);
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
  });

  /**
   * Starts a `sleep` call, then cuts the stream and keeps the network down until the call has
   * ended (its answer can only come from what was kept), runs `whileCut`, then lets the client
   * reconnect: what the call got.
   */
  async function callAcrossCut(client: Client, args: Record<string, unknown>, whileCut: () => Promise<void> = async () => undefined): Promise<{ value?: Result; error?: Error }> {
    const answered = client.callTool({ name: 'sleep', arguments: args }, undefined, { timeout: 8000 }).then(
      (value) => ({ value: value as Result }),
      (error: Error) => ({ error }),
    );
    await untilCallRunning(server);
    proxy.hold();
    proxy.sever();
    expect(await eventually(async () => (await inFlight(server)) === 0)).toBe(true);
    await whileCut();
    proxy.release();
    return answered;
  }

  it('gets the answer of a call that ended while it was cut once the SDK client reconnects, and goes on in the same session', async () => {
    const { client, transport } = await connectResuming(proxy.origin);
    try {
      const before = endpointOf(transport);
      // The session is still there while its stream is down.
      const { value, error } = await callAcrossCut(client, { ms: 1000 }, async () => expect(await sessions(server)).toBe(1));
      expect(error).toBeUndefined();
      expect(textOf(value)).toBe('slept 1000 ms');
      expect(endpointOf(transport)).toBe(before);
      // A later request, in the same (initialised) session: no second session was opened.
      expect(textOf(await client.callTool({ name: 'sleep', arguments: { ms: 10 } }, undefined, { timeout: 8000 }))).toBe('slept 10 ms');
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('sleep');
      expect(await sessions(server)).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('gets an error naming the bound, not a wait for its timeout, for an answer too large to be kept while it was cut', async () => {
    const { client, transport } = await connectResuming(proxy.origin);
    try {
      const before = endpointOf(transport);
      const { value, error } = await callAcrossCut(client, { ms: 1000, pad: 10_000 });
      expect(value).toBeUndefined();
      expect(error?.message).toMatch(/http\.resumability\.maxBytes \(4096\)/);
      expect(endpointOf(transport)).toBe(before);
      expect(textOf(await client.callTool({ name: 'sleep', arguments: { ms: 10 } }, undefined, { timeout: 8000 }))).toBe('slept 10 ms');
    } finally {
      await client.close();
    }
  });

  it('is not attached by a Last-Event-ID it did not give: made up, of its id cut short, or past its last event; those get new sessions', async () => {
    const { stream, sessionId } = await rawSession(server.baseUrl);
    let resumed: Awaited<ReturnType<typeof rawSse>> | undefined;
    try {
      for (const lastEventId of ['made-up.1.0', `${sessionId.slice(0, 8)}.1.0`, `${sessionId}.1.999`, `${sessionId}.2.0`, sessionId]) {
        const other = await rawSse(`${server.baseUrl}/sse`, { 'Last-Event-ID': lastEventId });
        const endpoint = await other.next((event) => event.event === 'endpoint');
        expect(sessionIdOf(endpoint)).not.toBe(sessionId);
        other.close();
      }
      // The session's own stream was not taken: its answers still come there.
      expect(await post(server.baseUrl, sessionId, { jsonrpc: '2.0', id: 1, method: 'ping' })).toBe(202);
      const pong = await stream.next((event) => event.data.includes('"id":1'));
      expect(stream.ended).toBe(false);
      // Its own last event id, once its stream is cut, resumes it: what follows, then live.
      stream.close();
      expect(await post(server.baseUrl, sessionId, { jsonrpc: '2.0', id: 2, method: 'ping' })).toBe(202);
      resumed = await rawSse(`${server.baseUrl}/sse`, { 'Last-Event-ID': pong.id! });
      expect(sessionIdOf(await resumed.next((event) => event.event === 'endpoint'))).toBe(sessionId);
      await resumed.next((event) => event.data.includes('"id":2'));
      expect(await post(server.baseUrl, sessionId, { jsonrpc: '2.0', id: 3, method: 'ping' })).toBe(202);
      await resumed.next((event) => event.data.includes('"id":3'));
      expect(resumed.events.filter((event) => event.event === 'message').map((event) => (JSON.parse(event.data) as { id: number }).id)).toEqual([2, 3]);
    } finally {
      stream.close();
      resumed?.close();
    }
  });

  it('is taken by the later of two GETs resuming it at once, which gets the answers', async () => {
    const { stream, sessionId } = await rawSession(server.baseUrl);
    const endpoint = stream.events.find((event) => event.event === 'endpoint')!;
    expect(endpoint.id).toBe(`${sessionId}.1.0`);
    const lastId = stream.events.find((event) => event.data.includes('"id":0'))!.id!;
    stream.close();
    const first = await rawSse(`${server.baseUrl}/sse`, { 'Last-Event-ID': lastId });
    expect(sessionIdOf(await first.next((event) => event.event === 'endpoint'))).toBe(sessionId);
    const second = await rawSse(`${server.baseUrl}/sse`, { 'Last-Event-ID': lastId });
    try {
      expect(sessionIdOf(await second.next((event) => event.event === 'endpoint'))).toBe(sessionId);
      expect(await eventually(() => first.ended)).toBe(true);
      expect(await post(server.baseUrl, sessionId, { jsonrpc: '2.0', id: 2, method: 'ping' })).toBe(202);
      const answer = await second.next((event) => event.data.includes('"id":2'));
      expect(answer.id).toMatch(new RegExp(`^${sessionId}\\.1\\.\\d+$`));
      expect(first.events.some((event) => event.data.includes('"id":2'))).toBe(false);
    } finally {
      first.close();
      second.close();
    }
  });
});

describe('a legacy SSE session not resumed within http.resumability.resumeWindowMs', () => {
  let server: HttpServer;
  beforeAll(async () => {
    server = await startHttp('mcpvisor', ['--config', config({ authToken: TOKEN, resumability: { resumeWindowMs: 2000 } })]);
  });
  afterAll(() => server?.stop());

  it('ends with its call cancelled, and a resume after the window gets a new session', async () => {
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const marker = path.join(tempDir('legacy-window-'), 'cancelled');
    const { stream: first, sessionId } = await rawSession(server.baseUrl, auth);
    const lastId = first.events.at(-1)!.id!;
    expect(await post(server.baseUrl, sessionId, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 20_000, marker } } }, auth)).toBe(202);
    await untilCallRunning(server);
    first.close();
    // Without the token, a valid Last-Event-ID opens nothing; with it, within the window, the session goes on.
    expect((await rawSse(`${server.baseUrl}/sse`, { 'Last-Event-ID': lastId })).status).toBe(401);
    const stream = await rawSse(`${server.baseUrl}/sse`, { 'Last-Event-ID': lastId, ...auth });
    expect(sessionIdOf(await stream.next((event) => event.event === 'endpoint'))).toBe(sessionId);
    expect(existsSync(marker)).toBe(false);
    // Cut again, and not resumed: the window ends the session.
    stream.close();
    expect(await eventually(() => existsSync(marker))).toBe(true);
    expect(await eventually(async () => (await sessions(server)) === 0)).toBe(true);
    const late = await rawSse(`${server.baseUrl}/sse`, { 'Last-Event-ID': lastId, ...auth });
    try {
      expect(sessionIdOf(await late.next((event) => event.event === 'endpoint'))).not.toBe(sessionId);
      expect(await post(server.baseUrl, sessionId, { jsonrpc: '2.0', id: 4, method: 'ping' }, auth)).toBe(404);
      expect(late.events.some((event) => event.event === 'message')).toBe(false);
    } finally {
      late.close();
    }
  });
});

describe('a legacy SSE session with http.resumability.enabled false', () => {
  let server: HttpServer;
  beforeAll(async () => {
    server = await startHttp('mcpvisor', ['--config', config({ resumability: { enabled: false } })]);
  });
  afterAll(() => server?.stop());

  it('ends with its stream, as before: events without ids, its call cancelled at once', async () => {
    const marker = path.join(tempDir('legacy-noresume-'), 'cancelled');
    const { stream, sessionId } = await rawSession(server.baseUrl);
    expect(stream.events.every((event) => event.id === undefined)).toBe(true);
    expect(await post(server.baseUrl, sessionId, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 20_000, marker } } })).toBe(202);
    await untilCallRunning(server);
    stream.close();
    expect(await eventually(() => existsSync(marker))).toBe(true);
    expect(await eventually(async () => (await sessions(server)) === 0)).toBe(true);
  });
});

describe('an optional API that starts while a legacy SSE stream is cut', () => {
  it('is told to the session with notifications/tools/list_changed once its client reconnects', async () => {
    const api = await flakyApi();
    const config = writeConfig({ shell: { enabled: false }, web: { enabled: false }, http: { resumability: { legacySse: true } }, apis: [{ apiBaseUrl: api.upstream.url, openApiSpec: api.spec, namespace: 'flaky', affectsHealth: false }] }, 'legacy-resume-flaky.json');
    const server = await startHttp('mcpvisor', ['--config', config], tempCacheEnv());
    const proxy = await startTcpProxy(server.baseUrl);
    const { client, transport } = await connectResuming(proxy.origin);
    // A client on a stream never cut: it is told when the API has started.
    const { client: witness } = await connectSse(server.baseUrl);
    try {
      const before = endpointOf(transport);
      const bounded = (what: Promise<void>, message: string) => Promise.race([what, new Promise<void>((_, reject) => setTimeout(() => reject(new Error(message)), 20_000))]);
      let told!: () => void;
      const changed = new Promise<void>((resolve) => (told = resolve));
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => told());
      let witnessTold!: () => void;
      const witnessChanged = new Promise<void>((resolve) => (witnessTold = resolve));
      witness.setNotificationHandler(ToolListChangedNotificationSchema, () => witnessTold());
      expect((await client.listTools()).tools).toEqual([]);
      proxy.hold();
      proxy.sever();
      api.up();
      // The first retry comes 5 s after the start.
      await bounded(witnessChanged, 'the API did not start');
      proxy.release();
      await bounded(changed, 'no notifications/tools/list_changed after the reconnect');
      expect(endpointOf(transport)).toBe(before);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('flaky-show-pet-by-id');
    } finally {
      await client.close();
      await witness.close();
      await proxy.close();
      await server.stop();
      await api.close();
    }
  }, 60_000);
});
