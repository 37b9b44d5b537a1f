// The web profile, shared by the `web-search-mcp` command and `web-search mcp` / `mcp-http`.
import type { EnvSpec } from '../../config/load';
import { ConfigError, type Config } from '../../config/validate';
import type { Origins } from '../../config/origins';
import { ENGINE_NAMES } from '../../workers/web/engines';
// Type only: the server modules load when a server starts, so `web-search search` starts fast.
import type { Profile } from '../profile';

/** Spec 001's variables, and a few of ours for the same section. */
export const WEB_ENV: EnvSpec[] = [
  { name: 'WEB_SEARCH_ENGINE', kind: 'string', path: 'web.search.engine' },
  { name: 'WEB_SEARCH_ENGINE_URL', kind: 'string', path: 'web.search.engineUrl' },
  { name: 'WEB_SEARCH_FALLBACK_ENGINES', kind: 'list', path: 'web.search.fallbackEngines' },
  { name: 'WEB_SEARCH_HEADLESS', kind: 'bool', path: 'web.search.headless' },
  { name: 'WEB_ALLOW_PRIVATE_NETWORK', kind: 'bool', path: 'web.fetch.allowPrivateNetwork' },
  { name: 'WEB_FETCH_THREADS', kind: 'int', path: 'web.fetch.threads' },
  { name: 'WEB_FETCH_CONCURRENCY', kind: 'int', path: 'web.fetch.concurrency' },
  // PUPPETEER_EXECUTABLE_PATH first so that CHROMIUM_PATH, applied later, wins when both are set.
  { name: 'PUPPETEER_EXECUTABLE_PATH', kind: 'string', path: 'web.search.executablePath' },
  { name: 'CHROMIUM_PATH', kind: 'string', path: 'web.search.executablePath' },
];

export const WEB_HELP = [
  'Environment:',
  `  WEB_SEARCH_ENGINE=NAME            search engine: ${ENGINE_NAMES.join(', ')} (default duckduckgo)`,
  '  WEB_SEARCH_ENGINE_URL=URL         base URL of the engine (a mirror, or a local server in tests)',
  '  WEB_SEARCH_FALLBACK_ENGINES=A,B   engines tried when one blocks, answers an HTTP error or cannot be reached',
  '  WEB_SEARCH_HEADLESS=true|false    false shows the browser so a person can solve a captcha (default true)',
  '  WEB_ALLOW_PRIVATE_NETWORK=true    let fetch_web_content reach loopback/private/link-local addresses (default false)',
  '  WEB_FETCH_THREADS=N               threads converting pages (default 2)',
  '  WEB_FETCH_CONCURRENCY=N           fetches each thread runs at once, overlapping network waits (default 4)',
  '  CHROMIUM_PATH=FILE                the browser (also PUPPETEER_EXECUTABLE_PATH; default /usr/bin/chromium)',
  '',
  'Limits: 1 search per 2 s and 1 fetch per second across all sessions (web.search.rateLimit*,',
  'web.fetch.rateLimit* in a config file); callers wait for their turn. fetch_web_content returns',
  '10,000 characters per call; start_index reads on.',
].join('\n');

/** Refuses an engine we cannot parse, naming the known ones and where the name was given. */
export function checkWebConfig(config: Config, origins?: Origins): Config {
  const { engine, fallbackEngines } = config.web.search;
  const named: Array<[string, PropertyKey[]]> = [[engine, ['web', 'search', 'engine']], ...fallbackEngines.map((name, i): [string, PropertyKey[]] => [name, ['web', 'search', 'fallbackEngines', i]])];
  for (const [name, key] of named) {
    if (!ENGINE_NAMES.includes(name.toLowerCase())) {
      throw new ConfigError(`${origins ? origins.name(key) : 'web.search.engine'}: unknown search engine '${name}'; expected one of ${ENGINE_NAMES.join(', ')}`);
    }
  }
  return config;
}

/**
 * Spec 001's HTTP address, localhost port 3001, bound as 127.0.0.1 as every other command binds:
 * `localhost` bound whichever address the resolver gave first (::1 on hosts that list it first),
 * so `http://127.0.0.1:3001` or a balancer's upstream worked on one machine and not on the next.
 * Clients that connect to `localhost` by name reach it (they try each address it resolves to).
 */
const WEB_HTTP = { host: '127.0.0.1', port: 3001 };

/** Profile defaults: stdio, HTTP on 127.0.0.1:3001 when asked, the shell toolset off. */
export const WEB_DEFAULTS: Profile['defaults'] = { name: 'web-search-mcp', transport: 'stdio', shell: { enabled: false }, http: { ...WEB_HTTP } };

/**
 * Spec 001's MCP server: the web toolset alone (`search`, `fetch_web_content`), stdio by default,
 * `--transport http` on 127.0.0.1:3001 unless `--host`/`--port` say otherwise.
 */
export function webSearchMcpProfile(): Profile {
  const { SERVER_ENV, serverFlags } = require('../profile') as typeof import('../profile');
  return {
    command: 'web-search-mcp',
    summary: 'MCP server with web search (Chromium) and web page fetching as Markdown',
    flags: serverFlags(WEB_HTTP),
    envVars: [...WEB_ENV, ...SERVER_ENV],
    envPrefix: 'MCPVISOR_',
    defaults: WEB_DEFAULTS,
    finalize: checkWebConfig,
    helpFooter: WEB_HELP,
  };
}

