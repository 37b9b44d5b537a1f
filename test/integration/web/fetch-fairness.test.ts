import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { startSite, type LocalSite } from '../../fixtures/web/local-site';

/**
 * The fetch rate limit is one token bucket for every session, and sessions take turns for its
 * tokens round-robin: a quiet session's fetch goes at its turn, not after every fetch a noisy
 * session queued before it (one FIFO for every session did that). Seen at the site: the order of
 * requests.
 */
let site: LocalSite;
let server: HttpServer;
let noisy: Client;
let quiet: Client;
const requests: string[] = [];

beforeAll(async () => {
  site = await startSite({
    '/page': (_req, res, url) => {
      requests.push(url.searchParams.get('who')!);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<html><body><p>Page for ${url.searchParams.get('who')}.</p></body></html>`);
    },
  });
  const config = { logLevel: 'debug', web: { fetch: { allowPrivateNetwork: true, rateLimit: 1, rateLimitIntervalMs: 1500 } } };
  server = await startHttp('web-search-mcp', ['--config', writeConfig(config)]);
  ({ client: noisy } = await connectHttp(server.mcpUrl, 'noisy'));
  ({ client: quiet } = await connectHttp(server.mcpUrl, 'quiet'));
});

afterAll(async () => {
  await noisy?.close();
  await quiet?.close();
  await server?.stop();
  await site.close();
});

it('gives the quiet session its turn among the fetches the noisy session queued, not after all of them', async () => {
  const fetchPage = (client: Client, who: string) => client.callTool({ name: 'fetch_web_content', arguments: { url: `${site.origin}/page?who=${who}` } });
  const noisyCalls = ['noisy-1', 'noisy-2', 'noisy-3'].map((who) => fetchPage(noisy, who));
  // noisy-1 takes the bucket's token; noisy-2 and noisy-3 wait for theirs (the second waits behind one).
  await server.server.waitForLog((line) => line.msg === 'waiting for the rate limit' && line.waiting === 1);
  const quietCall = fetchPage(quiet, 'quiet');
  const results = await Promise.all([...noisyCalls, quietCall]);
  for (const result of results) expect(result.isError).toBeFalsy();
  expect(textOf(await quietCall)).toContain('Page for quiet.');
  // Turns go round the sessions waiting: noisy (waiting first), quiet, noisy.
  expect(requests).toEqual(['noisy-1', 'noisy-2', 'quiet', 'noisy-3']);
});
