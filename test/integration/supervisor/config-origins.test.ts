import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnBin } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

// A refused configuration names each value where the operator gave it: the flag, the environment
// variable, or the config file and its key; a missing one, the flags and variables that give it.

async function refused(command: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const server = spawnBin(command, args, env);
  expect(await server.exited).toBe(2);
  return server.stderr();
}

function configFile(text: string): string {
  const file = path.join(tempDir('mcpvisor-origins-'), 'mcpvisor.yaml');
  writeFileSync(file, text);
  return file;
}

describe('openapi-mcp-server', () => {
  it('names --api-base-url and API_BASE_URL for a missing base URL (it said apis.0.apiBaseUrl)', async () => {
    expect(await refused('openapi-mcp-server', ['--openapi-spec', 'x.yaml'])).toBe(
      'openapi-mcp-server: Invalid configuration:\n  - apis[0].apiBaseUrl: apiBaseUrl is required (missing); give it with --api-base-url or API_BASE_URL\n',
    );
  });

  it('names the flag or the variable a bad value came from', async () => {
    expect(await refused('openapi-mcp-server', ['--openapi-spec', 'x.yaml'], { API_BASE_URL: 'ftp://files.example' })).toBe(
      'openapi-mcp-server: Invalid configuration:\n  - API_BASE_URL (apis[0].apiBaseUrl): apiBaseUrl must be an http:// or https:// URL (got "ftp://files.example")\n',
    );
    // The command line wins over the environment, and is named.
    const both = await refused('openapi-mcp-server', ['--api-base-url', 'ftp://files.example', '--openapi-spec', 'x.yaml', '--tools', 'some', '--port', '70000'], { API_BASE_URL: 'https://ok.example' });
    expect(both).toContain('  - --api-base-url (apis[0].apiBaseUrl): apiBaseUrl must be an http:// or https:// URL (got "ftp://files.example")\n');
    expect(both).toContain('  - --tools (apis[0].toolsMode): Invalid option: expected one of "all"|"dynamic"|"explicit" (got "some")\n');
    expect(both).toContain('  - --port (http.port): Too big: expected number to be <=65535 (got 70000)\n');
    expect(await refused('openapi-mcp-server', ['--api-base-url', 'https://a.example', '--openapi-spec', 'x.yaml'], { MCPVISOR_TRANSPORT: 'tcp' })).toContain(
      '  - MCPVISOR_TRANSPORT (transport): transport must be stdio or http (got "tcp")\n',
    );
  });

  it("names the config file and its key, and the flags that could complete the file's API", async () => {
    const file = configFile('apis:\n  - { openApiSpec: ./x.yaml, toolsMode: some }\n');
    const stderr = await refused('openapi-mcp-server', ['--config', file]);
    expect(stderr).toContain(`  - apis[0].apiBaseUrl in ${file}: apiBaseUrl is required (missing); give it with --api-base-url or API_BASE_URL\n`);
    expect(stderr).toContain(`  - apis[0].toolsMode in ${file}: Invalid option`);
  });
});

describe('mcpvisor and the other server commands', () => {
  it("names a config file's keys with the file, an API's missing base URL too", async () => {
    const file = configFile('http: { port: 70000, prot: 1 }\napis:\n  - { apiBaseUrl: https://a.example }\n  - { openApiSpec: ./b.yaml }\n');
    expect(await refused('mcpvisor', ['--config', file])).toBe(
      [
        'mcpvisor: Invalid configuration:',
        `  - http.port in ${file}: Too big: expected number to be <=65535 (got 70000)`,
        `  - http.prot in ${file}: unknown key (did you mean 'port'?)`,
        `  - apis[1].apiBaseUrl in ${file}: apiBaseUrl is required (missing)`,
        '',
      ].join('\n'),
    );
  });

  it('names MCPVISOR_CONFIG when the file it names cannot be read', async () => {
    expect(await refused('mcpvisor', [], { MCPVISOR_CONFIG: '/nonexistent/mcpvisor.yaml' })).toBe('mcpvisor: MCPVISOR_CONFIG: cannot read config file /nonexistent/mcpvisor.yaml: ENOENT\n');
  });

  it("names a shell workspace from a config file as the file's key, not as SHELL_WORKSPACE", async () => {
    const file = configFile('shell: { workspace: /nonexistent/workspace }\n');
    expect(await refused('shell-mcp-server', ['--config', file])).toBe(`shell-mcp-server: shell.workspace in ${file}: /nonexistent/workspace does not exist\n`);
  });

  it("refuses mcpvisor's missing shell workspace at once naming the file's key (it started the other pools, then exited 1 naming SHELL_WORKSPACE, which mcpvisor does not read)", async () => {
    const file = configFile('web: { enabled: false }\nshell: { workspace: ./not-there }\n');
    expect(await refused('mcpvisor', ['--config', file])).toBe(`mcpvisor: shell.workspace in ${file}: ${path.join(path.dirname(file), 'not-there')} does not exist\n`);
  });

  it("refuses mcpvisor's shell workspace at the root in sandbox mode at once, as shell-mcp-server does (it started every pool, then exited 1; unset, in /: shell/startup.test.ts)", async () => {
    const file = configFile('shell: { workspace: / }\n');
    expect(await refused('mcpvisor', ['--config', file])).toBe(
      `mcpvisor: shell.workspace in ${file}: the workspace is /; sandbox mode confines commands to a directory below the root: point shell.workspace at another directory in a --config file (or set shell.enabled: false)\n`,
    );
  });

  it('names the variable or the key of an unknown search engine', async () => {
    expect(await refused('web-search-mcp', [], { WEB_SEARCH_ENGINE: 'altavista' })).toMatch(/^web-search-mcp: WEB_SEARCH_ENGINE \(web\.search\.engine\): unknown search engine 'altavista'; expected one of /);
    const file = configFile("web: { search: { fallbackEngines: [bing, 'lycos'] } }\n");
    expect(await refused('web-search-mcp', ['--config', file])).toMatch(new RegExp(`^web-search-mcp: web\\.search\\.fallbackEngines\\[1\\] in ${file}: unknown search engine 'lycos'`));
  });
});
