import type { ServerResponse } from 'node:http';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorCodeOf } from '../../../protocol/results';
import { writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { eventually } from '../../helpers/processes';
import { startSite, type Handler, type LocalSite } from '../../fixtures/web/local-site';

/**
 * Later windows of a page come from the copy fetched for the earlier ones (web.fetch.cache,
 * supervisor/toolsets/web-paging.ts), counted at the site: no request, kept per session and per
 * URL, within the byte bound, and a page fetched again mid-way says whether it changed.
 */
type Snapshot = { id: string; fetchedAt: string; cached: boolean; changed?: boolean };
type Result = {
  content: Array<{ type: string; text?: string }>;
  isError?: boolean;
  structuredContent?: { content: string; startIndex: number; totalLength: number; nextStartIndex?: number; snapshot?: Snapshot };
  _meta?: Record<string, unknown>;
};

const html = (body: string) => `<html><head><title>Paged</title></head><body><main>${body}</main></body></html>`;
const paragraphs = (count: number, label: string) => Array.from({ length: count }, (_, i) => `<p>${label}, paragraph ${i}: words of a long page to read in parts.</p>`).join('');
const page = (body: string): Handler => (_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html(body));

/** Answers are held until `release()`; requests after it are answered at once. */
function held(body: string) {
  const waiting: ServerResponse[] = [];
  let released = false;
  const closedEarly: number[] = [];
  const answer = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html(body));
  const handler: Handler = (_req, res) => {
    if (released) return answer(res);
    waiting.push(res);
    res.on('close', () => !res.writableEnded && closedEarly.push(Date.now()));
  };
  return { handler, closedEarly, release: () => ((released = true), waiting.splice(0).forEach(answer)) };
}

let site: LocalSite;
let main: HttpServer;
let expiring: HttpServer;
let limited: HttpServer;
const clients: Client[] = [];
let version = 0;
const heldPages = { together: held(paragraphs(300, 'Together')), cancelled: held(paragraphs(300, 'Cancelled')), alone: held(paragraphs(300, 'Alone')) };
let failures = 0;

beforeAll(async () => {
  site = await startSite({
    '/long': page(paragraphs(1000, 'Long')),
    '/other': page(paragraphs(1000, 'Other')),
    '/sized': page(paragraphs(1500, 'Sized')),
    '/huge': page(paragraphs(6000, 'Huge')),
    '/steady': page(paragraphs(600, 'Steady')),
    // A new version on every request, as a front page with a timestamp.
    '/changing': (req, res) => page(paragraphs(600, `Version ${++version}`))(req, res, new URL('http://x')),
    '/moved': (_req, res) => res.writeHead(302, { location: '/target' }).end(),
    '/target': page(paragraphs(1000, 'Target')),
    '/flaky': (req, res) => (failures++ === 0 ? res.writeHead(500).end('down') : page(paragraphs(1000, 'Flaky'))(req, res, new URL('http://x'))),
    '/together': heldPages.together.handler,
    '/cancelled': heldPages.cancelled.handler,
    '/alone': heldPages.alone.handler,
  });
  const fetch = { allowPrivateNetwork: true, rateLimit: 1000, rateLimitIntervalMs: 1000 };
  [main, expiring, limited] = await Promise.all([
    // 1 MB: a page may take 256 KB (2 bytes a character), so seven pages of 70,000 characters fit.
    startHttp('web-search-mcp', ['--config', writeConfig({ web: { fetch: { ...fetch, cache: { maxBytes: 1024 * 1024 } } } }, 'main.json')]),
    startHttp('web-search-mcp', ['--config', writeConfig({ web: { fetch: { ...fetch, cache: { ttlMs: 1 } } } }, 'expiring.json')]),
    // One fetch per 10 minutes: a second fetch would answer BUSY.
    startHttp('web-search-mcp', ['--config', writeConfig({ web: { fetch: { ...fetch, rateLimit: 1, rateLimitIntervalMs: 600_000 } } }, 'limited.json')]),
  ]);
});

afterAll(async () => {
  for (const heldPage of Object.values(heldPages)) heldPage.release();
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await Promise.all([main, expiring, limited].map((server) => server?.stop()));
  await site.close();
});

async function client(server = main): Promise<Client> {
  const { client } = await connectHttp(server.mcpUrl);
  clients.push(client);
  return client;
}

const read = (c: Client, path: string, start?: number, extra: Record<string, unknown> = {}, signal?: AbortSignal) =>
  c.callTool({ name: 'fetch_web_content', arguments: { url: `${site.origin}${path}`, ...(start === undefined ? {} : { start_index: start }), ...extra } }, undefined, { signal, timeout: 60_000 }) as Promise<Result>;

const inFlight = async (server: HttpServer) => ((await (await fetch(`${server.baseUrl}/health`)).json()) as { inFlightCalls: number }).inFlightCalls;

it('reads every later window of a page from the copy fetched for the first: one request, windows that join up', async () => {
  const c = await client();
  const first = await read(c, '/long');
  expect(errorCodeOf(first)).toBeUndefined();
  const parts = [first.structuredContent!.content];
  let next = first.structuredContent!.nextStartIndex;
  for (let i = 0; next !== undefined && i < 20; i++) {
    const part = await read(c, '/long', next);
    expect(part.structuredContent!.snapshot).toMatchObject({ id: first.structuredContent!.snapshot!.id, cached: true });
    parts.push(part.structuredContent!.content);
    next = part.structuredContent!.nextStartIndex;
  }
  expect(parts.length).toBeGreaterThan(3);
  expect(parts.join('')).toHaveLength(first.structuredContent!.totalLength);
  expect(site.countHits('/long')).toBe(1);
  // Asking for the start again is asking for the page as it is now.
  await read(c, '/long');
  expect(site.countHits('/long')).toBe(2);
});

it('keeps pages per session and per URL: the fragment shares, another query or another session fetches', async () => {
  const [a, b] = [await client(), await client()];
  await read(a, '/other?q=1');
  expect(errorCodeOf(await read(a, '/other?q=1#part-2', 10_000))).toBeUndefined();
  expect(site.hits.filter((hit) => hit.path === '/other')).toHaveLength(1);
  await read(a, '/other?q=2', 10_000);
  await read(b, '/other?q=1', 10_000);
  expect(site.hits.filter((hit) => hit.path === '/other').map((hit) => hit.query)).toEqual(['?q=1', '?q=2', '?q=1']);
});

it('serves later windows of a page that redirected without a request to either address', async () => {
  const c = await client();
  const first = await read(c, '/moved');
  expect(textOf(first)).toContain('Target, paragraph 0');
  const second = await read(c, '/moved', first.structuredContent!.nextStartIndex);
  expect(second.structuredContent!.snapshot!.cached).toBe(true);
  expect([site.countHits('/moved'), site.countHits('/target')]).toEqual([1, 1]);
});

it('keeps no failure: the call after it fetches, and the page it gets serves the next window', async () => {
  const c = await client();
  expect(errorCodeOf(await read(c, '/flaky'))).toBe('UPSTREAM_ERROR');
  const first = await read(c, '/flaky');
  expect(errorCodeOf(first)).toBeUndefined();
  await read(c, '/flaky', first.structuredContent!.nextStartIndex);
  expect(site.countHits('/flaky')).toBe(2);
});

it('holds its byte bound: the least recently read page goes first, and a page over a quarter of it is not kept', async () => {
  const c = await client();
  const sized = Array.from({ length: 10 }, (_, i) => `/sized?n=${i}`);
  for (const path of sized) await read(c, path);
  const length = (await read(c, sized[9], 1)).structuredContent!.totalLength;
  // Ten pages over the bound together, each under a quarter of it.
  expect(10 * 2 * length).toBeGreaterThan(1024 * 1024);
  expect(2 * length).toBeLessThan(256 * 1024);
  expect(site.countHits('/sized')).toBe(10);
  await read(c, sized[0], 1);
  expect(site.countHits('/sized')).toBe(11);

  const huge = await read(c, '/huge');
  expect(2 * huge.structuredContent!.totalLength).toBeGreaterThan(256 * 1024);
  const again = await read(c, '/huge', huge.structuredContent!.nextStartIndex);
  expect(site.countHits('/huge')).toBe(2);
  // Not kept, but still told apart from a changed page.
  expect(again.structuredContent!.snapshot).toMatchObject({ id: huge.structuredContent!.snapshot!.id, cached: false, changed: false });
});

it('fetches a page once for calls of a session that ask for it together', async () => {
  const c = await client();
  const calls = Array.from({ length: 4 }, (_, i) => read(c, '/together', i * 1000));
  if (!(await eventually(async () => (await inFlight(main)) === 4 && site.countHits('/together') >= 1))) throw new Error('the four calls were not all running');
  heldPages.together.release();
  const results = await Promise.all(calls);
  expect(results.map((result) => errorCodeOf(result))).toEqual([undefined, undefined, undefined, undefined]);
  expect(new Set(results.map((result) => result.structuredContent!.snapshot!.id)).size).toBe(1);
  expect(results.map((result) => result.structuredContent!.startIndex)).toEqual([0, 1000, 2000, 3000]);
  expect(site.countHits('/together')).toBe(1);
});

it('goes on with a shared fetch when one of its callers cancels, and cancels it when the last one does', async () => {
  const c = await client();
  const gone = new AbortController();
  const cancelled = read(c, '/cancelled', undefined, {}, gone.signal);
  const staying = read(c, '/cancelled', 500);
  if (!(await eventually(async () => (await inFlight(main)) === 2 && site.countHits('/cancelled') >= 1))) throw new Error('the two calls were not both running');
  gone.abort();
  await expect(cancelled).rejects.toThrow();
  heldPages.cancelled.release();
  const result = await staying;
  expect(errorCodeOf(result)).toBeUndefined();
  expect(result.structuredContent!.startIndex).toBe(500);
  expect(site.countHits('/cancelled')).toBe(1);

  const alone = new AbortController();
  const only = read(c, '/alone', undefined, {}, alone.signal);
  if (!(await eventually(() => site.countHits('/alone') >= 1))) throw new Error('the fetch did not reach the site');
  alone.abort();
  await expect(only).rejects.toThrow();
  expect(await eventually(() => heldPages.alone.closedEarly.length === 1)).toBe(true);
});

it('says so when a later window had to be fetched again and the page had changed meanwhile', async () => {
  const c = await client(expiring);
  const first = await read(c, '/changing');
  expect(first.structuredContent!.content).toContain('Version 1, paragraph 0');
  // The kept copy lives 1 ms: the next window is fetched again, and gets version 2.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const second = await read(c, '/changing', first.structuredContent!.nextStartIndex);
  expect(second.structuredContent!.content).toContain('Version 2');
  expect(second.structuredContent!.snapshot).toMatchObject({ cached: false, changed: true });
  expect(second.structuredContent!.snapshot!.id).not.toBe(first.structuredContent!.snapshot!.id);
  expect(textOf(second)).toContain('[The page changed since its earlier parts were read: it was fetched again and this part comes from the new version');

  const steady = await read(c, '/steady');
  await new Promise((resolve) => setTimeout(resolve, 5));
  const later = await read(c, '/steady', steady.structuredContent!.nextStartIndex);
  expect(later.structuredContent!.snapshot).toMatchObject({ id: steady.structuredContent!.snapshot!.id, cached: false, changed: false });
  expect(textOf(later)).not.toContain('The page changed');
});

it('spends no rate limit token on a later window read from the kept copy', async () => {
  const c = await client(limited);
  const first = await read(c, '/long?limited');
  expect(errorCodeOf(first)).toBeUndefined();
  const second = await read(c, '/long?limited', first.structuredContent!.nextStartIndex);
  expect(errorCodeOf(second)).toBeUndefined();
  // A page it does not keep takes a token, and there is none left for 10 minutes.
  expect(errorCodeOf(await read(c, '/steady?limited'))).toBe('BUSY');
});
