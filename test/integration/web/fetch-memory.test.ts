import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorCodeOf } from '../../../protocol/results';
import { writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { send, startSite, type LocalSite } from '../../fixtures/web/local-site';

/**
 * Pages of ordinary size whose DOM outgrows a fetch thread's heap: each element costs 1.5-2 KB
 * converted, so 1.2 million `<p>`s (9 MB, under the 10 MB body cap) needed over 512 MB, and
 * running out near the limit aborted the whole supervisor (V8's fatal out-of-memory, not the
 * thread's clean end). Here the heap is 64 MB, so pages of a few hundred KB are enough.
 */
const PAGES: Record<string, string> = {
  // 2.4 MB: 300,000 paragraphs.
  '/paragraphs': `<html><head><title>Many paragraphs</title></head><body>${'<p>x</p>'.repeat(300_000)}</body></html>`,
  // 2.7 MB: 300,000 character references, each a text node of its own in the DOM.
  '/references': `<html><head><title>Many references</title></head><body><p>${'&amp;&lt;x'.repeat(150_000)}</p></body></html>`,
  '/ok': '<html><head><title>Fine</title></head><body><p>A fine page.</p></body></html>',
};

type Result = { content: Array<{ type: string; text?: string }>; structuredContent?: { totalLength: number; content: string }; isError?: boolean; _meta?: Record<string, unknown> };

let site: LocalSite;
let server: HttpServer;
let client: Client;

beforeAll(async () => {
  site = await startSite(Object.fromEntries(Object.entries(PAGES).map(([route, body]) => [route, send(body)])));
  const config = {
    shell: { enabled: false },
    web: { fetch: { allowPrivateNetwork: true, rateLimit: 100, rateLimitIntervalMs: 1000, timeoutMs: 30_000 } },
    pools: { threadMaxOldGenerationSizeMb: 64 },
  };
  server = await startHttp('mcpvisor', ['--config', writeConfig(config)]);
  ({ client } = await connectHttp(server.mcpUrl));
});

afterAll(async () => {
  await client?.close();
  await server?.stop();
  await site.close();
});

const fetchPage = (route: string, startIndex?: number) =>
  client.callTool({ name: 'fetch_web_content', arguments: { url: `${site.origin}${route}`, ...(startIndex === undefined ? {} : { start_index: startIndex }) } }, undefined, { timeout: 60_000 }) as Promise<Result>;

const fetchPool = async () => {
  const health = (await (await fetch(`${server.baseUrl}/health`)).json()) as { pools: Array<{ name: string; restarts: number }> };
  return health.pools.find((pool) => pool.name === 'web-fetch')!;
};

it.each([
  ['300,000 paragraphs', '/paragraphs', /^x\s+x\s+x/],
  ['300,000 character references', '/references', /&<x&<x&<x/],
])('converts a page of %s up to what the thread heap holds, and says where it was cut', async (_what, route, start) => {
  const first = await fetchPage(route);
  expect(errorCodeOf(first)).toBeUndefined();
  expect(first.structuredContent!.content).toMatch(start);
  const end = await fetchPage(route, Math.max(0, first.structuredContent!.totalLength - 200));
  // 64 MB of heap: 256 nodes a MB.
  expect(end.structuredContent!.content).toMatch(/\[Page cut: it has more than 16384 elements and character references, more than this server converts at once; the rest is left out\.\]$/);
  expect(textOf(await fetchPage('/ok'))).toMatch(/A fine page\.$/);
  expect((await fetchPool()).restarts).toBe(0);
});
