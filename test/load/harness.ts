/**
 * Shared pieces of the load and fault suite (test/load, `npm run test:load`) and of its short
 * form in test/integration/production: a server under test, its memory, bounded concurrency and
 * latency percentiles.
 */
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { writeConfig } from '../helpers/config';
import { startHttp, type HttpServer } from '../helpers/mcp';

/**
 * The `http` config section of a server under load: every client is 127.0.0.1, so the per-IP and
 * per-session rate limits (there to stop exactly this) are off.
 */
export const LOAD_HTTP = { rateLimit: { perIpRequestsPerSecond: 0, perSessionRequestsPerSecond: 0 } };

/** Resident set size of a process in bytes, from /proc (VmRSS); 0 once it is gone. */
export function rssOf(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Starts `mcpvisor` in HTTP mode on a free loopback port with `config` written to a temp file. */
export function startServer(config: Record<string, unknown>, args: string[] = []): Promise<HttpServer> {
  return startHttp('mcpvisor', ['--config', writeConfig(config), ...args]);
}

/** Runs `task(i)` for i in [0, count) with at most `limit` running at once; keeps every outcome. */
export async function pooled<T>(count: number, limit: number, task: (i: number) => Promise<T>): Promise<PromiseSettledResult<T>[]> {
  const results: PromiseSettledResult<T>[] = new Array(count);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      try {
        results[i] = { status: 'fulfilled', value: await task(i) };
      } catch (reason) {
        results[i] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, lane));
  return results;
}

/** The p-th percentile (0–100) of `values` in their unit; NaN for none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** An SDK client connected over Streamable HTTP (initialize + initialized done). */
export async function openClient(mcpUrl: string, name = 'mcpvisor-load'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
  return client;
}

/** Ends the session (DELETE, so the server frees it at once) and closes the client. */
export async function closeClient(client: Client | undefined): Promise<void> {
  if (!client) return;
  await (client.transport as StreamableHTTPClientTransport | undefined)?.terminateSession().catch(() => undefined);
  await client.close().catch(() => undefined);
}

/** Status and JSON body of GET /health. */
export async function health(baseUrl: string): Promise<{ status: number; body: Record<string, unknown> & { sessions?: number; pools?: Array<Record<string, unknown>> } }> {
  const response = await fetch(`${baseUrl}/health`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Formats bytes as KB with one decimal. */
export const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;
