/**
 * The load driver of the tools/call benchmarks (throughput.ts, compare.ts): a local upstream,
 * raw MCP sessions over HTTP, the load phase and its summary. Every session uses ids disjoint
 * from the others (the reference misroutes overlapping ids); only correct answers count.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { Agent, request } from 'undici';
import { ROOT, percentile, tree } from './common';

const SESSIONS = 20;
export const PETSTORE = path.join(ROOT, 'test', 'fixtures', 'openapi', 'petstore-3.0.yaml');
const UPSTREAM = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify({ id: req.url })); });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

export const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 60_000 });

export function freePort(): Promise<number> {
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

export interface Phase {
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
export async function measured(pid: number, url: string, seconds: number): Promise<Phase> {
  const before = cpuMs(pid);
  const phase = await mcpLoad(url, seconds);
  const after = cpuMs(pid);
  return { ...phase, cpu: { main: after.main - before.main, workers: after.workers - before.workers } };
}

export async function mcpLoad(url: string, seconds: number): Promise<Phase> {
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

export async function directLoad(base: string, seconds: number): Promise<Phase> {
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
export function summary(phases: Phase[]): { calls: number; wrong: number; p50: number; p99: number; cpuUsPerCall?: { main: number; workers: number } } {
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

/** Starts the upstream: each answer is `{"id": <request path>}`, chunked. */
export async function startUpstream(): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, ['-e', UPSTREAM], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  return { child, base: `http://127.0.0.1:${port}` };
}
