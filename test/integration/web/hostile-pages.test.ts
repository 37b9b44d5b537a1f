import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { send, startSite, type LocalSite } from '../../fixtures/web/local-site';

/**
 * Pages of ordinary size built to exhaust the converter's stack, which failed the whole fetch
 * (CONVERSION_FAILED, "Maximum call stack size exceeded") in the fetch thread of web-search-mcp.
 * The unit tests of html-to-markdown and flatten-nesting hold more such pages, too slow to convert
 * here at the size it takes: a fetch thread's stack is four times the main thread's.
 */
const PAGES: Record<string, string> = {
  // 100 KB: JSON-LD metadata nested 50,000 arrays deep.
  '/ld-json': `<html><head><title>Nested metadata</title><script type="application/ld+json">${'['.repeat(50_000)}${']'.repeat(50_000)}</script></head><body><p>The text of the page.</p></body></html>`,
};

let site: LocalSite;
let server: HttpServer;
let client: Client;
let dir: string;

beforeAll(async () => {
  site = await startSite(Object.fromEntries(Object.entries(PAGES).map(([route, html]) => [route, send(html)])));
  dir = mkdtempSync(path.join(tmpdir(), 'web-hostile-pages-'));
  const config = path.join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ web: { fetch: { allowPrivateNetwork: true, rateLimit: 100, rateLimitIntervalMs: 1000 } } }));
  server = await startHttp('web-search-mcp', ['--config', config]);
  ({ client } = await connectHttp(server.mcpUrl));
});

afterAll(async () => {
  await client?.close();
  await server?.stop();
  await site.close();
  rmSync(dir, { recursive: true, force: true });
});

const fetchPage = async (route: string) =>
  (await client.callTool({ name: 'fetch_web_content', arguments: { url: `${site.origin}${route}`, max_length: 40 } })) as { isError?: boolean; content: unknown };

it('reads a page whose JSON-LD nests 50,000 arrays deep', async () => {
  const result = await fetchPage('/ld-json');
  expect(result.isError).toBeFalsy();
  expect(textOf(result)).toMatch(/^Title: Nested metadata\n[\s\S]*---\n\nThe text of the page\.$/);
});

