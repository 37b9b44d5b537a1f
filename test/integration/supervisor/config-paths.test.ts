import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { textOf } from '../../helpers/mcp';
import { bin, spawnBin } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';

// Paths as an operator writes them: `~/…` for the home directory, and paths in a config file
// relative to that file, whatever directory the server starts in (pm2 starts it in its own).

const PETSTORE = path.join(__dirname, '..', '..', 'fixtures', 'openapi', 'petstore-3.0.yaml');
let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());

/** The MCP SDK's stdio client on `command`, started in `cwd`. */
async function connect(command: string, args: string[], env: Record<string, string>, cwd: string): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin(command), ...args], env: { PATH: process.env.PATH ?? '', ...env }, cwd, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'config-paths-test', version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`${(error as Error).message}; stderr:\n${stderr.slice(-3000)}`);
  }
  return { client, stderr: () => stderr };
}

/** Every entry named `~` below `dir`: what a path with an unexpanded tilde created. */
function tildes(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((entry) => path.basename(entry) === '~');
}

describe('paths in a config file', () => {
  it('read ~/ as the home directory and the rest relative to the file, every path key alike, started from another directory', async () => {
    const root = tempDir('mcpvisor-paths-');
    const home = path.join(root, 'home');
    const conf = path.join(home, 'etc');
    const elsewhere = path.join(root, 'elsewhere');
    for (const dir of [conf, path.join(conf, 'workspace'), elsewhere]) mkdirSync(dir, { recursive: true });
    copyFileSync(PETSTORE, path.join(home, 'petstore.yaml'));
    writeFileSync(path.join(conf, 'workspace', 'marker.txt'), 'here');
    writeFileSync(
      path.join(conf, 'mcpvisor.yaml'),
      [
        'web: { enabled: false }',
        'shell: { enabled: true, sandbox: false, workspace: ./workspace }',
        'apis:',
        `  - { apiBaseUrl: '${upstream.url}', openApiSpec: ~/petstore.yaml, specInputMethod: file, specCache: ~/cache, namespace: pets }`,
      ].join('\n'),
    );
    // The config file's own path too: pm2's env and systemd's Environment= do not expand `~`.
    const { client, stderr } = await connect('mcpvisor', [], { HOME: home, MCPVISOR_CONFIG: '~/etc/mcpvisor.yaml' }, elsewhere);
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['pets-list-api-endpoints', 'exec', 'listDir']));
      const listing = textOf(await client.callTool({ name: 'listDir', arguments: { path: '.' } }));
      expect(listing).toContain('marker.txt');
      expect(textOf(await client.callTool({ name: 'exec', arguments: { command: 'pwd' } }))).toContain(path.join(conf, 'workspace'));
      expect(readdirSync(path.join(home, 'cache')).some((entry) => entry.endsWith('.json'))).toBe(true);
    } catch (error) {
      throw new Error(`${(error as Error).message}; stderr:\n${stderr().slice(-3000)}`);
    } finally {
      await client.close();
    }
    expect(tildes(root)).toEqual([]);
  });

  it("refuses another user's ~name/, which Node cannot look up, naming the key and the file", async () => {
    const dir = tempDir('mcpvisor-paths-');
    const file = path.join(dir, 'mcpvisor.yaml');
    writeFileSync(file, 'web: { enabled: false }\nshell: { workspace: ~alice/work }\n');
    const server = spawnBin('mcpvisor', ['--config', file]);
    expect(await server.exited).toBe(2);
    expect(server.stderr()).toBe(`mcpvisor: shell.workspace in ${file}: '~alice' (another user's home directory) is not expanded; write the path out in full\n`);
    expect(existsSync(path.join(dir, '~alice'))).toBe(false);
  });
});

describe('paths given as flags and variables', () => {
  it('read ~/ as the home directory where no shell expanded it (--spec-cache=~/…, SHELL_WORKSPACE=~/…)', async () => {
    const home = tempDir('mcpvisor-home-');
    mkdirSync(path.join(home, 'work'));
    writeFileSync(path.join(home, 'work', 'marker.txt'), 'here');
    const api = await connect('openapi-mcp-server', ['--api-base-url', upstream.url, '--openapi-spec', PETSTORE, '--spec-cache=~/api-cache'], { HOME: home }, home);
    try {
      expect((await api.client.listTools()).tools.length).toBeGreaterThan(3);
    } finally {
      await api.client.close();
    }
    expect(readdirSync(path.join(home, 'api-cache')).length).toBeGreaterThan(0);
    const shell = await connect('shell-mcp-server', [], { HOME: home, SHELL_WORKSPACE: '~/work', SANDBOX_MODE: 'false' }, tempDir('mcpvisor-cwd-'));
    try {
      expect(textOf(await shell.client.callTool({ name: 'listDir', arguments: { path: '.' } }))).toContain('marker.txt');
    } finally {
      await shell.client.close();
    }
    expect(tildes(home)).toEqual([]);
  });
});
