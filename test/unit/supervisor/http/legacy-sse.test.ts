import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Request, Response } from 'express';
import pino from 'pino';
import { configSchema } from '../../../../config/schema';
import { LegacySseSessions } from '../../../../supervisor/http/legacy-sse';
import { StreamBudget } from '../../../../supervisor/http/stream-budget';
import type { Supervisor } from '../../../../supervisor/supervisor';

const IDLE_MS = 1000;

describe('LegacySseSessions idle expiry', () => {
  let server: Server;
  let sessions: LegacySseSessions;
  let stream: IncomingMessage | undefined;

  afterEach(async () => {
    stream?.destroy();
    await sessions?.closeAll();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    jest.useRealTimers();
  });

  it('keeps a session active a moment ago when the wall clock jumps an hour ahead (NTP after a VM resumes, `date -s`)', async () => {
    // setSystemTime moves Date.now() only; performance.now() moves with the fake timers. Sockets stay real.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const supervisor = { config: { name: 'test', pools: { progressIntervalMs: 0 } }, health: () => ({ version: '0.0.0' }), draining: false, sessions: 0, toolsMayChange: false, onToolsChanged: () => () => undefined, sessionEnded: () => undefined } as unknown as Supervisor;
    sessions = new LegacySseSessions(supervisor, configSchema.parse({ http: { connectedSessionIdleTimeoutMs: IDLE_MS } }).http, pino({ level: 'silent' }), new StreamBudget({ maxStreamBytes: 4 << 20, maxTotalBytes: 256 << 20 }));
    server = createServer((req, res) => void sessions.open(req as Request, res as unknown as Response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`;
    // Until the stream names its message endpoint: the session is open.
    await new Promise<void>((resolve, reject) => {
      request(url, { headers: { accept: 'text/event-stream' } }, (res) => {
        stream = res;
        res.setEncoding('utf8').on('data', (chunk: string) => chunk.includes('event: endpoint') && resolve());
      })
        .on('error', reject)
        .end();
    });
    expect(sessions.size).toBe(1);

    jest.setSystemTime(Date.now() + 3_600_000);
    jest.advanceTimersByTime(IDLE_MS / 2 + 100); // a sweep passes
    expect(sessions.size).toBe(1);
    // Idle for the whole timeout as measured, not as the wall clock says: closed.
    jest.advanceTimersByTime(2 * IDLE_MS);
    expect(sessions.size).toBe(0);
  });
});
