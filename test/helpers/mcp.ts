import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { bin, eventually, spawnBin, type Spawned } from './processes';

export interface StdioConnection {
  client: Client;
  transport: StdioClientTransport;
  /** The server's stderr so far. */
  stderr(): string;
  pid(): number | null;
  close(): Promise<void>;
}

/** Starts a built entry point over stdio and connects the SDK client to it. */
export function connectStdio(command: string, args: string[] = [], env: Record<string, string> = {}): Promise<StdioConnection> {
  return connectStdioProcess(process.execPath, [bin(command), ...args], { ...(process.env as Record<string, string>), ...env });
}

/** Spawns `command` (a server over stdio), connects the SDK client, keeps its stderr; a failed connect says what it wrote. */
export async function connectStdioProcess(command: string, args: string[], env: Record<string, string>): Promise<StdioConnection> {
  const transport = new StdioClientTransport({ command, args, env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'mcpvisor-test', version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`${(error as Error).message}; stderr:\n${stderr.slice(-3000)}`);
  }
  return { client, transport, stderr: () => stderr, pid: () => transport.pid, close: () => client.close() };
}

export interface HttpServer {
  server: Spawned;
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  /** The Streamable HTTP endpoint, `<baseUrl>/mcp` by default. */
  mcpUrl: string;
  stop(): Promise<number | string | null>;
}

/**
 * Starts a built entry point in HTTP mode on a free loopback port and waits for its `listening`
 * log line, which carries the address.
 */
export async function startHttp(command: string, args: string[] = [], env: Record<string, string> = {}): Promise<HttpServer> {
  const server = spawnBin(command, ['--transport', 'http', '--host', '127.0.0.1', '--port', '0', ...args], env);
  const entry = await server.waitForLog((line) => line.msg === 'listening');
  const mcpUrl = String(entry.url);
  return { server, baseUrl: new URL(mcpUrl).origin, mcpUrl, stop: () => server.stop() };
}

/** Connects the SDK client over Streamable HTTP. */
/**
 * Until the server runs a call (`/health` counts it in flight). A fixed pause before a SIGTERM,
 * kill or cancel lost the race on a busy machine: the signal came before the call.
 */
export async function untilCallRunning(server: Pick<HttpServer, 'baseUrl'>): Promise<void> {
  const running = async () => ((await (await fetch(`${server.baseUrl}/health`)).json()) as { inFlightCalls: number }).inFlightCalls > 0;
  if (!(await eventually(running))) throw new Error('no call was in flight within 10 s');
}

export async function connectHttp(mcpUrl: string, name = 'mcpvisor-test'): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl));
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** Connects the SDK client over the legacy HTTP+SSE transport (`GET /sse`). */
export async function connectSse(baseUrl: string): Promise<{ client: Client; transport: SSEClientTransport }> {
  const transport = new SSEClientTransport(new URL('/sse', baseUrl));
  const client = new Client({ name: 'mcpvisor-test-sse', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** The text of a tool result's first content item. */
export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.filter((item) => item.type === 'text').map((item) => item.text).join('\n');
}
