/**
 * tools/call throughput and p99 latency at 20 concurrent HTTP sessions against a local upstream,
 * ours vs the reference (@ivotoby/openapi-mcp-server 1.16.1), plus a direct undici loop against
 * the same upstream from the same client (the machine's floor), and relay-floor.js (the floor of
 * any supervisor + worker design: HTTP → IPC → undici and back, nothing else). Every session uses ids disjoint
 * from the others (the reference misroutes overlapping ids); only correct answers count.
 * Every target is measured in `rounds` alternated phases of `seconds` each; for each server, the
 * CPU time per call of its main process and of its workers (cpuUsPerCall, from /proc) is printed too.
 * `npx tsx bench/openapi/throughput.ts [seconds per phase, default 2] [rounds, default 3]`.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { Agent, request } from 'undici';
import { ROOT, percentile, startHttpServer, stop, tree } from './common';

const SESSIONS = 20;
const PETSTORE = path.join(ROOT, 'test', 'fixtures', 'openapi', 'petstore-3.0.yaml');
const UPSTREAM = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify({ id: req.url })); });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 60_000 });

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** One MCP session over raw HTTP: answers come in the POST response or on the GET SSE stream. */
class Session {
  sid?: string;
  #pending = new Map<number, (message: any) => void>();
  #stream?: { body: { destroy(): void } };
  constructor(readonly url: string) {}

  async open(name: string, id: number): Promise<void> {
    await this.rpc({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name, version: '1' } } });
    await this.rpc({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // Not awaited: some servers send the stream's headers only with its first event.
    void request(this.url, { method: 'GET', dispatcher, headers: { accept: 'text/event-stream', 'mcp-session-id': this.sid!, 'mcp-protocol-version': '2025-03-26' } }).then(
      (res) => this.#listen(res),
      () => undefined,
    );
  }

  #listen(res: Awaited<ReturnType<typeof request>>): void {
    this.#stream = res;
    if (res.statusCode !== 200) {
      void res.body.dump();
      return;
    }
    let buffer = '';
    res.body.setEncoding('utf8');
    res.body.on('data', (chunk: string) => {
      buffer += chunk;
      let at: number;
      while ((at = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        if (line.startsWith('data:')) this.#deliver(line.slice(5));
      }
    });
    res.body.on('error', () => undefined);
  }

  #deliver(data: string): void {
    try {
      const message = JSON.parse(data);
      this.#pending.get(message.id)?.(message);
      this.#pending.delete(message.id);
    } catch {
      // a heartbeat or partial line
    }
  }

  async rpc(body: { id?: number; [key: string]: unknown }): Promise<any> {
    const id = body.id;
    const answer = id === undefined ? undefined : new Promise<any>((resolve) => this.#pending.set(id, resolve));
    const res = await request(this.url, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(this.sid ? { 'mcp-session-id': this.sid } : {}), 'mcp-protocol-version': '2025-03-26' },
      body: JSON.stringify(body),
    });
    this.sid ??= res.headers['mcp-session-id'] as string | undefined;
    const text = await res.body.text();
    if (text.trim() !== '') {
      const type = String(res.headers['content-type'] ?? '');
      if (type.includes('event-stream')) {
        for (const line of text.split('\n')) if (line.startsWith('data:')) this.#deliver(line.slice(5));
      } else {
        this.#deliver(text);
      }
    }
    return answer;
  }

  close(): void {
    this.#stream?.body.destroy();
  }
}

interface Phase {
  latencies: number[];
  wrong: number;
  seconds: number;
  /** CPU ms the server's main process and its workers used during the phase. */
  cpu?: { main: number; workers: number };
}

/** CPU ms (user + system) used so far by `pid` and, apart, by its descendants (from /proc). */
function cpuMs(pid: number): { main: number; workers: number } {
  const ticks = (p: number) => {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
      return Number(fields[11]) + Number(fields[12]);
    } catch {
      return 0; // gone
    }
  };
  const [main, ...workers] = tree(pid);
  const tick = 1000 / 100; // USER_HZ
  return { main: ticks(main) * tick, workers: workers.reduce((sum, p) => sum + ticks(p), 0) * tick };
}

/** One MCP load phase against the server `pid`, with its CPU use. */
async function measured(pid: number, url: string, seconds: number): Promise<Phase> {
  const before = cpuMs(pid);
  const phase = await mcpLoad(url, seconds);
  const after = cpuMs(pid);
  return { ...phase, cpu: { main: after.main - before.main, workers: after.workers - before.workers } };
}

async function mcpLoad(url: string, seconds: number): Promise<Phase> {
  const latencies: number[] = [];
  let wrong = 0;
  const sessions = await Promise.all(
    Array.from({ length: SESSIONS }, async (_, s) => {
      const session = new Session(url);
      await session.open(`bench-${s}`, s * 1_000_000);
      return session;
    }),
  );
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    sessions.map(async (session, s) => {
      for (let n = 1; performance.now() < until && n < 1_000_000; n++) {
        const petId = `s${s}n${n}`;
        const started = performance.now();
        const message = await Promise.race([
          session.rpc({ jsonrpc: '2.0', id: s * 1_000_000 + n, method: 'tools/call', params: { name: 'show-pet-by-id', arguments: { petId } } }),
          new Promise((resolve) => setTimeout(resolve, 10_000).unref()),
        ]);
        const text: string = (message as any)?.result?.content?.[0]?.text ?? '';
        if (text.includes(`/pets/${petId}"`)) latencies.push(performance.now() - started);
        else wrong++;
      }
    }),
  );
  for (const session of sessions) session.close();
  return { latencies, wrong, seconds };
}

async function directLoad(base: string, seconds: number): Promise<Phase> {
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: SESSIONS }, async (_, s) => {
      for (let n = 1; performance.now() < until && n < 1_000_000; n++) {
        const started = performance.now();
        const res = await request(`${base}/pets/s${s}n${n}`, { dispatcher });
        const text = await res.body.text();
        if (text.includes(`s${s}n${n}`)) latencies.push(performance.now() - started);
      }
    }),
  );
  return { latencies, wrong: 0, seconds };
}

/** Phases of one target added up: calls per second over all of them, latency percentiles of all calls. */
function summary(phases: Phase[]): { calls: number; wrong: number; p50: number; p99: number; cpuUsPerCall?: { main: number; workers: number } } {
  const latencies = phases.flatMap((phase) => phase.latencies);
  const seconds = phases.reduce((sum, phase) => sum + phase.seconds, 0);
  const cpu = phases.every((phase) => phase.cpu)
    ? {
        main: (phases.reduce((sum, phase) => sum + phase.cpu!.main, 0) * 1000) / latencies.length,
        workers: (phases.reduce((sum, phase) => sum + phase.cpu!.workers, 0) * 1000) / latencies.length,
      }
    : undefined;
  return { calls: latencies.length / seconds, wrong: phases.reduce((sum, phase) => sum + phase.wrong, 0), p50: percentile(latencies, 50), p99: percentile(latencies, 99), ...(cpu ? { cpuUsPerCall: cpu } : {}) };
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 2);
  const rounds = Number(process.argv[3] ?? 3);
  const upstream = spawn(process.execPath, ['-e', UPSTREAM], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => upstream.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  const base = `http://127.0.0.1:${port}`;
  const names = ['direct', 'reference', 'ours', 'floor'] as const;
  const phases: Record<(typeof names)[number], Phase[]> = { direct: [], reference: [], ours: [], floor: [] };
  const servers: Array<{ child: ReturnType<typeof spawn>; url: string }> = [];
  try {
    // Every server up at once, idle until its turn; the phases alternate round by round, because
    // this machine's speed drifts within a minute and back-to-back runs would compare two machines.
    const urls = {
      reference: await startHttpServer('reference', ['--api-base-url', base, '--openapi-spec', PETSTORE], await freePort()),
      ours: await startHttpServer('ours', ['--api-base-url', base, '--openapi-spec', PETSTORE], await freePort()),
      floor: await startFloor(base),
    };
    servers.push(urls.reference, urls.ours, urls.floor);
    for (const name of ['reference', 'ours', 'floor'] as const) await mcpLoad(urls[name].url, 1); // warm-up
    for (let round = 0; round < rounds; round++) {
      for (const name of names) phases[name].push(name === 'direct' ? await directLoad(base, seconds) : await measured(urls[name].child.pid!, urls[name].url, seconds));
    }
  } finally {
    for (const server of servers) await stop(server.child);
    await stop(upstream);
    await dispatcher.close();
  }
  const results = Object.fromEntries(names.map((name) => [name, summary(phases[name])]));
  const ours = results.ours as { calls: number; p99: number };
  const reference = results.reference as { calls: number; p99: number };
  const direct = results.direct as { calls: number; p99: number };
  const floor = results.floor as { calls: number; p99: number };
  console.log(JSON.stringify(results, (_k, v) => (typeof v === 'number' ? Math.round(v * 10) / 10 : v), 2));
  console.log(`calls/s ours/reference: ${(ours.calls / reference.calls).toFixed(2)} (target >= 1.5)`);
  console.log(`p99 ours/reference: ${(ours.p99 / reference.p99).toFixed(2)} (target <= 0.5)`);
  console.log(`calls/s ours/direct undici: ${(ours.calls / direct.calls).toFixed(2)} (target >= 0.35)`);
  console.log(`the design's floor (relay-floor.js): ${(floor.calls / direct.calls).toFixed(2)} of direct undici, ${(floor.calls / reference.calls).toFixed(2)} of the reference, p99 ${(floor.p99 / reference.p99).toFixed(2)} of the reference's; ours reaches ${(ours.calls / floor.calls).toFixed(2)} of it`);
}

/** relay-floor.js: the least any supervisor + worker relay does per call. */
async function startFloor(base: string): Promise<{ child: ReturnType<typeof spawn>; url: string }> {
  const child = spawn(process.execPath, [path.join(__dirname, 'relay-floor.js'), '0', base], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  return { child, url: `http://127.0.0.1:${port}/mcp` };
}

void main();
