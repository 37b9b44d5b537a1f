import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorCodeOf } from '../../../protocol/results';
import { writeConfig } from '../../helpers/config';
import { connectHttp, connectSse, connectStdio, startHttp, type HttpServer } from '../../helpers/mcp';
import { eventually, type Spawned } from '../../helpers/processes';
import { startSite, type LocalSite } from '../../fixtures/web/local-site';

/**
 * The pages fetch_web_content keeps for a session (supervisor/toolsets/web-paging.ts) go when the
 * session ends, on every transport: Streamable HTTP's DELETE and idle expiry, a closed legacy SSE
 * stream, stdin's end over stdio. Before, they stayed until their TTL (10 min). The server's debug
 * line says how many it let go and what the cache still holds.
 */

const RELEASED = 'web fetch: the pages kept for a closed session were let go';
const paragraphs = (count: number) => Array.from({ length: count }, (_, i) => `<p>Paragraph ${i}: words of a long page to read in parts.</p>`).join('');

let site: LocalSite;
let server: HttpServer;
const fetchConfig = { allowPrivateNetwork: true, rateLimit: 1000, rateLimitIntervalMs: 1000 };

beforeAll(async () => {
  site = await startSite({ '/long': (_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<html><body><main>${paragraphs(1000)}</main></body></html>`) });
  server = await startHttp('web-search-mcp', ['--debug', '--config', writeConfig({ web: { fetch: fetchConfig }, http: { sessionIdleTimeoutMs: 1500, connectedSessionIdleTimeoutMs: 1500 } }, 'session-end.json')]);
});

afterAll(async () => {
  await server?.stop();
  await site?.close();
});

/** Reads the page's first window and one later window (from the kept copy). */
async function readTwoWindows(client: Client): Promise<void> {
  const read = (start: number) => client.callTool({ name: 'fetch_web_content', arguments: { url: `${site.origin}/long`, start_index: start } }, undefined, { timeout: 60_000 }) as Promise<{ structuredContent?: { snapshot?: { cached: boolean } } }>;
  const first = await read(0);
  expect(errorCodeOf(first as never)).toBeUndefined();
  expect((await read(1000)).structuredContent?.snapshot?.cached).toBe(true);
}

/** The release lines the server logged, in order. */
const released = (stderr: string) =>
  stderr
    .split('\n')
    .filter((line) => line.includes(RELEASED))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** The `count`th release line of `spawned`, once it is written. */
async function releasedAfter(spawned: Pick<Spawned, 'stderr'>, count: number): Promise<Record<string, unknown> | undefined> {
  await eventually(() => released(spawned.stderr()).length >= count, 20_000);
  return released(spawned.stderr())[count - 1];
}

it('lets a session’s pages go when the client deletes it (Streamable HTTP DELETE)', async () => {
  const before = released(server.server.stderr()).length;
  const { client, transport } = await connectHttp(server.mcpUrl);
  await readTwoWindows(client);
  await transport.terminateSession();
  const entry = await releasedAfter(server.server, before + 1);
  expect(entry).toMatchObject({ pages: 1, keptBytes: 0 });
  expect(entry?.bytes).toBeGreaterThan(50_000);
  await client.close();
});

it('lets a session’s pages go when it expires idle', async () => {
  const before = released(server.server.stderr()).length;
  const { client } = await connectHttp(server.mcpUrl);
  await readTwoWindows(client);
  // No DELETE: the idle sweep closes it 1.5 s after its last call (the SDK client holds a GET stream: connectedSessionIdleTimeoutMs).
  expect(await releasedAfter(server.server, before + 1)).toMatchObject({ pages: 1, keptBytes: 0 });
  await client.close().catch(() => undefined);
});

it('lets a session’s pages go when its legacy SSE stream closes', async () => {
  const before = released(server.server.stderr()).length;
  const { client } = await connectSse(server.baseUrl);
  await readTwoWindows(client);
  await client.close();
  expect(await releasedAfter(server.server, before + 1)).toMatchObject({ pages: 1, keptBytes: 0 });
});

it('lets the stdio session’s pages go when stdin ends', async () => {
  const connection = await connectStdio('web-search-mcp', ['--debug', '--config', writeConfig({ web: { fetch: fetchConfig } }, 'session-end-stdio.json')]);
  await readTwoWindows(connection.client);
  await connection.close();
  expect(released(connection.stderr())).toEqual([expect.objectContaining({ pages: 1, keptBytes: 0 })]);
});
