#!/usr/bin/env node
import { createInterface } from 'node:readline';
import { loadConfig, type FlagSpec } from '../../config/load';
import { ConfigError, type Config } from '../../config/validate';
import { didYouMean } from '../../config/suggest';
import type { WorkerLogger } from '../../protocol/worker-runtime';
import type { FetchResult } from '../../workers/web/content';
import type { SearchOutcome } from '../../workers/web/web-searcher';
import type { WebContentFetcher } from '../../workers/web/web-content-fetcher';
import type { WebSearcher } from '../../workers/web/web-searcher';
import { packageVersion } from '../../protocol/version';
import { checkWebConfig, WEB_DEFAULTS, WEB_ENV, WEB_HELP, webSearchMcpProfile } from './web-profile';

const COMMANDS = ['search', 'fetch', 'interactive', 'mcp', 'mcp-http', 'help', 'version'];

const USAGE = `web-search ${packageVersion()}: search the web and fetch pages as Markdown

Usage:
  web-search search <query>     search the web and print the results
  web-search fetch <url>        fetch a page and print it as Markdown with its metadata
  web-search interactive        read commands from the terminal (type help)
  web-search mcp [options]      MCP server over stdio (same as web-search-mcp)
  web-search mcp-http [options] MCP server over HTTP (default 127.0.0.1:3001; --host, --port)

Options of search and fetch:
  --json           print JSON (the SearchResult array, or the FetchResult)
  --config FILE    configuration file (JSON or YAML)

${WEB_HELP}
`;

const INTERACTIVE_HELP = `Commands:
  search <query>, s <query>   search the web
  fetch <url>, f <url>        fetch a page as Markdown
  mcp                         become an MCP server over stdio
  mcp-http                    become an MCP server over HTTP (127.0.0.1:3001)
  help, h                     this help
  version, v                  print the version
  clear, cls                  clear the screen
  exit, quit, q               leave
`;

const LIBRARY_FLAGS: FlagSpec[] = [
  { name: 'config', kind: 'string', arg: 'FILE', help: 'configuration file' },
  { name: 'json', kind: 'flag', help: 'print JSON' },
  { name: 'help', kind: 'flag', help: 'print help' },
  { name: 'version', kind: 'flag', help: 'print the version' },
];

/** The library objects of one CLI run; the browser starts on the first search only. */
class Tools {
  #searcher: WebSearcher | undefined;
  #fetcher: WebContentFetcher | undefined;
  constructor(private readonly config: Config, private readonly log: WorkerLogger) {}

  get searcher(): WebSearcher {
    const search = this.config.web.search;
    // Loaded on use: puppeteer is not needed to fetch or to print help.
    const { WebSearcher } = require('../../workers/web/web-searcher') as typeof import('../../workers/web/web-searcher');
    this.#searcher ??= new WebSearcher(search.headless, {
      engine: search.engine,
      engineUrl: search.engineUrl,
      engineUrls: search.engineUrls,
      fallbackEngines: search.fallbackEngines,
      executablePath: search.executablePath,
      timeoutMs: search.timeoutMs,
      launchTimeoutMs: search.launchTimeoutMs,
      maxResults: search.maxResults,
      rateLimit: { limit: search.rateLimit, intervalMs: search.rateLimitIntervalMs },
      log: this.log,
    });
    return this.#searcher;
  }

  get fetcher(): WebContentFetcher {
    const fetch = this.config.web.fetch;
    const { WebContentFetcher } = require('../../workers/web/web-content-fetcher') as typeof import('../../workers/web/web-content-fetcher');
    this.#fetcher ??= new WebContentFetcher(fetch.rateLimit, fetch.rateLimitIntervalMs, {
      allowPrivateNetwork: fetch.allowPrivateNetwork,
      timeoutMs: fetch.timeoutMs,
      maxBodyBytes: fetch.maxBodyBytes,
      maxRedirects: fetch.maxRedirects,
    });
    return this.#fetcher;
  }

  close(): Promise<void> {
    return this.#searcher?.close() ?? Promise.resolve();
  }
}

/**
 * Prints a search. When no engine answered (blocked, or an HTTP error status) the reason goes to
 * stderr and the exit code is 1; with --json stdout still gets the (empty) array.
 */
async function runSearch(tools: Tools, query: string, json: boolean): Promise<number> {
  if (query.trim() === '') {
    process.stderr.write('web-search: search needs a query\n');
    return 2;
  }
  try {
    const outcome = await tools.searcher.searchDetailed(query);
    const { formatSearch } = require('../../workers/web/search-tool') as typeof import('../../workers/web/search-tool');
    const result = formatSearch(query.trim(), outcome as SearchOutcome);
    const text = result.content.map((item) => ('text' in item ? item.text : '')).join('\n');
    if (json) process.stdout.write(`${JSON.stringify(outcome.results, null, 2)}\n`);
    if (result.isError) process.stderr.write(`${text}\n`);
    else if (!json) process.stdout.write(`${text}\n`);
    return result.isError ? 1 : 0;
  } catch (error) {
    process.stderr.write(`web-search: ${(error as Error).message}\n`);
    return 1;
  }
}

/** Prints a page in full (no 10,000-character window on the command line). */
async function runFetch(tools: Tools, url: string, json: boolean): Promise<number> {
  if (url.trim() === '') {
    process.stderr.write('web-search: fetch needs a URL\n');
    return 2;
  }
  const result = await tools.fetcher.fetch(url.trim());
  if (json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return result.success ? 0 : 1;
  }
  if (!result.success) {
    process.stderr.write(`web-search: ${result.error}\n`);
    return 1;
  }
  const { formatFetchResult } = require('../../workers/web/fetch-tool') as typeof import('../../workers/web/fetch-tool');
  const formatted = formatFetchResult(result as FetchResult, 0, Number.MAX_SAFE_INTEGER);
  process.stdout.write(`${formatted.content.map((item) => ('text' in item ? item.text : '')).join('\n')}\n`);
  return 0;
}

/**
 * Reads commands line by line (a terminal or a pipe) and runs them one at a time. `mcp` and
 * `mcp-http` end the loop and hand the process over to the MCP server.
 */
async function runInteractive(tools: Tools): Promise<number | 'mcp' | 'mcp-http'> {
  const tty = process.stdin.isTTY === true;
  // A prompt only on a terminal: piped output stays clean for the program reading it.
  const rl = createInterface({ input: process.stdin, output: tty ? process.stdout : undefined, terminal: tty, prompt: 'web-search> ' });
  const prompt = () => tty && rl.prompt();
  if (tty) process.stdout.write(`web-search ${packageVersion()} interactive mode; type help for commands\n`);
  prompt();
  try {
    for await (const raw of rl) {
      const line = raw.trim();
      const space = line.search(/\s/);
      const word = (space < 0 ? line : line.slice(0, space)).toLowerCase();
      const rest = space < 0 ? '' : line.slice(space + 1).trim();
      switch (word) {
        case '':
          break;
        case 'search':
        case 's':
          await runSearch(tools, rest, false);
          break;
        case 'fetch':
        case 'f':
          await runFetch(tools, rest, false);
          break;
        case 'help':
        case 'h':
          process.stdout.write(INTERACTIVE_HELP);
          break;
        case 'version':
        case 'v':
          process.stdout.write(`${packageVersion()}\n`);
          break;
        case 'clear':
        case 'cls':
          process.stdout.write('\x1b[2J\x1b[H');
          break;
        case 'exit':
        case 'quit':
        case 'q':
          return 0;
        case 'mcp':
        case 'mcp-http':
          return word;
        default:
          process.stdout.write(`unknown command '${word}'${didYouMean(word, ['search', 'fetch', 'help', 'version', 'clear', 'exit', 'quit', 'mcp', 'mcp-http'])}; type help\n`);
      }
      prompt();
    }
    return 0;
  } finally {
    rl.close();
  }
}

function stderrLog(debug: boolean): WorkerLogger {
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) =>
    process.stderr.write(`web-search: ${level}: ${msg}${fields ? ` ${JSON.stringify(fields)}` : ''}\n`);
  return { debug: debug ? at('debug') : () => {}, info: debug ? at('info') : () => {}, warn: at('warn'), error: at('error') };
}

function serve(transport: 'stdio' | 'http', args: string[]): Promise<void> {
  const command = transport === 'http' ? 'web-search mcp-http' : 'web-search mcp';
  const { runProfile } = require('../profile') as typeof import('../profile');
  return runProfile({ ...webSearchMcpProfile(), command }, ['--transport', transport, ...args]);
}

async function main(argv: string[]): Promise<number | undefined> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === 'version' || command === '--version' || command === '-v') {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  if (command === 'mcp') return void (await serve('stdio', rest));
  if (command === 'mcp-http') return void (await serve('http', rest));
  if (command !== 'search' && command !== 'fetch' && command !== 'interactive') {
    process.stderr.write(`web-search: unknown command '${command}'${didYouMean(command, COMMANDS)}; see web-search --help\n`);
    return 2;
  }
  let config: Config;
  let positionals: string[];
  let json: boolean;
  try {
    const loaded = loadConfig({ argv: rest, env: process.env, flags: LIBRARY_FLAGS, envVars: WEB_ENV, allowPositionals: true, defaults: WEB_DEFAULTS });
    if (loaded.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    config = checkWebConfig(loaded.config, loaded.origins);
    positionals = loaded.positionals;
    json = rest.includes('--json');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`web-search: ${error.message}\n`);
    return 2;
  }
  const tools = new Tools(config, stderrLog(config.debug));
  try {
    if (command === 'search') return await runSearch(tools, positionals.join(' '), json);
    if (command === 'fetch') return await runFetch(tools, positionals.join(' '), json);
    const outcome = await runInteractive(tools);
    if (typeof outcome === 'number') return outcome;
    await tools.close();
    const transport = outcome === 'mcp-http' ? 'http' : 'stdio';
    process.stderr.write(`web-search: switching to the MCP server over ${transport}\n`);
    // readline paused stdin, and a paused stream ignores new 'data' listeners: resume it as soon
    // as the stdio transport listens, so no byte is read before someone takes it.
    const onListener = (event: string | symbol) => {
      if (event !== 'data') return;
      process.stdin.off('newListener', onListener);
      process.nextTick(() => process.stdin.resume());
    };
    process.stdin.on('newListener', onListener);
    return void (await serve(transport, []));
  } finally {
    await tools.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    // Exit at once: idle keep-alive sockets of the fetcher would otherwise hold the process.
    if (code !== undefined) process.stdout.write('', () => process.exit(code));
  },
  (error: unknown) => {
    process.stderr.write(`web-search: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
