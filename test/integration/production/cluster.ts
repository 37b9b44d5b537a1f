/**
 * Helpers for the production tests: free loopback ports, nginx started from deploy/'s template in
 * its own prefix folder, and an SDK client that re-initialises when its session ends.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ROOT } from '../../helpers/processes';

/** pm2 of node_modules. */
export const PM2 = path.join(ROOT, 'node_modules', '.bin', 'pm2');

/**
 * Runs pm2 in the checkout with the environment `env()` gives (each test file sets its own
 * PM2_HOME there, so no pm2 daemon of the machine is used).
 */
export function pm2Runner(env: () => NodeJS.ProcessEnv) {
  return (...args: string[]) => promisify(execFile)(PM2, args, { cwd: ROOT, timeout: 60_000, env: env() });
}

export const NGINX = '/usr/sbin/nginx';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { render } = require(path.join(ROOT, 'deploy', 'render-nginx-conf.js')) as { render(options: Record<string, unknown>): string };

/** A free TCP port on `host` (bind to port 0, read it, close). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface Nginx {
  origin: string;
  mcpUrl: string;
  dir: string;
  /** nginx's access log so far (one line per request, with `upstream=` and `session=`). */
  accessLog(): string;
  stop(): Promise<void>;
}

/**
 * Renders deploy/nginx.conf.template for `upstreams` (or the renderer's own layout options) into
 * a fresh prefix folder and runs `nginx -p DIR -c DIR/nginx.conf -g 'daemon off;'` on a free port
 * of `host`; resolves when the port answers (at most 10 s).
 */
export async function startNginx(upstreams: string[] | Record<string, unknown>, host = '127.0.0.1'): Promise<Nginx> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpvisor-nginx-'));
  for (const sub of ['logs', 'tmp']) mkdirSync(path.join(dir, sub));
  const port = await freePort(host);
  const conf = path.join(dir, 'nginx.conf');
  const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const layout = Array.isArray(upstreams) ? { upstreams } : upstreams;
  writeFileSync(conf, render({ ...layout, listen: address, pidFile: path.join(dir, 'nginx.pid'), errorLog: path.join(dir, 'logs', 'error.log'), accessLog: path.join(dir, 'logs', 'access.log') }));
  const child: ChildProcess = spawn(NGINX, ['-p', `${dir}/`, '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const origin = `http://${address}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
    try {
      await fetch(`${origin}/health`);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`nginx did not answer on ${origin}: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    origin,
    mcpUrl: `${origin}/mcp`,
    dir,
    accessLog: () => readFileSync(path.join(dir, 'logs', 'access.log'), 'utf8'),
    async stop() {
      if (child.exitCode === null) child.kill('SIGQUIT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** True for the SDK's error of an HTTP 404 (the session ended or is unknown). */
export function isSessionGone(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}

/**
 * An SDK client that starts a new session when a request fails with 404 (its session's
 * instance went away), as the Streamable HTTP spec tells clients to. Counts re-initialisations;
 * any other error is thrown.
 */
export class RecoveringClient {
  client!: Client;
  transport!: StreamableHTTPClientTransport;
  reinitialised = 0;
  readonly #url: URL;

  constructor(url: string) {
    this.#url = new URL(url);
  }

  async connect(): Promise<this> {
    this.transport = new StreamableHTTPClientTransport(this.#url);
    this.client = new Client({ name: 'mcpvisor-production-test', version: '1.0.0' });
    // The standalone GET stream of an ended session fails with 404 too: not a request failure.
    await this.client.connect(this.transport);
    this.client.onerror = () => undefined;
    return this;
  }

  get sessionId(): string | undefined {
    return this.transport.sessionId;
  }

  /**
   * Runs `action`; on a 404 re-initialises once and runs it again. A failed re-initialisation is
   * thrown and retried at the start of the next run (no cascade of "Not connected").
   */
  async run<T>(action: (client: Client) => Promise<T>): Promise<T> {
    if (this.#broken) await this.#reconnect();
    try {
      return await action(this.client);
    } catch (error) {
      if (!isSessionGone(error)) throw error;
      await this.#reconnect();
      return action(this.client);
    }
  }

  #broken = false;

  async #reconnect(): Promise<void> {
    await this.client.close().catch(() => undefined);
    this.reinitialised++;
    this.#broken = true;
    await this.connect();
    this.#broken = false;
  }

  /** Calls the fixture's echo tool and returns the pid of the worker that answered. */
  async echoPid(text = 'hi'): Promise<number> {
    const result = await this.run((client) => client.callTool({ name: 'echo', arguments: { text } }));
    const pid = (result.structuredContent as { pid?: number } | undefined)?.pid;
    if (typeof pid !== 'number' || result.isError) throw new Error(`echo failed: ${JSON.stringify(result)}`);
    return pid;
  }

  close(): Promise<void> {
    return this.client.close().catch(() => undefined);
  }
}
