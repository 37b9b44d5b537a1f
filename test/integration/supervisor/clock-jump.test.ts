import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { eventually } from '../../helpers/processes';

/**
 * The wall clock stepped under a running server (NTP after a VM resumes, `date -s`, a container
 * moved to another host), through libfaketime (Debian's faketime package, which scripts/setup.sh
 * installs): it moves CLOCK_REALTIME of the server's processes only, by the offset in a file read
 * on every call; the monotonic clock and the machine's clock stay as they are.
 */
function libfaketime(): string {
  const found = readdirSync('/usr/lib', { withFileTypes: true })
    .filter((dir) => dir.isDirectory() && dir.name.endsWith('-linux-gnu'))
    .map((dir) => path.join('/usr/lib', dir.name, 'faketime', 'libfaketime.so.1'))
    .concat('/usr/lib/faketime/libfaketime.so.1')
    .find((file) => existsSync(file));
  if (!found) throw new Error('libfaketime.so.1 is missing: these tests need Debian\'s faketime package (scripts/setup.sh installs it; or apt-get install faketime)');
  return found;
}

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

const dir = mkdtempSync(path.join(tmpdir(), 'mcpvisor-clock-'));
const offsetFile = path.join(dir, 'offset');
let servers: HttpServer[] = [];
let clients: Client[] = [];

/** Steps the server's wall clock to `seconds` from the real time (negative: back). */
function stepClock(seconds: number): void {
  writeFileSync(offsetFile, `${seconds >= 0 ? '+' : ''}${seconds}\n`);
}

async function start(config: Record<string, unknown>): Promise<HttpServer> {
  stepClock(0);
  const server = await startHttp('mcpvisor', ['--config', writeConfig(config)], {
    LD_PRELOAD: libfaketime(),
    FAKETIME_TIMESTAMP_FILE: offsetFile,
    FAKETIME_NO_CACHE: '1',
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  });
  servers.push(server);
  return server;
}

async function health(server: HttpServer): Promise<{ uptimeSeconds: number; pools: Array<{ name: string; queued: number }> }> {
  return (await (await fetch(`${server.baseUrl}/health`)).json()) as never;
}

/** Until `pool` has a call waiting for its worker (or thread). */
async function untilQueued(server: HttpServer, pool: string): Promise<void> {
  if (!(await eventually(async () => ((await health(server)).pools.find((stats) => stats.name === pool)?.queued ?? 0) > 0))) {
    throw new Error(`no call was queued in the ${pool} pool within 10 s`);
  }
}

afterEach(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await Promise.all(servers.map((server) => server.stop()));
  servers = [];
  clients = [];
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a wall clock stepped under a running server', () => {
  it('stepped back an hour: the per-client rate limit still lets a client with tokens left through, and uptime does not go negative', async () => {
    const server = await start(fixtureConfig({ thread: false, root: { http: { rateLimit: { perIpRequestsPerSecond: 1, perIpBurst: 5 } } } }));
    const initialize = () => fetch(server.mcpUrl, { method: 'POST', headers: HEADERS, body: INIT });
    expect((await initialize()).status).toBe(200);
    stepClock(-3600);
    // Four of five tokens left: before, the bucket counted minus an hour of refill (429, Retry-After 3599).
    expect((await initialize()).status).toBe(200);
    expect((await health(server)).uptimeSeconds).toBeGreaterThanOrEqual(0);
  });

  it.each([
    { waitsFor: 'a process worker', config: () => fixtureConfig({ thread: false, process: { concurrency: 1, callTimeoutMs: 30000 } }), hold: 'sleep', echo: 'echo', pool: 'test', outcome: 'the call runs with its budget, not a 1 ms deadline' },
    { waitsFor: 'a thread', config: () => fixtureConfig({ process: { workers: 1 }, thread: { callTimeoutMs: 30000 } }), hold: 'th-wait', echo: 'th-echo', pool: 'threads', outcome: 'the thread runs it, not a TIMEOUT for a budget it did not spend' },
  ])('stepped ahead an hour while a call waits for $waitsFor: $outcome', async ({ config, hold, echo, pool }) => {
    const server = await start(config());
    const { client } = await connectHttp(server.mcpUrl);
    clients.push(client);
    const holding = new AbortController();
    const held = client.callTool({ name: hold, arguments: { ms: 60000 } }, undefined, { signal: holding.signal, timeout: 60000 }).catch(() => undefined);
    const queued = client.callTool({ name: echo, arguments: { text: 'after the step' } }, undefined, { timeout: 60000 });
    await untilQueued(server, pool);
    stepClock(3600);
    holding.abort();
    await held;
    const result = await queued;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('after the step');
  });

  it('stepped ahead an hour while a cut stream waits for its client: the resume gets the answer, not 410 Gone for events it says expired', async () => {
    const server = await start(fixtureConfig({ thread: false, process: { callTimeoutMs: 30000 }, root: { pools: { progressIntervalMs: 100 } } }));
    const post = (body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
      fetch(server.mcpUrl, { method: 'POST', headers: { ...HEADERS, ...headers }, body: JSON.stringify(body), signal });
    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
    await init.text();
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status).toBe(202);

    // A call's SSE stream, cut at its first event with an id (a progress notification).
    const cut = new AbortController();
    const call = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 500 }, _meta: { progressToken: 'p' } } }, session, cut.signal);
    const reader = call.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    let lastEventId: string | undefined;
    for (let reads = 0; lastEventId === undefined && reads < 1000; reads++) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
      lastEventId = /^id: *(\S+)$/m.exec(text.split('\n\n').slice(0, -1).join('\n\n'))?.[1];
    }
    expect(lastEventId).toBeDefined();
    cut.abort();
    await reader.cancel().catch(() => undefined);
    expect(await eventually(async () => ((await health(server)) as unknown as { inFlightCalls: number }).inFlightCalls === 0)).toBe(true);

    stepClock(3600);
    const resumed = await fetch(server.mcpUrl, { headers: { accept: 'text/event-stream', ...session, 'last-event-id': lastEventId! }, signal: AbortSignal.timeout(10000) });
    expect(resumed.status).toBe(200);
    const replay = resumed.body!.pipeThrough(new TextDecoderStream()).getReader();
    let replayed = '';
    for (let reads = 0; !replayed.includes('"id":2') && reads < 1000; reads++) {
      const { value, done } = await replay.read();
      if (done) break;
      replayed += value;
    }
    await replay.cancel().catch(() => undefined);
    expect(replayed).toContain('slept 500 ms');
  });

  it('stepped back an hour after a crash loop: the pool is ready again once its restart window has passed, not an hour later', async () => {
    const restart = { maxRestarts: 1, windowMs: 4000, backoffBaseMs: 20, backoffMaxMs: 200 };
    // Replacements that cannot start while the marker exists: restarts counted against the
    // intensity (a crash a call causes is not).
    const marker = path.join(dir, 'broken');
    const server = await start(fixtureConfig({ thread: false, process: { config: { failInitOnceFileExists: marker } }, root: { pools: { cancelGraceMs: 300, restart } } }));
    const { client } = await connectHttp(server.mcpUrl);
    clients.push(client);
    const state = async () => (await health(server)).pools.find((stats) => stats.name === 'test') as unknown as { state: string; alive: number; restarts: number };
    writeFileSync(marker, '');
    await client.callTool({ name: 'crash', arguments: {} }).catch(() => undefined);
    // Over its intensity (2 restarts > 1 in the window), then a worker starts: degraded with a
    // worker alive (with none, it is degraded until the restart, whatever the intensity).
    expect(await eventually(async () => (await state()).restarts >= 3)).toBe(true);
    rmSync(marker);
    expect(await eventually(async () => {
      const now = await state();
      return now.state === 'degraded' && now.alive > 0;
    })).toBe(true);
    stepClock(-3600);
    // Before, the restarts stayed "within the window" for the hour the clock went back.
    expect(await eventually(async () => (await state()).state === 'ready' && (await state()).alive > 0, 20000)).toBe(true);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'back' } }))).toContain('back');
  });
});
