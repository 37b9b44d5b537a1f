import { spawn } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { bin } from '../../helpers/processes';
import { send, startSite, type LocalSite } from '../../fixtures/web/local-site';

/**
 * Pages of ordinary size built to exhaust the converter's stack, which failed the whole fetch
 * (CONVERSION_FAILED, "Maximum call stack size exceeded"): in `web-search fetch`, which converts
 * on its main thread, and, four times as large (a fetch thread's stack is four times the main
 * thread's), in web-search-mcp. The unit tests of html-to-markdown and flatten-nesting hold more.
 * And JSON whose indentation grows with the square of its depth.
 */
const nestedLd = (depth: number) =>
  `<html><head><title>Nested metadata</title><script type="application/ld+json">${'['.repeat(depth)}${']'.repeat(depth)}</script></head><body><p>The text of the page.</p></body></html>`;
const PAGES: Record<string, string> = {
  // 10 KB and 100 KB: JSON-LD metadata nested 5,000 and 50,000 arrays deep.
  '/ld-json-5000': nestedLd(5_000),
  '/ld-json-50000': nestedLd(50_000),
  // 20 KB of JSON, arrays nested 10,000 deep: indented, 200,000,000 characters.
  '/deep.json': `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
  // 1.2 MB: a code block whose fence must be longer than 300,000 runs of backticks.
  '/backticks': `<html><body><pre><span>${'``` '.repeat(300_000)}</span></pre></body></html>`,
};

let site: LocalSite;
let server: HttpServer;
let client: Client;

beforeAll(async () => {
  site = await startSite(Object.fromEntries(Object.entries(PAGES).map(([route, body]) => [route, send(body, route.endsWith('.json') ? 'application/json' : undefined)])));
  server = await startHttp('web-search-mcp', ['--config', writeConfig({ web: { fetch: { allowPrivateNetwork: true, rateLimit: 100, rateLimitIntervalMs: 1000 } } })]);
  ({ client } = await connectHttp(server.mcpUrl));
});

afterAll(async () => {
  await client?.close();
  await server?.stop();
  await site.close();
});

/** `web-search fetch URL` run to its end. */
function cliFetch(route: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin('web-search'), 'fetch', `${site.origin}${route}`], { env: { ...process.env, WEB_ALLOW_PRIVATE_NETWORK: 'true' } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

it('web-search-mcp reads a page whose JSON-LD nests 50,000 arrays deep', async () => {
  const result = (await client.callTool({ name: 'fetch_web_content', arguments: { url: `${site.origin}/ld-json-50000` } })) as { isError?: boolean; content: unknown };
  expect(result.isError).toBeFalsy();
  expect(textOf(result)).toMatch(/^Title: Nested metadata\n[\s\S]*---\n\nThe text of the page\.$/);
});

it('web-search-mcp returns 20 KB of JSON nested 10,000 deep as it came, not indented into 200 MB', async () => {
  const result = (await client.callTool({ name: 'fetch_web_content', arguments: { url: `${site.origin}/deep.json`, max_length: 10 } })) as { isError?: boolean; structuredContent?: Record<string, unknown> };
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toMatchObject({ content: '['.repeat(10), totalLength: 20_000 });
});

it('web-search fetch reads a page whose JSON-LD nests 5,000 arrays deep', async () => {
  const result = await cliFetch('/ld-json-5000');
  expect(result.stderr).not.toContain('could not be converted');
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(/^Title: Nested metadata\n[\s\S]*The text of the page\.\n$/);
});

it('web-search fetch fences a code block holding 300,000 runs of backticks', async () => {
  const result = await cliFetch('/backticks');
  expect(result.stderr).not.toContain('could not be converted');
  expect(result.code).toBe(0);
  expect(result.stdout).toContain('````\n``` ``` ```');
});
