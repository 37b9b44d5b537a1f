/**
 * The README's config file example and its worker module, as a newcomer copies them: the file
 * beside `./openapi.yaml` and `./my-worker.js`, `mcpvisor` installed as a dependency (a link to
 * this checkout, as `npm install <path>` makes), the built `mcpvisor` started on it. Only the
 * workspace, which names a directory of the README's machine, is moved into a temporary one.
 */
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { connectHttp, startHttp, textOf, type HttpServer } from '../helpers/mcp';
import { ROOT } from '../helpers/processes';
import { tempDir } from '../helpers/temp';

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The first fenced block of `language` after `after`. */
function block(language: string, after: string): string {
  const from = README.indexOf(after);
  const found = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(README.slice(from));
  if (from < 0 || !found) throw new Error(`README.md has no \`\`\`${language} block after '${after}'`);
  return found[1];
}

describe("the README's config file and worker module", () => {
  let server: HttpServer | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  it('start as written, and the worker answers its tool', async () => {
    const project = tempDir('readme-project-');
    const workspace = path.join(project, 'workspace');
    mkdirSync(workspace);
    mkdirSync(path.join(project, 'node_modules'));
    symlinkSync(ROOT, path.join(project, 'node_modules', 'mcpvisor'));
    const config = block('yaml', 'A config file, with every section optional');
    expect(config).toContain('workspace: /srv/assistant');
    writeFileSync(path.join(project, 'config.yaml'), config.replace('workspace: /srv/assistant', `workspace: ${workspace}`));
    copyFileSync(path.join(ROOT, 'test', 'fixtures', 'openapi', 'petstore-3.0.yaml'), path.join(project, 'openapi.yaml'));
    writeFileSync(path.join(project, 'my-worker.js'), block('js', 'A worker is a module that calls `runWorker(init)`'));

    // The README's port (3000) may be taken here; --port 0 overrides it, as flags override a file.
    server = await startHttp('mcpvisor', ['--config', path.join(project, 'config.yaml')], { XDG_CACHE_HOME: path.join(project, 'cache') });
    const { client } = await connectHttp(server.mcpUrl);
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['hello', 'exec', 'search', 'fetch_web_content', 'example-list-api-endpoints']));
      expect(textOf(await client.callTool({ name: 'hello', arguments: { who: 'README' } }))).toBe('hello README');
      const health = (await (await fetch(`${server.baseUrl}/health`)).json()) as { pools: Array<{ name: string; workers: number }> };
      expect(health.pools.map((pool) => [pool.name, pool.workers])).toEqual(expect.arrayContaining([['mine', 2], ['api-example', 1], ['web-fetch', 2]]));
    } finally {
      await client.close();
    }
  }, 60_000);
});
