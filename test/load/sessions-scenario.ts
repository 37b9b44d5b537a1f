/**
 * Many concurrent Streamable HTTP sessions on one mcpvisor process: each initialises, lists the
 * tools and calls the fixture's echo tool. Then the sessions sit idle and the server's RSS growth
 * per session is measured (VmRSS of the supervisor process after 20 warm-up sessions and with
 * every session open and idle; the workers are separate processes and are not counted). The
 * server under test should have http.rateLimit off (see LOAD_HTTP): every session comes from
 * 127.0.0.1, so the per-IP limit would refuse most of them, as it should.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { HttpServer } from '../helpers/mcp';
import { closeClient, health, openClient, pooled, rssOf } from './harness';

export interface SessionsOutcome {
  sessions: number;
  /** Sessions whose initialise, list or call failed or answered wrongly, with the reason. */
  lost: string[];
  /** Sessions the server reports (GET /health) with every client still open. */
  serverSessions: number;
  rssBefore: number;
  rssIdle: number;
  /** (rssIdle - rssBefore) / sessions, bytes. */
  bytesPerIdleSession: number;
  elapsedMs: number;
}

/**
 * Opens `count` sessions at once (at most `connectLimit` initialising at the same time: the
 * client side's sockets, not the server, are the bound), checks every one and closes them all.
 */
export async function runSessions(server: HttpServer, count: number, connectLimit = 250): Promise<SessionsOutcome> {
  const pid = server.server.child.pid!;
  // Warm-up: the first sessions load and compile code that every later one shares.
  await pooled(20, 20, async () => {
    const client = await openClient(server.mcpUrl, 'warm-up');
    await client.callTool({ name: 'echo', arguments: { text: 'warm-up' } });
    await closeClient(client);
  });
  await new Promise((resolve) => setTimeout(resolve, 500));
  const rssBefore = rssOf(pid);
  const started = Date.now();
  const clients: Array<Client | undefined> = new Array(count);
  const lost: string[] = [];
  const outcomes = await pooled(count, connectLimit, async (i) => {
    const client = await openClient(server.mcpUrl, `load-${i}`);
    clients[i] = client;
    const { tools } = await client.listTools();
    if (!tools.some((tool) => tool.name === 'echo')) throw new Error('echo not listed');
    const result = await client.callTool({ name: 'echo', arguments: { text: `session ${i}` } });
    const text = (result.structuredContent as { text?: string } | undefined)?.text;
    if (result.isError || text !== `session ${i}`) throw new Error(`echo answered ${JSON.stringify(result).slice(0, 200)}`);
  });
  outcomes.forEach((outcome, i) => {
    if (outcome.status === 'rejected') lost.push(`session ${i}: ${String(outcome.reason).slice(0, 200)}`);
  });
  const elapsedMs = Date.now() - started;
  // Idle: every call answered; let the server settle before reading its memory.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const rssIdle = rssOf(pid);
  const serverSessions = Number((await health(server.baseUrl)).body.sessions);
  await pooled(count, 100, (i) => closeClient(clients[i]));
  return { sessions: count, lost, serverSessions, rssBefore, rssIdle, bytesPerIdleSession: (rssIdle - rssBefore) / count, elapsedMs };
}
