import { errorCodeOf } from '../../../protocol/results';
import { COMMON_FLAGS, SCHEMA_HTTP_DEFAULTS } from '../../../supervisor/profile';
import { loadConfig } from '../../../config/load';
import { validateConfig } from '../../../config/validate';
import { checkWebConfig, webSearchMcpProfile } from '../../../supervisor/cli/web-profile';
import { webToolsets } from '../../../supervisor/toolsets/web';
import { createLogger } from '../../../supervisor/logger';

const load = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
  loadConfig({ argv, env, flags: [...COMMON_FLAGS, ...webSearchMcpProfile().flags], envVars: webSearchMcpProfile().envVars, defaults: webSearchMcpProfile().defaults }).config;

describe('the web-search-mcp profile', () => {
  it('serves stdio by default, HTTP on 127.0.0.1:3001 (localhost bound whichever family resolved first), with the shell toolset off', () => {
    const config = load([]);
    expect(config.transport).toBe('stdio');
    expect(config.http).toMatchObject({ host: '127.0.0.1', port: 3001 });
    expect(config.shell.enabled).toBe(false);
    expect(config.web.enabled).toBe(true);
    expect(load(['--transport', 'http', '--host', '0.0.0.0', '--port', '8080']).http).toMatchObject({ host: '0.0.0.0', port: 8080 });
  });

  it('--help of the other server profiles names the address the schema really defaults to', () => {
    const { http } = loadConfig({ argv: [], env: {}, flags: COMMON_FLAGS, envVars: [] }).config;
    expect({ host: http.host, port: http.port }).toEqual(SCHEMA_HTTP_DEFAULTS);
  });

  it('maps the web environment variables to config.web', () => {
    const config = load([], {
      WEB_SEARCH_ENGINE: 'bing',
      WEB_SEARCH_ENGINE_URL: 'http://127.0.0.1:9/x',
      WEB_ALLOW_PRIVATE_NETWORK: 'true',
      PUPPETEER_EXECUTABLE_PATH: '/opt/p',
      CHROMIUM_PATH: '/opt/c',
      WEB_SEARCH_FALLBACK_ENGINES: 'brave, startpage',
    });
    expect(config.web.search).toMatchObject({ engine: 'bing', engineUrl: 'http://127.0.0.1:9/x', executablePath: '/opt/c', fallbackEngines: ['brave', 'startpage'] });
    expect(config.web.fetch.allowPrivateNetwork).toBe(true);
    expect(load([], { PUPPETEER_EXECUTABLE_PATH: '/opt/p' }).web.search.executablePath).toBe('/opt/p');
  });

  it('takes a fractional rate limit in the config (0.5 per 1000 ms: one search per 2 s) and refuses zero', () => {
    expect(validateConfig({ web: { search: { rateLimit: 0.5, rateLimitIntervalMs: 1000 } } }).web.search.rateLimit).toBe(0.5);
    expect(() => validateConfig({ web: { fetch: { rateLimit: 0 } } })).toThrow(/web\.fetch\.rateLimit/);
  });

  it('names the variable of a bad value and the known engines for an unknown one', () => {
    expect(() => load([], { WEB_ALLOW_PRIVATE_NETWORK: 'maybe' })).toThrow("WEB_ALLOW_PRIVATE_NETWORK: expected true or false, got 'maybe'");
    expect(() => checkWebConfig(load([], { WEB_SEARCH_ENGINE: 'altavista' }))).toThrow(/unknown search engine 'altavista'; expected one of duckduckgo, bing, brave/);
  });
});

describe('the web toolset plan', () => {
  const logger = createLogger({ level: 'silent' });

  it('has a one-process browser pool and a thread pool of web.fetch.threads, web.fetch.concurrency calls each', () => {
    const [plan] = webToolsets(load([], { WEB_FETCH_THREADS: '3' }), logger);
    expect(plan.pools.map((pool) => [pool.name, pool.kind])).toEqual([['web-search', 'process'], ['web-fetch', 'thread']]);
    expect(plan.pools[0]).toMatchObject({ size: 1, concurrency: 4 });
    expect(plan.pools[1]).toMatchObject({ threads: 3, concurrency: 4 });
    expect(webToolsets(load([], { WEB_FETCH_CONCURRENCY: '1' }), logger)[0].pools[1]).toMatchObject({ concurrency: 1 });
    expect(plan.pools[0].module).toMatch(/workers[/\\]web[/\\]search-worker\.js$/);
  });

  it('contributes nothing when web is disabled', () => {
    const config = load([]);
    expect(webToolsets({ ...config, web: { ...config.web, enabled: false } }, logger)).toEqual([]);
  });

  it('makes calls wait for their token, spends none on an empty query, and stops waiting on abort', async () => {
    const config = load([]);
    // Page cache off: with it on, the fetch pool's pager takes the tokens (the test after next).
    const web = { ...config.web, fetch: { ...config.web.fetch, rateLimitIntervalMs: 60_000, cache: { ttlMs: 0, maxBytes: 0 } }, search: { ...config.web.search, rateLimitIntervalMs: 60_000 } };
    const [plan] = webToolsets({ ...config, web }, logger);
    const fetchHook = plan.pools[1].beforeCall!;
    const signal = new AbortController().signal;
    await fetchHook('fetch_web_content', { url: 'http://example.com/' }, signal);
    await fetchHook('fetch_web_content', { url: 'not a url' }, signal);
    const controller = new AbortController();
    const waiting = fetchHook('fetch_web_content', { url: 'http://example.com/' }, controller.signal);
    controller.abort(new Error('client went away'));
    await expect(waiting).rejects.toThrow('client went away');
    const searchHook = plan.pools[0].beforeCall!;
    await searchHook('search', { query: 'a' }, signal);
    await searchHook('search', { query: '' }, signal);
  });

  it('spends no fetch token on a URL that is not http(s), which the fetch refuses at once', async () => {
    const config = load([]);
    const [plan] = webToolsets({ ...config, web: { ...config.web, fetch: { ...config.web.fetch, rateLimit: 1, rateLimitIntervalMs: 60_000, cache: { ttlMs: 0, maxBytes: 0 } } } }, logger);
    const fetchHook = plan.pools[1].beforeCall!;
    const signal = new AbortController().signal;
    // Settled before setImmediate: no timer was involved (waiting for a token takes 60 s).
    const atOnce = (url: string) => Promise.race([fetchHook('fetch_web_content', { url }, signal).then(() => true), new Promise((resolve) => setImmediate(() => resolve(false)))]);
    for (const url of ['ftp://example.com/file', 'file:///etc/passwd', 'javascript:alert(1)', 'mailto:a@example.com']) expect(await atOnce(url)).toBe(true);
    // The bucket's one token is still there for an http call.
    expect(await atOnce('HTTPS://example.com/')).toBe(true);
  });

  it('with the page cache on (the default), takes fetch tokens in the pager: none for a URL that is not http(s), BUSY past the budget', async () => {
    const config = load([]);
    const [plan] = webToolsets({ ...config, web: { ...config.web, fetch: { ...config.web.fetch, rateLimit: 1, rateLimitIntervalMs: 60_000 } } }, logger);
    expect(plan.pools[1].beforeCall).toBeUndefined();
    const around = plan.pools[1].aroundCall!;
    const next = async () => ({ content: [{ type: 'text' as const, text: 'fetched' }] });
    const signal = new AbortController().signal;
    const run = (url: string) => around({ tool: 'fetch_web_content', arguments: { url } }, { signal, deadlineMs: 30_000, session: 's1' }, next);
    const atOnce = (url: string) => Promise.race([run(url).then(() => true), new Promise((resolve) => setImmediate(() => resolve(false)))]);
    for (const url of ['ftp://example.com/file', 'file:///etc/passwd', 'javascript:alert(1)', 'mailto:a@example.com']) expect(await atOnce(url)).toBe(true);
    expect(await atOnce('HTTPS://example.com/')).toBe(true);
    // The one token is spent; the next is 60 s away, past the call's 30 s.
    const busy = await run('https://example.com/other');
    expect(errorCodeOf(busy)).toBe('BUSY');
    expect((busy.content[0] as { text: string }).text).toMatch(/^BUSY \(tool fetch_web_content\): fetch_web_content is rate limited and busy/);
  });
});
