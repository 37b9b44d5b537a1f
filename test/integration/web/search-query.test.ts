import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { errorCodeOf } from '../../../protocol/results';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { bin } from '../../helpers/processes';
import { execFile } from 'node:child_process';
import { SERP_FIXTURES, startSite, type LocalSite } from '../../fixtures/web/local-site';

// Queries as a model writes them, through the built web-search-mcp and real Chromium, to a local
// engine that records the query it was asked (the `q` parameter as the server decodes it).

type ToolResult = { content: unknown; isError?: boolean; structuredContent?: Record<string, unknown>; _meta?: Record<string, unknown> };

let site: LocalSite;
let server: StdioConnection;
let dir: string;
/** Decoded `q` of each request, by engine path. */
const asked: Array<{ engine: string; q: string | null }> = [];

beforeAll(async () => {
  const ddg = readFileSync(path.join(SERP_FIXTURES, 'duckduckgo-2.html'));
  const bing = readFileSync(path.join(SERP_FIXTURES, 'bing-1.html'));
  site = await startSite({
    '/engine/html/': (_req, res, url) => {
      asked.push({ engine: 'duckduckgo', q: url.searchParams.get('q') });
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ddg);
    },
    '/engine/search': (_req, res, url) => {
      asked.push({ engine: 'bing', q: url.searchParams.get('q') });
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(bing);
    },
  });
  dir = mkdtempSync(path.join(tmpdir(), 'web-query-test-'));
  const config = path.join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({
    web: { search: { engineUrl: `${site.origin}/engine`, fallbackEngines: ['bing'], engineUrls: { bing: `${site.origin}/engine` }, rateLimit: 20, rateLimitIntervalMs: 1000, timeoutMs: 20_000 } },
  }));
  server = await connectStdio('web-search-mcp', ['--config', config]);
});

afterAll(async () => {
  await server?.close();
  await site?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const search = async (query: string) => (await server.client.callTool({ name: 'search', arguments: { query } })) as ToolResult;

/** The search, and the queries the engines were asked for it. */
async function searched(query: string): Promise<{ result: ToolResult; asked: typeof asked }> {
  const before = asked.length;
  const result = await search(query);
  return { result, asked: asked.slice(before) };
}

describe('the query reaches the engine as a search box would send it', () => {
  it.each([
    ['c++ templates'],
    ['C# & F#'],
    ['100% sure'],
    ['1+1=2 a?b=c/d#e'],
    ['"exact phrase" -excluded'],
    ['site:example.org intitle:"foo bar"'],
    ['日本語の検索 привет мир العربية'],
    ['emoji 🎉 party 👩‍👩‍👧'],
  ])('%j goes as it came', async (query) => {
    const { result, asked: got } = await searched(query);
    expect(result.isError).toBeFalsy();
    expect(got).toEqual([{ engine: 'duckduckgo', q: query }]);
    expect(textOf(result).split('\n')[0]).toBe(`Found 10 results for "${query}" (duckduckgo):`);
  });

  it.each([
    ['  leading and trailing  ', 'leading and trailing'],
    ['inner   spaces\tand a tab', 'inner spaces and a tab'],
    ['a question\nover two lines\r\n', 'a question over two lines'],
    ['nul\u0000byte', 'nul byte'],
    ['lone \ud800 surrogate', 'lone \ufffd surrogate'],
  ])('%j goes as one line: %j', async (query, sent) => {
    const { result, asked: got } = await searched(query);
    expect(result.isError).toBeFalsy();
    expect(got).toEqual([{ engine: 'duckduckgo', q: sent }]);
    expect(textOf(result).split('\n')[0]).toBe(`Found 10 results for "${sent}" (duckduckgo):`);
    expect(result.structuredContent?.query).toBe(sent);
  });

  it("skips an engine whose own limit the query passes and asks the next one, saying so", async () => {
    const query = `${'why does caffeine keep me awake '.repeat(25)}`.trim();
    expect(query.length).toBeGreaterThan(500);
    const { result, asked: got } = await searched(query);
    expect(got).toEqual([{ engine: 'bing', q: query }]);
    expect(result.structuredContent).toMatchObject({ engine: 'bing', failed: [{ engine: 'duckduckgo', reason: 'the query is longer than the 500 characters it takes' }] });
    // The first line repeats the query cut at 200 characters; it stays one readable line.
    expect(textOf(result).split('\n')[0]).toMatch(/^Found 10 results for "why does caffeine keep me awake .{150,}…" \(bing\):$/);
  });

  it.each([
    ['2,000 characters', 'a'.repeat(2_000), 2_000],
    // 1,100 code points (the tool schema's count) but 2,200 UTF-16 units: it was answered "No results", unsearched.
    ['1,100 emoji', '🎉'.repeat(1_100), 1_100],
  ])('refuses a query of %s that no engine of the chain takes with BAD_INPUT, before any page load', async (_name, query, chars) => {
    const { result, asked: got } = await searched(query);
    expect(got).toEqual([]);
    expect(errorCodeOf(result)).toBe('BAD_INPUT');
    expect(textOf(result)).toBe(`BAD_INPUT: the query has ${chars} characters; duckduckgo takes at most 500, bing takes at most 1000: shorten it`);
  });
});

describe('the answer a model reads', () => {
  it('numbers each result once, each URL on its own line once, and stays bounded', async () => {
    const { result } = await searched('does caffeine affect sleep');
    const text = textOf(result);
    const numbers = [...text.matchAll(/^(\d+)\. /gm)].map((match) => Number(match[1]));
    expect(numbers).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const urls = [...text.matchAll(/^ {3}URL: (\S+)$/gm)].map((match) => match[1]);
    expect(urls).toHaveLength(10);
    expect(new Set(urls).size).toBe(10);
    for (const url of urls) expect(url).toMatch(/^https:\/\/[^/]+\//);
    expect(text).not.toMatch(/duckduckgo\.com\/l\/|&amp;|&quot;|&#\d+;/);
    expect(text.length).toBeLessThan(10 * (300 + 600 + 200) + 200);
  });
});

describe('web-search search', () => {
  it('refuses a query longer than its engine takes, exit 1 with the limit on stderr, before any page load', async () => {
    const before = asked.length;
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [bin('web-search'), 'search', 'x'.repeat(600)], { env: { ...process.env, WEB_SEARCH_ENGINE_URL: `${site.origin}/engine` } }, (error, stdout, stderr) => {
        resolve({ code: error ? (error as { code?: number }).code ?? null : 0, stdout, stderr });
      });
    });
    expect(run).toEqual({ code: 1, stdout: '', stderr: 'web-search: the query has 600 characters; duckduckgo takes at most 500: shorten it\n' });
    expect(asked.slice(before)).toEqual([]);
  });
});
