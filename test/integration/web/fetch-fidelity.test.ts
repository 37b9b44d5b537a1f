import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { fixtureText, send, startSite, type LocalSite } from '../../fixtures/web/local-site';

/**
 * The Markdown of realistic pages (test/fixtures/web/pages) through web-search-mcp's
 * fetch_web_content, read as a reader of each page in a browser would: the unit tests of
 * markdown-fidelity hold each element; here, that the built server's fetch threads write it so.
 */
let site: LocalSite;
let server: HttpServer;
let client: Client;

beforeAll(async () => {
  site = await startSite({
    '/wiki/Pythagorean_theorem': send(fixtureText('pages/wiki-article.html')),
    '/en/latest/config.html': send(fixtureText('pages/sphinx-docs.html')),
    '/2024/06/03/bike-lanes': send(fixtureText('pages/news-article.html')),
    '/questions/208105': send(fixtureText('pages/qa-thread.html')),
    '/jobq/enum.Status.html': send(fixtureText('pages/rustdoc-item.html')),
    '/tilemap/trait.Render.html': send(fixtureText('pages/rustdoc-trait.html')),
  });
  server = await startHttp('web-search-mcp', ['--config', writeConfig({ web: { fetch: { allowPrivateNetwork: true, rateLimit: 100, rateLimitIntervalMs: 1000 } } })]);
  ({ client } = await connectHttp(server.mcpUrl));
});

afterAll(async () => {
  await client?.close();
  await server?.stop();
  await site.close();
});

const fetchPage = async (path: string) => {
  const result = (await client.callTool({ name: 'fetch_web_content', arguments: { url: `${site.origin}${path}` } })) as { isError?: boolean; content: unknown };
  expect(result.isError).toBeFalsy();
  return textOf(result);
};

it('fetch_web_content keeps a Wikipedia article\'s section headings and math, and writes its infobox as one table', async () => {
  const text = await fetchPage('/wiki/Pythagorean_theorem');
  expect(text).toContain('\n## Proofs\n');
  expect(text).toContain('| Pythagorean theorem |  |\n| --- | --- |\n');
  expect(text).toContain('| Symbolic statement | $a^{2}+b^{2}=c^{2}$ |');
  expect(text).toContain('\n$$a^{2}+b^{2}=c^{2}.$$\n');
  expect(text).not.toMatch(/\[edit\]|#cite_note/);
});

it('fetch_web_content writes a Sphinx page\'s code with its language, without line numbers or permalinks', async () => {
  const text = await fetchPage('/en/latest/config.html');
  expect(text).toContain('\n# Configuration\n');
  expect(text).toContain('```python\nimport frob\ncfg = frob.load("frob.toml")\nprint(cfg.port)\n```');
  expect(text).not.toMatch(/¶|<br>1<br>/);
});

it('fetch_web_content gives a news article its headline once, without share links, ads or the newsletter box', async () => {
  const text = await fetchPage('/2024/06/03/bike-lanes');
  expect(text).toContain('\n# City council approves new bike lanes\n\nThe 12 km network');
  expect(text.split('\n---\n').slice(1).join('').match(/# City council approves/g)).toHaveLength(1);
  expect(text).not.toMatch(/Share on|Advertisement|morning briefing/);
});

it('fetch_web_content tells a Q&A thread\'s accepted answer from the others, each with its score', async () => {
  const text = await fetchPage('/questions/208105');
  expect(text).toContain('**Accepted answer**\n\nScore: 9845\n\nTo remove a property');
  expect(text).toContain('**Answer**\n\nScore: 1234\n\nUse destructuring');
  expect(text).not.toMatch(/Sorted by|Accept all cookies/);
});

it('fetch_web_content keeps a rustdoc page\'s examples and title, without its "Run code" and "Copy item path" controls', async () => {
  const text = await fetchPage('/jobq/enum.Status.html');
  expect(text).toContain('\n## Enum Status\n');
  expect(text).toContain('\n```\nStatus::Done(7);\n```\n');
  expect(text).not.toMatch(/Copy item path|Run code/);
});

it('fetch_web_content keeps a rustdoc page\'s section headings, impl lines and method signatures, and a trait\'s documentation', async () => {
  const item = await fetchPage('/jobq/enum.Status.html');
  expect(item).toContain('\n## Implementations\n\n### `impl<T> Status<T>`\n\n#### `pub const fn is_done(&self) -> bool`\n');
  expect(item).toContain('\n## Variants\n\n### `Done(T)`\n');
  const trait = await fetchPage('/tilemap/trait.Render.html');
  expect(trait).toContain('\n## Drawing order\n\nItems are drawn from the bottom layer');
  expect(trait).toContain('\n## Required Methods\n\n#### `fn draw(&self, canvas: &mut Canvas)`\n');
  expect(trait).toContain('\n## Implementors\n\n### `impl Render for Grid`\n');
  expect(trait).not.toMatch(/Expand description|\[Source\]/);
});
