import { execFile, spawn } from 'node:child_process';
import { bin, eventually, spawnBin, type Spawned } from '../../helpers/processes';
import { connectStdio } from '../../helpers/mcp';
import { connectHttp } from '../../helpers/mcp';
import { fixtureText, send, type LocalSite } from '../../fixtures/web/local-site';
import { startSerpSite } from '../../fixtures/web/serp-site';

let site: LocalSite;
let env: Record<string, string>;

beforeAll(async () => {
  site = await startSerpSite({ '/pages/article': send(fixtureText('article.html')) });
  env = { WEB_SEARCH_ENGINE_URL: `${site.origin}/router`, WEB_ALLOW_PRIVATE_NETWORK: 'true' };
});

afterAll(() => site.close());

/** Polls a condition every 20 ms, for at most 15 s. */
async function waitFor(check: () => boolean): Promise<void> {
  if (!(await eventually(check, 15_000))) throw new Error('condition not met within 15 s');
}

/** Runs `web-search` to the end, feeding `input` on stdin. */
function run(args: string[], extraEnv: Record<string, string> = {}, input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin('web-search'), ...args], { env: { ...process.env, ...extraEnv }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe('web-search', () => {
  it('prints its usage with --help and exits 0, and 2 without a command', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/web-search search <query>[\s\S]*web-search mcp-http/);
    // The address mcp-http binds (README, Web search and fetch): it said localhost:3001.
    expect(help.stdout).toContain('MCP server over HTTP (default 127.0.0.1:3001; --host, --port)');
    expect(help.stdout).not.toContain('localhost');
    expect((await run([])).code).toBe(2);
    expect((await run(['version'])).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it.each([
    ['web-search-mcp', ['--help']],
    ['web-search', ['mcp', '--help']],
    ['web-search', ['mcp-http', '--help']],
  ])("%s %j names the profile's HTTP defaults, 127.0.0.1 and port 3001", async (command, args) => {
    const help = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, [bin(command), ...args], (error, stdout) => (error ? reject(error) : resolve(stdout)));
    });
    expect(help).toMatch(/^ {2}--host ADDRESS +HTTP bind address \(default 127\.0\.0\.1\)$/m);
    expect(help).toMatch(/^ {2}--port PORT +HTTP port \(default 3001; 0 picks a free one\)$/m);
    expect(help).not.toContain('localhost');
  });

  it('web-search-mcp --help names each of its variables once', async () => {
    const help = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, [bin('web-search-mcp'), '--help'], (error, stdout) => (error ? reject(error) : resolve(stdout)));
    });
    for (const name of ['WEB_SEARCH_ENGINE', 'WEB_SEARCH_HEADLESS', 'WEB_FETCH_THREADS', 'CHROMIUM_PATH', 'PUPPETEER_EXECUTABLE_PATH', 'MCPVISOR_AUTH_TOKEN']) {
      expect([name, help.match(new RegExp(`\\b${name}\\b`, 'g'))?.length]).toEqual([name, 1]);
    }
  });

  it('refuses an unknown command with a suggestion', async () => {
    const result = await run(['fecth', 'x']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("web-search: unknown command 'fecth' (did you mean 'fetch'?); see web-search --help\n");
  });

  it('fetch prints the page as Markdown with its metadata, or JSON with --json', async () => {
    const text = await run(['fetch', `${site.origin}/pages/article`], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Title: Token buckets explained\n/);
    expect(text.stdout).toContain('## Comparison table');
    const json = await run(['fetch', '--json', `${site.origin}/pages/article`], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ success: true, data: { metadata: { author: 'Ada Example' } } });
  });

  it('fetch exits 1 with the reason when the SSRF guard refuses', async () => {
    const result = await run(['fetch', `${site.origin}/pages/article`], { WEB_ALLOW_PRIVATE_NETWORK: 'false' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^web-search: 127\.0\.0\.1:\d+ is a private, loopback, link-local or metadata address; refused/);
  });

  it('search prints the results through Chromium', async () => {
    const result = await run(['search', 'foo', 'bar'], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Found 10 results for "foo bar" \(duckduckgo\):\n\n1\. Foo Fighters - Wikipedia\n/);
    expect(site.hits.some((hit) => hit.query === '?q=foo%20bar')).toBe(true);
  });

  it.each([[[] as string[]], [['--json']]])('search %j exits 1 with the reason when the engine answers an HTTP error', async (flags) => {
    const result = await run(['search', ...flags, 'http-error'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the search engine failed: duckduckgo (HTTP 503)');
    expect(result.stdout).toBe(flags.length > 0 ? '[]\n' : '');
  });

  it('interactive runs every command and alias from a pipe', async () => {
    const input = ['help', 'h', 'version', 'v', 'clear', 'cls', `fetch ${site.origin}/pages/article`, `f ${site.origin}/pages/article`, 'search foo', 's blocked-everywhere', 'bogus', 'exit', 'search never'].join('\n');
    const result = await run(['interactive'], env, `${input}\n`);
    expect(result.code).toBe(0);
    expect(result.stdout.match(/search <query>, s <query>/g)).toHaveLength(2);
    expect(result.stdout.match(/^\d+\.\d+\.\d+$/gm)).toHaveLength(2);
    expect(result.stdout.match(/\x1b\[2J/g)).toHaveLength(2);
    expect(result.stdout.match(/Title: Token buckets explained/g)).toHaveLength(2);
    expect(result.stdout).toContain('Found 10 results for "foo"');
    expect(result.stderr).toContain('the search engine blocked the search');
    expect(result.stdout).toContain("unknown command 'bogus'");
    expect(site.hits.some((hit) => hit.query === '?q=never')).toBe(false);
  });

  it.each(['quit', 'q'])('interactive leaves on %s', async (word) => {
    const result = await run(['interactive'], env, `${word}\nversion\n`);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(/^\d+\.\d+\.\d+$/m);
  });

  it('interactive mcp hands the pipe over to an MCP server over stdio', async () => {
    const server = spawnBin('web-search', ['interactive']);
    try {
      let stdout = '';
      server.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      server.child.stdin!.write('mcp\n');
      await waitFor(() => server.stderr().includes('switching to the MCP server over stdio'));
      const send = (message: object) => server.child.stdin!.write(`${JSON.stringify(message)}\n`);
      const answer = async (id: number) => {
        await waitFor(() => stdout.split('\n').some((line) => line.includes(`"id":${id}`)));
        return JSON.parse(stdout.split('\n').find((line) => line.includes(`"id":${id}`))!);
      };
      send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
      expect((await answer(1)).result.serverInfo).toBeDefined();
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      expect((await answer(2)).result.tools.map((tool: { name: string }) => tool.name).sort()).toEqual(['fetch_web_content', 'search']);
      // stdout carried JSON-RPC only.
      for (const line of stdout.split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
    } finally {
      await server.stop();
    }
  });

  it('interactive mcp-http starts the HTTP server', async () => {
    const server = spawnBin('web-search', ['interactive'], { MCPVISOR_HOST: '127.0.0.1', MCPVISOR_PORT: '0' });
    server.child.stdin!.write('mcp-http\n');
    await expectTwoToolsOverHttp(server);
  });

  it('mcp serves MCP over stdio', async () => {
    const connection = await connectStdio('web-search', ['mcp']);
    try {
      expect((await connection.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['fetch_web_content', 'search']);
    } finally {
      await connection.close();
    }
  });

  it('mcp-http serves MCP over HTTP', async () => {
    await expectTwoToolsOverHttp(spawnBin('web-search', ['mcp-http', '--host', '127.0.0.1', '--port', '0']));
  });
});

/** Waits for the server's `listening` line, lists its tools over HTTP (search and fetch), stops it. */
async function expectTwoToolsOverHttp(server: Spawned): Promise<void> {
  try {
    const entry = await server.waitForLog((line) => line.msg === 'listening');
    const { client } = await connectHttp(String(entry.url));
    expect((await client.listTools()).tools).toHaveLength(2);
    await client.close();
  } finally {
    await server.stop();
  }
}
