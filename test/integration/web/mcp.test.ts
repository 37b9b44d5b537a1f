import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorCodeOf } from '../../../protocol/results';
import { connectHttp, connectSse, connectStdio, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { descendants, eventually } from '../../helpers/processes';
import { fixtureText, send, type LocalSite } from '../../fixtures/web/local-site';
import { HANG_CLOSED, startSerpSite } from '../../fixtures/web/serp-site';

type ToolResult = { content: unknown; isError?: boolean; structuredContent?: Record<string, unknown>; _meta?: Record<string, unknown> };

let site: LocalSite;
let server: HttpServer;
let dir: string;
const clients: Client[] = [];

async function client(): Promise<Client> {
  const { client } = await connectHttp(server.mcpUrl);
  clients.push(client);
  return client;
}

const call = async (c: Client, name: string, args: Record<string, unknown>) => (await c.callTool({ name, arguments: args })) as ToolResult;

/** Chromium's browser process (not its renderers) among the server's descendants. */
function chromiumBrowserPids(root: number): number[] {
  return descendants(root).filter((pid) => {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      return /chrom/i.test(cmdline.split('\0')[0]) && !cmdline.includes('--type=');
    } catch {
      return false;
    }
  });
}

beforeAll(async () => {
  site = await startSerpSite({
    '/pages/article': send(fixtureText('article.html')),
    '/pages/long': send(`<html><body><main>${'<p>Words of a long page, again and again.</p>'.repeat(800)}</main></body></html>`),
  });
  dir = mkdtempSync(path.join(tmpdir(), 'web-mcp-test-'));
  const config = path.join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({
    web: {
      search: { engineUrl: `${site.origin}/router`, fallbackEngines: ['bing'], engineUrls: { bing: `${site.origin}/router` }, rateLimitIntervalMs: 400, timeoutMs: 10_000 },
      fetch: { allowPrivateNetwork: true, rateLimit: 2, rateLimitIntervalMs: 1000 },
    },
  }));
  server = await startHttp('web-search-mcp', ['--config', config]);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await server?.stop();
  await site.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('web-search-mcp over Streamable HTTP with real Chromium', () => {
  it('lists exactly the two web tools, with object input schemas', async () => {
    const connected = await client();
    expect(connected.getServerVersion()?.name).toBe('web-search-mcp');
    const { tools } = await connected.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['fetch_web_content', 'search']);
    for (const tool of tools) expect(tool.inputSchema.type).toBe('object');
  });

  it('searches and formats titles, URLs and snippets', async () => {
    const result = await call(await client(), 'search', { query: 'foo' });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toMatch(/^Found 10 results for "foo" \(duckduckgo\):\n\n1\. Foo Fighters - Wikipedia\n {3}URL: https:\/\/en\.wikipedia\.org\/wiki\/Foo_Fighters\n {3}Foo Fighters are a rock band/);
    expect((result.structuredContent?.results as unknown[]).length).toBe(10);
  });

  it('falls back to the next engine when the first one blocks', async () => {
    const result = await call(await client(), 'search', { query: 'blocked' });
    expect(result.isError ? textOf(result) : 'ok').toBe('ok');
    expect(result.structuredContent).toMatchObject({ engine: 'bing', blocked: [{ engine: 'duckduckgo', reason: 'the DuckDuckGo bot challenge' }] });
  });

  it('tells the caller that the engines blocked the search, not that nothing was found', async () => {
    const result = await call(await client(), 'search', { query: 'blocked-everywhere' });
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('UPSTREAM_ERROR');
    expect(textOf(result)).toMatch(/the search engine blocked the search: duckduckgo \(the DuckDuckGo bot challenge\), bing/);
  });

  it('falls back to the next engine when the first answers with an HTTP error', async () => {
    const result = await call(await client(), 'search', { query: 'http-error' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ engine: 'bing', failed: [{ engine: 'duckduckgo', reason: 'HTTP 503' }] });
    expect(textOf(result)).toMatch(/^Found \d+ results for "http-error" \(bing\)/);
  });

  it('tells the caller that every engine failed with an HTTP error, not that nothing was found', async () => {
    const result = await call(await client(), 'search', { query: 'http-error-everywhere' });
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('UPSTREAM_ERROR');
    expect(textOf(result)).toBe('UPSTREAM_ERROR: the search engines failed: duckduckgo (HTTP 503), bing (HTTP 500). Try again later or configure another engine.');
  });

  it('answers an empty query with no results and no page load', async () => {
    const before = site.hits.length;
    const result = await call(await client(), 'search', { query: '  ' });
    expect(textOf(result)).toBe('No results for "".');
    // Chromium's own favicon fetch for an earlier page is not a page load of this search.
    expect(site.hits.slice(before).filter((hit) => hit.path !== '/favicon.ico')).toEqual([]);
  });

  it('refuses a query longer than 2,048 characters with BAD_INPUT, before any page load', async () => {
    const before = site.hits.length;
    const result = await call(await client(), 'search', { query: 'q'.repeat(2049) });
    expect(errorCodeOf(result)).toBe('BAD_INPUT');
    expect(textOf(result)).toMatch(/argument 'query' must NOT have more than 2048 characters/);
    expect(site.hits.slice(before).filter((hit) => hit.path !== '/favicon.ico')).toEqual([]);
  });

  it('cuts a search that hangs at its deadline', async () => {
    const result = await call(await client(), 'search', { query: 'hang-deadline' });
    expect(result.isError).toBe(true);
    // The whole text, so that a failure says what the search answered instead.
    expect(textOf(result)).toMatch(/^TIMEOUT: /);
  });

  it('stops loading the page when the client cancels the search', async () => {
    const c = await client();
    const controller = new AbortController();
    const pending = c.callTool({ name: 'search', arguments: { query: 'hang-cancel' } }, undefined, { signal: controller.signal });
    expect(await eventually(() => site.hits.some((hit) => hit.query === '?q=hang-cancel'), 10_000)).toBe(true);
    controller.abort();
    await expect(pending).rejects.toThrow();
    expect(await eventually(() => HANG_CLOSED.includes('?q=hang-cancel'), 5_000)).toBe(true);
  });

  it('fails only the search in flight when Chromium is killed with -9, and the next search works', async () => {
    const c = await client();
    const hitsBefore = site.countHits('/router/html/');
    const pending = call(c, 'search', { query: 'hang-kill' });
    expect(await eventually(() => site.hits.some((hit) => hit.query === '?q=hang-kill') && site.countHits('/router/html/') > hitsBefore, 10_000)).toBe(true);
    const [browser] = chromiumBrowserPids(server.server.child.pid!);
    expect(browser).toBeGreaterThan(0);
    process.kill(browser, 'SIGKILL');
    const failed = await pending;
    expect(failed.isError).toBe(true);
    expect(errorCodeOf(failed)).toBe('NETWORK_ERROR');
    // The worker relaunches a browser that died at once; a search that comes while the relaunch
    // goes on waits for it, and the wait is not counted in its budget.
    const next = await call(c, 'search', { query: 'after the crash' });
    expect(textOf(next)).toMatch(/^Found 10 results/);
    expect(next.isError).toBeFalsy();
  });

  it('fetches a page as Markdown with metadata', async () => {
    const result = await call(await client(), 'fetch_web_content', { url: `${site.origin}/pages/article` });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toMatch(/^Title: Token buckets explained\nURL: http:\/\/127\.0\.0\.1:\d+\/pages\/article\n/);
    expect(textOf(result)).toContain('| Algorithm | Bursts |');
  });

  it('truncates to 10,000 characters and reads on from start_index', async () => {
    const c = await client();
    const first = await call(c, 'fetch_web_content', { url: `${site.origin}/pages/long` });
    expect(first.structuredContent).toMatchObject({ startIndex: 0, endIndex: 10_000, truncated: true, nextStartIndex: 10_000 });
    expect(textOf(first)).toContain('Call fetch_web_content again with start_index=10000');
    const second = await call(c, 'fetch_web_content', { url: `${site.origin}/pages/long`, start_index: 10_000, max_length: 500 });
    expect(second.structuredContent).toMatchObject({ startIndex: 10_000, endIndex: 10_500 });
  });

  it('holds the fetch rate limit across concurrent sessions, waiting instead of failing', async () => {
    const sessions = await Promise.all([client(), client(), client()]);
    const before = site.countHits('/pages/article');
    // Two URLs per session: a session's calls for the same page at once share one fetch (web-paging.ts).
    const results = await Promise.all(sessions.flatMap((c) => [1, 2].map((n) => call(c, 'fetch_web_content', { url: `${site.origin}/pages/article?n=${n}` }))));
    expect(results.filter((result) => result.isError)).toEqual([]);
    const times = site.hits.filter((hit) => hit.path === '/pages/article').slice(before).map((hit) => hit.at);
    expect(times).toHaveLength(6);
    // A bucket of 2 refilled at 2 per second: 2 at once, then one every 500 ms, so the sixth comes
    // about 2 s after the first (no limit: a few ms). Lower bounds only, with room for jitter.
    expect(times[5] - times[0]).toBeGreaterThanOrEqual(1500);
    for (let i = 0; i + 2 < times.length; i++) expect(times[i + 2] - times[i]).toBeGreaterThanOrEqual(300);
  });

  it('holds the search rate limit across concurrent sessions', async () => {
    const sessions = await Promise.all([client(), client(), client()]);
    // A warm browser first: right after a relaunch (the crash test above), a fresh renderer's
    // first navigation takes a varying extra few hundred ms, more than this test's 250 ms of room
    // (searches that wait for a launch: browser-launch.test.ts, with room to match).
    expect((await call(sessions[0], 'search', { query: 'warm before rate' })).isError).toBeFalsy();
    const before = site.hits.length;
    const results = await Promise.all(sessions.map((c, i) => call(c, 'search', { query: `rate ${i}` })));
    expect(results.filter((result) => result.isError)).toEqual([]);
    const times = site.hits.slice(before).filter((hit) => hit.query.startsWith('?q=rate')).map((hit) => hit.at);
    expect(times).toHaveLength(3);
    // One search per 400 ms: the third page load comes about 800 ms after the first.
    expect(times[2] - times[0]).toBeGreaterThanOrEqual(550);
  });

  it('serves the legacy SSE transport too', async () => {
    const { client: sse } = await connectSse(server.baseUrl);
    clients.push(sse);
    const result = (await sse.callTool({ name: 'fetch_web_content', arguments: { url: `${site.origin}/pages/article`, max_length: 100 } })) as ToolResult;
    expect(result.structuredContent).toMatchObject({ endIndex: 100, truncated: true });
  });
});

describe('web-search-mcp over stdio, SSRF guard on', () => {
  it('refuses a loopback target with BLOCKED and lists the tools', async () => {
    const connection = await connectStdio('web-search-mcp');
    try {
      const { tools } = await connection.client.listTools();
      expect(tools).toHaveLength(2);
      const result = (await connection.client.callTool({ name: 'fetch_web_content', arguments: { url: `${site.origin}/pages/article` } })) as ToolResult;
      expect(result.isError).toBe(true);
      expect(errorCodeOf(result)).toBe('BLOCKED');
      const bad = (await connection.client.callTool({ name: 'fetch_web_content', arguments: { url: 'nope' } })) as ToolResult;
      expect(errorCodeOf(bad)).toBe('BAD_INPUT');
    } finally {
      await connection.close();
    }
  });
});
