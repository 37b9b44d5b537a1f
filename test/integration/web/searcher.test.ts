import { execFile } from 'node:child_process';
import { WebSearcher } from '../../../workers/web/web-searcher';
import { getEngine } from '../../../workers/web/engines';
import { formatSearch } from '../../../workers/web/search-tool';
import { errorCodeOf } from '../../../protocol/results';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../helpers/processes';
import { SERP_FIXTURES, startSite, type LocalSite } from '../../fixtures/web/local-site';
import { startSerpSite } from '../../fixtures/web/serp-site';

// One browser for the whole file: every engine's page goes through the same Chromium.
let site: LocalSite;
let searcher: WebSearcher;

beforeAll(async () => {
  site = await startSerpSite();
  const base = (prefix: string) => `${site.origin}/${prefix}`;
  searcher = new WebSearcher(true, {
    engineUrl: base('ddg1'),
    engineUrls: { bing: base('bing1'), brave: base('brave1'), startpage: base('startpage1'), mojeek: base('mojeek1'), google: base('google1') },
    rateLimit: false,
    timeoutMs: 20_000,
    maxResults: 50,
    // The blocked engine below is logged; the test asserts it, the log would only be noise.
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  });
});

afterAll(async () => {
  await searcher.close();
  await site.close();
});

/** What the pure parser reads from the saved file, the reference for what came through Chromium. */
function expected(engine: string, file: string) {
  const outcome = getEngine(engine).parse(readFileSync(path.join(SERP_FIXTURES, file), 'utf8'), { status: 200, url: 'http://127.0.0.1/', maxResults: 50 });
  return outcome.kind === 'results' ? outcome.results.map(({ title, url }) => ({ title, url })) : [];
}

describe('WebSearcher through Chromium against saved result pages', () => {
  it.each([
    ['duckduckgo', 'duckduckgo-1.html', 9],
    ['bing', 'bing-1.html', 10],
    ['brave', 'brave-1.html', 19],
    ['google', 'google-1.html', 10],
  ])('%s: the results match %s', async (engine, file, count) => {
    const outcome = await searcher.searchDetailed('does caffeine affect sleep', engine === 'duckduckgo' ? {} : { engine });
    expect(outcome.blocked).toEqual([]);
    expect(outcome.engine).toBe(engine);
    expect(outcome.results).toHaveLength(count);
    expect(outcome.results.map(({ title, url }) => ({ title, url }))).toEqual(expected(engine, file));
  });

  it('requested the page where the engine asks for it, with the query', () => {
    expect(site.hits.find((hit) => hit.path === '/ddg1/html/')?.query).toBe('?q=does%20caffeine%20affect%20sleep');
  });

  it('loaded only the result documents: no subresources, no <meta refresh> navigation', () => {
    expect(site.countHits('/google1/')).toBe(1);
    // Chromium fetches the page's icon (/favicon.ico or its <link rel="icon">) itself, outside
    // the page's requests, and sometimes only after the search returned: not the page's loading.
    const others = site.hits.filter((hit) => !hit.path.endsWith('.ico') && !/^\/(ddg1\/html|bing1\/search|brave1\/search|google1\/search)\/?$/.test(hit.path));
    expect(others).toEqual([]);
  });

  it('reports a blocked engine instead of results', async () => {
    const outcome = await searcher.searchDetailed('x', { engine: 'mojeek' });
    expect(outcome.results).toEqual([]);
    expect(outcome.blocked).toEqual([{ engine: 'mojeek', reason: expect.stringMatching(/Mojeek/) }]);
  });

  it('reads a real empty page as no results, not as blocked', async () => {
    expect(await searcher.searchDetailed('nothing', { engine: 'startpage' })).toEqual({ results: [], engine: 'startpage', blocked: [], failed: [] });
  });

  it('finds results for a query with characters encodeURIComponent leaves raw, such as an apostrophe', async () => {
    const outcome = await searcher.searchDetailed("don't sleep (caffeine)! *~");
    expect(outcome).toMatchObject({ engine: 'duckduckgo', blocked: [] });
    expect(outcome.results).toHaveLength(9);
    expect(site.hits.some((hit) => hit.path === '/ddg1/html/' && hit.query.startsWith('?q=don%27t'))).toBe(true);
  });

  it('finds results through an engine base URL that Chromium rewrites (scheme case, a .. segment)', async () => {
    const other = new WebSearcher(true, { engineUrl: `HTTP://127.0.0.1:${site.port}/nowhere/../ddg1`, rateLimit: false, timeoutMs: 20_000 });
    try {
      expect(await other.search('does caffeine affect sleep')).toHaveLength(9);
    } finally {
      await other.close();
    }
  });

  it("refuses a redirect of the result page to another loopback host, and follows one on the engine's own host", async () => {
    // The victim stands for an intranet service: another port, so another host than the engine's.
    const victim = await startSite({ '/secret': (_req, res) => void res.end('<html><body>internal</body></html>') });
    const engine = await startSite({
      '/e/html/': (req, res, url) => {
        const to = url.searchParams.get('q') === 'away' ? `${victim.origin}/secret` : `/ddg1/html/?q=x`;
        res.writeHead(302, { location: to }).end();
      },
      '/ddg1/html/': (_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end(readFileSync(path.join(SERP_FIXTURES, 'duckduckgo-2.html'))),
    });
    const other = new WebSearcher(true, { engineUrl: `${engine.origin}/e`, rateLimit: false, timeoutMs: 20_000, log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} } });
    try {
      const refused = await other.searchDetailed('away');
      expect(refused.failed).toEqual([{ engine: 'duckduckgo', reason: expect.stringMatching(/redirected to http:\/\/127\.0\.0\.1:\d+\/secret, a private, loopback.*refused/) }]);
      expect(victim.hits).toEqual([]);
      expect((await other.search('home')).length).toBeGreaterThan(0);
    } finally {
      await other.close();
      await victim.close();
      await engine.close();
    }
  });

  it('answers an empty query with [] without loading a page', async () => {
    const before = site.hits.length;
    expect(await searcher.search('   ')).toEqual([]);
    expect(await searcher.search(undefined as unknown as string)).toEqual([]);
    // Longer than any engine takes: invalid, so [] at once too.
    expect(await searcher.search('q'.repeat(2049))).toEqual([]);
    expect(site.hits.length).toBe(before);
  });
});

describe('WebSearcher when an engine answers with an HTTP error status', () => {
  const warnings: Array<[string, Record<string, unknown> | undefined]> = [];
  let chain: WebSearcher;

  beforeAll(() => {
    chain = new WebSearcher(true, {
      engineUrl: `${site.origin}/router`,
      fallbackEngines: ['bing'],
      engineUrls: { bing: `${site.origin}/router` },
      rateLimit: false,
      timeoutMs: 20_000,
      log: { debug: () => {}, info: () => {}, warn: (msg, fields) => warnings.push([msg, fields]), error: () => {} },
    });
  });

  afterAll(() => chain.close());

  it('logs the failure and takes the next engine of the fallback chain', async () => {
    const outcome = await chain.searchDetailed('http-error');
    expect(outcome).toMatchObject({ engine: 'bing', blocked: [], failed: [{ engine: 'duckduckgo', reason: 'HTTP 503' }] });
    expect(outcome.results.length).toBeGreaterThan(0);
    expect(warnings).toContainEqual(['search engine failed', { engine: 'duckduckgo', reason: 'HTTP 503' }]);
  });

  it('reports every engine failing as failures, not as an empty result page', async () => {
    const outcome = await chain.searchDetailed('http-error-everywhere');
    expect(outcome).toEqual({ results: [], engine: 'bing', blocked: [], failed: [{ engine: 'duckduckgo', reason: 'HTTP 503' }, { engine: 'bing', reason: 'HTTP 500' }] });
    // Spec 001: the library's search() logs it and returns [].
    expect(await chain.search('http-error-everywhere')).toEqual([]);
  });
});

describe('WebSearcher when an engine cannot be reached', () => {
  it('takes the next engine of the chain, listing the one refused; the last one\'s failure is the search\'s', async () => {
    const closed = await startSite({});
    await closed.close();
    const chain = new WebSearcher(true, { engineUrl: `${closed.origin}/nowhere`, fallbackEngines: ['bing'], engineUrls: { bing: `${site.origin}/router` }, rateLimit: false, timeoutMs: 20_000 });
    const alone = new WebSearcher(true, { engineUrl: `${closed.origin}/nowhere`, rateLimit: false, timeoutMs: 20_000 });
    try {
      const outcome = await chain.searchDetailed('does caffeine affect sleep');
      expect(outcome).toMatchObject({ engine: 'bing', failed: [{ engine: 'duckduckgo', reason: 'net::ERR_CONNECTION_REFUSED' }] });
      expect(outcome.results.length).toBeGreaterThan(0);
      await expect(alone.searchDetailed('x')).rejects.toMatchObject({ code: 'NETWORK_ERROR' });
    } finally {
      await chain.close();
      await alone.close();
    }
  });

  it('when the last engine of the chain cannot be reached either, names every engine and its reason', async () => {
    const closed = await startSite({});
    await closed.close();
    // DuckDuckGo challenges `blocked…` queries; the Bing fallback refuses connections.
    const chain = new WebSearcher(true, { engineUrl: `${site.origin}/router`, fallbackEngines: ['bing'], engineUrls: { bing: `${closed.origin}/nowhere` }, rateLimit: false, timeoutMs: 20_000, log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} } });
    try {
      const outcome = await chain.searchDetailed('blocked then unreachable');
      expect(outcome).toEqual({
        results: [],
        engine: 'bing',
        blocked: [{ engine: 'duckduckgo', reason: expect.stringMatching(/DuckDuckGo/) }],
        failed: [{ engine: 'bing', reason: 'net::ERR_CONNECTION_REFUSED' }],
      });
      // The MCP tool's answer: UPSTREAM_ERROR naming both, not the last engine's network error alone.
      const answer = formatSearch('blocked then unreachable', outcome);
      expect(errorCodeOf(answer)).toBe('UPSTREAM_ERROR');
      expect((answer.content[0] as { text: string }).text).toMatch(/bing \(net::ERR_CONNECTION_REFUSED\), duckduckgo \(blocked: /);
    } finally {
      await chain.close();
    }
  });
});

describe('the library WebSearcher without a logger of its own', () => {
  it('logs a failed search as a pino warning on stderr, keeps stdout clean, and returns []', async () => {
    const closed = await startSite({});
    await closed.close();
    const library = path.join(ROOT, 'dist', 'workers', 'web', 'index.js');
    const script = `const { WebSearcher } = require(${JSON.stringify(library)});
      (async () => {
        const searcher = new WebSearcher(true, { engineUrl: ${JSON.stringify(closed.origin)}, rateLimit: false });
        const results = await searcher.search('caffeine');
        await searcher.close();
        process.stdout.write(JSON.stringify(results));
      })();`;
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      execFile(process.execPath, ['-e', script], (error, out, err) => (error ? reject(error) : resolve({ stdout: out, stderr: err })));
    });
    expect(stdout).toBe('[]');
    const lines = stderr.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
    expect(lines).toEqual([expect.objectContaining({ level: 40, name: 'mcpvisor-web', msg: 'search failed', error: expect.stringMatching(/ERR_CONNECTION_REFUSED/) })]);
  });
});
