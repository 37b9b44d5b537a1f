import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { parsePrometheus, sampleValue } from '../../helpers/prometheus';
import { eventually, logEntries, tempCacheEnv } from '../../helpers/processes';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';
import { tempDir } from '../../helpers/temp';

const TOKEN = 'observability-token-0123456789';
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

/** The server's stderr as pino entries. */
function entries(server: HttpServer): Array<Record<string, unknown>> {
  return logEntries(server.server.stderr());
}

/** Sends `count` requests, `concurrency` at a time, and returns their statuses. */
async function flood(count: number, send: (index: number) => Promise<Response>): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < count) {
        const response = await send(next++);
        await response.arrayBuffer();
        statuses.push(response.status);
      }
    }),
  );
  return statuses;
}

async function metrics(server: HttpServer) {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  return { text, samples: parsePrometheus(text) };
}

describe('what an operator sees of a flood of refused requests', () => {
  let server: HttpServer;

  beforeAll(async () => {
    server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false }))], { MCPVISOR_AUTH_TOKEN: TOKEN });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('counts refusals by status in /metrics and logs the first of each status whole, then how many more, never a line per request', async () => {
    const badToken = await flood(300, () => fetch(`${server.mcpUrl}?api_key=QUERY-SECRET`, { method: 'POST', headers: { ...HEADERS, authorization: 'Bearer WRONG-TOKEN-SECRET' }, body: INIT }));
    const badOrigin = await flood(200, () => fetch(server.mcpUrl, { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${TOKEN}`, origin: 'http://evil.example' }, body: INIT }));
    const unknownSession = await flood(100, (i) => fetch(server.mcpUrl, { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${TOKEN}`, 'mcp-session-id': `made-up-${i}` }, body: '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' }));
    expect(new Set(badToken)).toEqual(new Set([401]));
    expect(new Set(badOrigin)).toEqual(new Set([403]));
    expect(new Set(unknownSession)).toEqual(new Set([404]));

    const { samples } = await metrics(server);
    expect(sampleValue(samples, 'mcpvisor_http_requests_refused_total', { status: '401' })).toBe(300);
    expect(sampleValue(samples, 'mcpvisor_http_requests_refused_total', { status: '403' })).toBe(200);
    expect(sampleValue(samples, 'mcpvisor_http_requests_refused_total', { status: '404' })).toBe(100);

    const refused = entries(server).filter((entry) => entry.msg === 'request refused');
    expect(refused.map((entry) => entry.status).sort()).toEqual([401, 403, 404]);
    const first401 = refused.find((entry) => entry.status === 401)!;
    expect(first401).toMatchObject({ level: 40, method: 'POST', path: '/mcp', client: '127.0.0.1', reason: 'Unauthorized: the bearer token is not valid' });
    expect(refused.find((entry) => entry.status === 403)).toMatchObject({ level: 40, reason: 'Forbidden: origin http://evil.example is not allowed' });
    // A stale session id is routine after a restart: not a warning.
    expect(refused.find((entry) => entry.status === 404)).toMatchObject({ level: 30 });
    expect(server.server.stderr()).not.toMatch(/SECRET|made-up-/);

    // The counts of the minute are written when the server stops.
    await server.stop();
    const summaries = entries(server).filter((entry) => typeof entry.more === 'number' && entry.component === 'http');
    expect(summaries.map((entry) => [entry.status, entry.more]).sort()).toEqual([
      [401, 299],
      [403, 199],
      [404, 99],
    ]);
    expect(summaries.find((entry) => entry.status === 401)!.msg).toBe('requests refused: 299 more answered 401 in the last minute');
  });
});

describe('/metrics under made-up tool names and faults', () => {
  let server: HttpServer;

  beforeAll(async () => {
    server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false }))]);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('gives real event-loop figures to scrapes that come together (an HA pair of Prometheus servers), not Nan and a 292-year minimum', async () => {
    let complete = 0;
    for (let round = 0; round < 5; round++) {
      // Scrapes come every 15 s or so: between rounds the monitor records (every 10 ms).
      await new Promise((resolve) => setTimeout(resolve, 100));
      const texts = await Promise.all([0, 1, 2].map(async () => (await fetch(`${server.baseUrl}/metrics`)).text()));
      for (const text of texts) {
        const samples = parsePrometheus(text);
        const parts = ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99'].map((part) => [part, sampleValue(samples, `nodejs_eventloop_lag_${part}_seconds`)] as const);
        // None yet (a scrape before the monitor recorded anything) is no figure; a made-up one is wrong.
        for (const [part, value] of parts) expect([part, value === undefined || (value < 3600 && (value > 1e-4 || (part === 'stddev' && value >= 0)))]).toEqual([part, true]);
        if (parts.every(([, value]) => value !== undefined)) complete++;
      }
    }
    expect(complete).toBeGreaterThan(5);
  });

  it('stays valid exposition, counts calls to unknown tools under one label, and does not grow with the names sent', async () => {
    const { client } = await connectHttp(server.mcpUrl);
    const before = (await metrics(server)).text.length;
    for (let i = 0; i < 500; i++) await expect(client.callTool({ name: `bogus-${i}`, arguments: {} })).rejects.toThrow(/unknown tool 'bogus-\d+'/);
    expect(textOf(await client.callTool({ name: 'crash', arguments: {} }))).toMatch(/WORKER_CRASHED/);
    expect(textOf(await client.callTool({ name: 'echo', arguments: {} }))).toMatch(/BAD_INPUT/);
    await client.close();
    const { text, samples } = await metrics(server);
    expect(sampleValue(samples, 'mcpvisor_tool_calls_total', { tool: '(unknown)', outcome: 'UNKNOWN_TOOL' })).toBe(500);
    expect(sampleValue(samples, 'mcpvisor_tool_calls_total', { tool: 'crash', outcome: 'WORKER_CRASHED' })).toBe(1);
    expect(sampleValue(samples, 'mcpvisor_tool_calls_total', { tool: 'echo', outcome: 'BAD_INPUT' })).toBe(1);
    expect(text).not.toMatch(/bogus-/);
    // Restarts are a counter (rate() across a server restart), one series per pool.
    expect(text).toMatch(/^# TYPE mcpvisor_pool_restarts_total counter$/m);
    expect(await eventually(async () => sampleValue((await metrics(server)).samples, 'mcpvisor_pool_restarts_total', { pool: 'test' }) === 1)).toBe(true);
    // One counter series and one histogram for (unknown), two for crash and echo: a few KB, not 500 names' worth.
    expect(text.length - before).toBeLessThan(8000);
  });
});

describe('following one call from the supervisor to the worker', () => {
  let server: HttpServer;
  let workspace: string;

  beforeAll(async () => {
    workspace = path.join(tempDir('mcpvisor-observe-'), 'ws');
    mkdirSync(workspace);
    const config = fixtureConfig({ thread: false, root: { shell: { enabled: true, sandbox: false, workspace, logCommands: true, workers: 1 } } });
    server = await startHttp('mcpvisor', ['--debug', '--config', writeConfig(config)]);
  });
  afterAll(async () => {
    await server.stop();
  });

  it("gives the supervisor's line about a call and the worker's lines the same callId, and the supervisor's its session id", async () => {
    const { client, transport } = await connectHttp(server.mcpUrl);
    expect(textOf(await client.callTool({ name: 'exec', arguments: { command: 'echo traced' } }))).toMatch(/traced/);
    const worker = await server.server.waitForLog((entry) => entry.msg === 'command' && entry.command === 'echo traced');
    const supervisor = await server.server.waitForLog((entry) => entry.msg === 'tool call' && entry.tool === 'exec');
    expect(worker.callId).toMatch(/^c\d+$/);
    expect(supervisor).toMatchObject({ callId: worker.callId, sessionId: transport.sessionId, outcome: 'ok' });
    expect(worker).toMatchObject({ pool: 'shell' });
    await client.close();
  });

  it('logs a flood of blocked commands as one line per pattern and a count, without the command unless logCommands', async () => {
    await server.stop();
    const config = fixtureConfig({ thread: false, root: { shell: { enabled: true, sandbox: false, workspace, workers: 1 } } });
    server = await startHttp('mcpvisor', ['--config', writeConfig(config)]);
    const { client } = await connectHttp(server.mcpUrl);
    for (let i = 0; i < 200; i++) {
      const result = await client.callTool({ name: 'exec', arguments: { command: `rm -rf / # ${'x'.repeat(2000)} TOKEN=sk-live-SECRET` } });
      expect(textOf(result)).toMatch(/^BLOCKED/);
    }
    await client.close();
    const whole = entries(server).filter((entry) => entry.msg === 'blocked command refused');
    expect(whole).toHaveLength(1);
    expect(whole[0]).toMatchObject({ level: 40, pattern: 'rm -rf /', commandChars: 2032 });
    expect(server.server.stderr()).not.toMatch(/SECRET|xxxxxxxx/);
    await server.stop();
    const summary = entries(server).find((entry) => entry.pattern === 'rm -rf /' && entry.more !== undefined);
    expect(summary).toMatchObject({ more: 199, msg: 'blocked command refused: 199 more like this in the last minute' });
  });
});

describe('a worker whose replacements cannot start', () => {
  let server: HttpServer;

  afterAll(async () => {
    await server.stop();
  });

  it('logs each failed start once, as one error naming why, and the turn to degraded once', async () => {
    const marker = path.join(tempDir('mcpvisor-observe-'), 'broken');
    const config = fixtureConfig({
      thread: false,
      process: { config: { failInitOnceFileExists: marker } },
      root: { pools: { restart: { maxRestarts: 2, windowMs: 60000, backoffBaseMs: 10, backoffMaxMs: 50 } } },
    });
    server = await startHttp('mcpvisor', ['--config', writeConfig(config)]);
    writeFileSync(marker, '');
    const { client } = await connectHttp(server.mcpUrl);
    expect(textOf(await client.callTool({ name: 'crash', arguments: {} }))).toMatch(/WORKER_CRASHED/);
    await client.close();
    const failures = () => entries(server).filter((entry) => typeof entry.msg === 'string' && entry.msg.includes('cannot start:'));
    // Retries every 50 ms at most: six failed starts come within a second or two.
    expect(await eventually(() => failures().length >= 6)).toBe(true);
    const lines = entries(server);
    const byWorker = new Map<unknown, number>();
    for (const entry of failures()) byWorker.set(entry.workerId, (byWorker.get(entry.workerId) ?? 0) + 1);
    // One line per failed start, with its worker: not a second "replacement worker failed to start" without one.
    expect([...byWorker.values()].every((count) => count === 1)).toBe(true);
    expect(failures().every((entry) => entry.level === 50 && entry.workerId !== undefined && entry.msg === `worker failed to start: cannot start: ${marker} exists`)).toBe(true);
    // The reason is in those lines alone (it was in a second error line per start, without the worker).
    expect(lines.filter((entry) => JSON.stringify(entry).includes('cannot start:'))).toHaveLength(failures().length);
    // The worker's exit after its failed start is that same error: not a warning of its own.
    const exits = lines.filter((entry) => entry.msg === 'worker exited; restarting');
    expect(exits.filter((entry) => entry.level === 40)).toHaveLength(1);
    expect(lines.filter((entry) => entry.msg === 'restart intensity exceeded; pool degraded, retrying slowly')).toHaveLength(1);
  });
});

describe('/metrics of an API with many operations', () => {
  let server: HttpServer;
  let upstream: Upstream;
  const OPERATIONS = 300;

  beforeAll(async () => {
    upstream = await startUpstream();
    const paths = Object.fromEntries(Array.from({ length: OPERATIONS }, (_, i) => [`/r${i}`, { get: { operationId: `op${i}`, responses: { 200: { description: 'ok' } } } }]));
    const spec = writeConfig({ openapi: '3.0.3', info: { title: 'Many', version: '1' }, paths }, 'many.json');
    const config = { shell: { enabled: false }, web: { enabled: false }, apis: [{ apiBaseUrl: upstream.url, openApiSpec: spec, specInputMethod: 'file', namespace: 'many' }] };
    server = await startHttp('mcpvisor', ['--config', writeConfig(config)], tempCacheEnv());
  });
  afterAll(async () => {
    await server.stop();
    await upstream.close();
  });

  it('adds a line or two per tool called, not a latency histogram per tool', async () => {
    const { client } = await connectHttp(server.mcpUrl);
    const before = (await metrics(server)).samples.length;
    for (let i = 0; i < OPERATIONS; i++) expect((await client.callTool({ name: `many-op-${i}`, arguments: {} })).isError).toBeFalsy();
    await client.close();
    const { samples } = await metrics(server);
    expect(sampleValue(samples, 'mcpvisor_tool_calls_total', { tool: 'many-op-7', outcome: 'ok' })).toBe(1);
    expect(sampleValue(samples, 'mcpvisor_pool_call_duration_seconds_count', { pool: 'api-many' })).toBe(OPERATIONS);
    expect(sampleValue(samples, 'mcpvisor_upstream_responses_total', { pool: 'api-many', status: '200' })).toBe(OPERATIONS);
    // A series per tool and outcome; it was 17 (a counter and a 16-line histogram) and one more per upstream status.
    expect(samples.length - before).toBeLessThan(OPERATIONS * 1.5);
  });
});
