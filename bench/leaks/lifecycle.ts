/**
 * Whole-server faults repeated N times: a server is started, calls are put in flight on every
 * toolset, and then it is stopped (SIGTERM over HTTP, or its stdio client killed or closing
 * stdin). After each exit nothing of it may remain: processes, cgroups, temp entries, sockets.
 * `npx tsx bench/leaks/lifecycle.ts [N] [mode,...]`
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { census, getClosing, type Census } from './census';
import { soakDescription, startUpstream } from '../soak/servers';
import { SERP } from '../web/util';

const ROOT = path.resolve(__dirname, '..', '..');
const argv = process.argv.slice(2);
const N = Number(argv[0] ?? 5);
const modes = argv[1]?.split(',') ?? ['sigterm-http', 'stdio-eof', 'stdio-sigterm', 'stdio-sigkill-client'];
const web = argv.includes('--web');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (message: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`);

async function main(): Promise<void> {
  const root = mkdtempSync(path.join(tmpdir(), 'mlc-'));
  const tmp = path.join(root, 't');
  const workspace = path.join(root, 'ws');
  const xdg = path.join(root, 'x');
  for (const dir of [tmp, workspace, xdg]) mkdirSync(dir);
  const upstream = await startUpstream();
  const serp = readFileSync(path.join(SERP, 'duckduckgo-1.html'));
  const engine = createServer((req, res) => {
    if ((req.url ?? '').includes('never')) {
      res.writeHead(200, { 'content-type': 'text/html' }).write('<html><body>');
      const timer = setInterval(() => res.write('.'), 300);
      res.on('close', () => clearInterval(timer));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(serp);
  });
  await new Promise<void>((resolve) => engine.listen(0, '127.0.0.1', resolve));
  const engineOrigin = `http://127.0.0.1:${(engine.address() as AddressInfo).port}`;
  const specPath = path.join(root, 'openapi.json');
  writeFileSync(specPath, JSON.stringify(soakDescription()));
  const configPath = path.join(root, 'config.json');
  writeFileSync(configPath, JSON.stringify({
    http: { shutdownGraceMs: 500 },
    shell: { sandbox: true, workspace, commandTimeoutMs: 20_000, workers: 2 },
    web: {
      enabled: web,
      search: { engineUrl: `${engineOrigin}/ddg`, rateLimit: 100, rateLimitIntervalMs: 1_000, timeoutMs: 15_000 },
      fetch: { allowPrivateNetwork: true, rateLimit: 1000, rateLimitIntervalMs: 1_000, timeoutMs: 15_000 },
    },
    apis: [{ apiBaseUrl: upstream.origin, openApiSpec: specPath, specInputMethod: 'file', namespace: 'soak', requestTimeoutMs: 15_000 }],
  }, null, 2));
  const marker = `LEAK_RUN=${path.basename(root)}`;
  const dirs = { TMPDIR: tmp, workspace };
  const env = { ...process.env, TMPDIR: tmp, XDG_CACHE_HOME: xdg, LEAK_RUN: path.basename(root) };
  const bin = path.join(ROOT, 'dist', 'supervisor', 'cli', 'mcpvisor.js');

  const inFlightLoad = async (client: Client) => {
    const { tools } = await client.listTools();
    const slow = tools.find((t) => t.description?.includes('SOAK:slow'))!.name;
    const calls = [
      client.callTool({ name: slow, arguments: { ms: 30_000 } }),
      client.callTool({ name: 'exec', arguments: { command: "setsid sh -c 'sleep 301' & (sleep 302 &); nohup sleep 303 >/dev/null 2>&1 & sleep 300" } }),
      client.callTool({ name: 'exec', arguments: { command: 'sleep 300' } }),
      ...(web
        ? [client.callTool({ name: 'search', arguments: { query: 'never' } }), client.callTool({ name: 'fetch_web_content', arguments: { url: `${engineOrigin}/never` } })]
        : []),
    ].map((p) => p.catch((e: Error) => e));
    return calls;
  };

  let peak: Census = {};
  const leftovers: string[] = [];
  for (const mode of modes) {
    for (let i = 0; i < N; i++) {
      const stdio = mode.startsWith('stdio');
      // The client for stdio runs in a process of its own, so it can be killed as a client is.
      const child = stdio
        ? spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'stdio-client.ts'), bin, configPath, web ? engineOrigin : ''], { env, stdio: ['ignore', 'pipe', 'inherit'] })
        : spawn(process.execPath, [bin, '--config', configPath, '--transport', 'http', '--host', '127.0.0.1', '--port', '0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
      let serverPid = child.pid!;
      let baseUrl: string | undefined;
      let client: Client | undefined;
      if (stdio) {
        // The client prints the server's pid, then "running" once its calls are in flight.
        const lines = createInterface({ input: child.stdout! });
        await new Promise<void>((resolve) => lines.on('line', (line) => {
          if (/^pid \d+/.test(line)) serverPid = Number(line.slice(4));
          if (line === 'running') resolve();
        }));
      } else {
        const url = await new Promise<string>((resolve) => createInterface({ input: child.stderr! }).on('line', (line) => {
          try {
            const entry = JSON.parse(line) as { msg?: string; url?: string };
            if (entry.msg === 'listening' && entry.url) resolve(entry.url);
          } catch {
            // Not pino.
          }
        }));
        baseUrl = new URL(url).origin;
        client = new Client({ name: 'lc', version: '1' });
        await client.connect(new StreamableHTTPClientTransport(new URL(url)));
        void inFlightLoad(client);
        for (let k = 0; k < 500; k++) {
          const h = JSON.parse(await getClosing(`${baseUrl}/health`)) as { inFlightCalls: number };
          if (h.inFlightCalls >= (web ? 5 : 3)) break;
          await sleep(20);
        }
      }
      // Let the commands start their daemons.
      await sleep(1500);
      const during = await census({ rootPid: serverPid, marker, dirs });
      if (i === 0) peak = during;
      if (mode === 'sigterm-http' || mode === 'stdio-sigterm') process.kill(serverPid, 'SIGTERM');
      else if (mode === 'stdio-eof') child.stdout!.destroy(), process.kill(child.pid!, 'SIGUSR2');
      else if (mode === 'stdio-sigkill-client') process.kill(child.pid!, 'SIGKILL');
      const t0 = Date.now();
      await exited;
      // The server of a killed stdio client exits by itself: wait for it to go.
      for (let k = 0; k < 300; k++) {
        try {
          process.kill(serverPid, 0);
        } catch {
          break;
        }
        await sleep(50);
      }
      const tookMs = Date.now() - t0;
      await sleep(500);
      const after = await census({ rootPid: -1, marker, dirs });
      const left = Object.entries(after).filter(([k, v]) => v > 0 && !/^entries TMPDIR\/?$/.test(k)).map(([k, v]) => `${k}=${v}`);
      log(`${mode} #${i}: server ${serverPid} gone after ${tookMs} ms; left: ${left.join(', ') || 'nothing'}`);
      if (left.length) leftovers.push(`${mode} #${i}: ${left.join(', ')}`);
      void client;
    }
  }
  log(`in flight at the first stop: ${Object.entries(peak).filter(([k]) => /procs|cgroups|entries/.test(k)).map(([k, v]) => `${k}=${v}`).join(', ')}`);
  log(leftovers.length ? `LEFT BEHIND:\n  ${leftovers.join('\n  ')}` : 'nothing left behind');
  process.exit(0);
}

void main();
