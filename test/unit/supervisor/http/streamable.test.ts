import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { configSchema } from '../../../../config/schema';
import { StreamableSessions } from '../../../../supervisor/http/streamable';
import { StreamBudget } from '../../../../supervisor/http/stream-budget';
import type { Supervisor } from '../../../../supervisor/supervisor';
import type { ToolResult } from '../../../../protocol/tool';

const IDLE_MS = 1000;

/** A supervisor whose one tool answers when the test says so. */
function stubSupervisor() {
  let answer: (result: ToolResult) => void = () => undefined;
  let called: () => void = () => undefined;
  const callStarted = new Promise<void>((resolve) => (called = resolve));
  const supervisor = {
    config: { name: 'test', pools: { progressIntervalMs: 0 } },
    health: () => ({ version: '0.0.0' }),
    draining: false,
    sessions: 0,
    call: () =>
      new Promise<ToolResult>((resolve) => {
        answer = resolve;
        called();
      }),
    refuse: () => ({ content: [], isError: true }),
    toolsMayChange: false,
    onToolsChanged: () => () => undefined,
    sessionEnded: () => undefined,
  } as unknown as Supervisor;
  return { supervisor, callStarted, answer: (result: ToolResult) => answer(result) };
}

function post(url: string, body: unknown, sessionId?: string): Promise<{ status: number; sessionId?: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(sessionId ? { 'mcp-session-id': sessionId } : {}) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, sessionId: res.headers['mcp-session-id'] as string | undefined, text }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}


describe('StreamableSessions idle expiry', () => {
  let server: Server;
  let sessions: StreamableSessions;

  /** Serves `sessions` (set by the test) on 127.0.0.1 as `server`; the MCP endpoint's URL. */
  async function serve(): Promise<string> {
    server = createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      req.on('end', () => void sessions.handle(req, res, text ? JSON.parse(text) : undefined));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  }

  afterEach(async () => {
    await sessions?.closeAll();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    jest.useRealTimers();
  });

  it('starts the idle clock when a call ends, so a call longer than the timeout keeps its session', async () => {
    // Only the clock and the sweeper's timers are fake; sockets stay real.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const stub = stubSupervisor();
    const config = configSchema.parse({ http: { sessionIdleTimeoutMs: IDLE_MS } }).http;
    sessions = new StreamableSessions(stub.supervisor, config, pino({ level: 'silent' }), new StreamBudget({ maxStreamBytes: 4 << 20, maxTotalBytes: 256 << 20 }));
    const url = await serve();

    const init = await post(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    const id = init.sessionId!;
    expect(await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, id)).toMatchObject({ status: 202 });

    const call = post(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: {} } }, id);
    await stub.callStarted;
    // The call runs three timeouts long: sweeps pass, the session stays (a call is running).
    jest.advanceTimersByTime(3 * IDLE_MS);
    stub.answer({ content: [{ type: 'text', text: 'done' }] });
    expect((await call).text).toContain('done');

    // Past a sweep, but less than the idle timeout after the call ended: still there.
    jest.advanceTimersByTime(IDLE_MS / 2 + 100);
    expect(sessions.size).toBe(1);
    expect(await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, id)).toMatchObject({ status: 202 });

    // Idle for the whole timeout: closed.
    jest.advanceTimersByTime(2 * IDLE_MS);
    expect(sessions.size).toBe(0);
    expect(await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, id)).toMatchObject({ status: 404 });
  });

  it('keeps a session active a moment ago when the wall clock jumps an hour ahead (NTP after a VM resumes, `date -s`)', async () => {
    // setSystemTime moves Date.now() only; performance.now() moves with the fake timers.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    sessions = new StreamableSessions(stubSupervisor().supervisor, configSchema.parse({ http: { sessionIdleTimeoutMs: IDLE_MS } }).http, pino({ level: 'silent' }), new StreamBudget({ maxStreamBytes: 4 << 20, maxTotalBytes: 256 << 20 }));
    const url = await serve();
    const init = await post(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    const id = init.sessionId!;

    jest.setSystemTime(Date.now() + 3_600_000);
    jest.advanceTimersByTime(IDLE_MS / 2 + 100); // a sweep passes
    expect(sessions.size).toBe(1);
    expect(await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, id)).toMatchObject({ status: 202 });
    // Idle for the whole timeout as measured, not as the wall clock says: closed.
    jest.advanceTimersByTime(2 * IDLE_MS);
    expect(sessions.size).toBe(0);
  });

  it('closes sessions that time out together a few hundred per turn of the event loop, so I/O goes on between', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    sessions = new StreamableSessions(stubSupervisor().supervisor, configSchema.parse({ http: { sessionIdleTimeoutMs: IDLE_MS } }).http, pino({ level: 'silent' }), new StreamBudget({ maxStreamBytes: 4 << 20, maxTotalBytes: 256 << 20 }));
    const url = await serve();
    const count = 500;
    const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    for (let i = 0; i < count; i += 50) await Promise.all(Array.from({ length: 50 }, () => post(url, initialize)));
    expect(sessions.size).toBe(count);

    // Two sweeps find them idle (at 1.5 and 2 timeouts); each closes one turn's worth and leaves
    // the rest to the next turns, which have not run yet (no I/O was polled).
    jest.advanceTimersByTime(2 * IDLE_MS);
    expect(sessions.size).toBeGreaterThan(0);
    expect(sessions.size).toBeLessThan(count);
    for (let turn = 0; turn < 10 && sessions.size > 0; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(sessions.size).toBe(0);
  });
});
