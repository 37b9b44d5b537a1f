import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { startSite, type LocalSite } from '../../fixtures/web/local-site';

/**
 * One fetch thread runs web.fetch.concurrency fetches at once: a thread does not sit idle while a
 * site takes its time to answer. Counted at the site: how many requests it holds at once.
 */
let site: LocalSite;
let server: HttpServer;
let client: Client;
let inFlight = 0;
let mostInFlight = 0;

beforeAll(async () => {
  site = await startSite({
    '/slow': (_req, res) => {
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      const timer = setTimeout(() => {
        inFlight--;
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html><head><title>Slow</title></head><body><p>A page that took its time.</p></body></html>');
      }, 700);
      res.on('close', () => clearTimeout(timer));
    },
  });
  server = await startHttp('web-search-mcp', ['--config', writeConfig({ web: { fetch: { allowPrivateNetwork: true, threads: 1, concurrency: 4, rateLimit: 100, rateLimitIntervalMs: 1000 } } })]);
  ({ client } = await connectHttp(server.mcpUrl));
});

afterAll(async () => {
  await client?.close();
  await server?.stop();
  await site.close();
});

it('keeps four fetches in flight on one thread', async () => {
  const results = await Promise.all(Array.from({ length: 4 }, (_, i) => client.callTool({ name: 'fetch_web_content', arguments: { url: `${site.origin}/slow?n=${i}` } })));
  for (const result of results) expect(textOf(result as never)).toContain('A page that took its time.');
  expect(mostInFlight).toBe(4);
});
