import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { connectHttp, connectStdio, textOf } from '../../helpers/mcp';
import { logEntries, spawnBin, tempCacheEnv, type Spawned } from '../../helpers/processes';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';
import { OpenAPIServer } from '../../../workers/openapi';

// Command lines, client configs and library code written for @ivotoby/openapi-mcp-server (its
// README's examples), run as written against ours with only the binary changed.

const PETSTORE = path.join(__dirname, '..', '..', 'fixtures', 'openapi', 'petstore-3.0.yaml');
const ENV = tempCacheEnv();
const META = ['list-api-endpoints', 'get-api-endpoint-schema', 'invoke-api-endpoint'];

let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());

const running: Spawned[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop(1000)));
});

function spawn(args: string[], env: Record<string, string> = {}): Spawned {
  const server = spawnBin('openapi-mcp-server', args, { ...ENV, ...env });
  running.push(server);
  return server;
}

async function names(args: string[], env: Record<string, string> = {}): Promise<{ tools: string[]; server?: { name: string; version: string }; stderr: string }> {
  const conn = await connectStdio('openapi-mcp-server', args, { ...ENV, ...env });
  try {
    const tools = (await conn.client.listTools()).tools.map((tool) => tool.name);
    return { tools, server: conn.client.getServerVersion(), stderr: conn.stderr() };
  } finally {
    await conn.close();
  }
}

describe('a Claude Desktop config written for the reference (environment only)', () => {
  it('reads TOOLS_MODE, SERVER_NAME and SERVER_VERSION: TOOLS_MODE=dynamic was ignored and every operation served', async () => {
    const got = await names([], {
      API_BASE_URL: upstream.url,
      OPENAPI_SPEC_PATH: PETSTORE,
      API_HEADERS: 'Authorization:Bearer token123,X-API-Key:your-api-key',
      TOOLS_MODE: 'dynamic',
      SERVER_NAME: 'petstore',
      SERVER_VERSION: '2.1.0',
    });
    expect(got.tools).toEqual(META);
    expect(got.server).toMatchObject({ name: 'petstore', version: '2.1.0' });
  });

  it('reads DISABLE_ABBREVIATION, OPENAPI_SPEC_INLINE and VERBOSE', async () => {
    const got = await names([], { API_BASE_URL: upstream.url, OPENAPI_SPEC_INLINE: readFileSync(PETSTORE, 'utf8'), DISABLE_ABBREVIATION: 'true', TOOLS_MODE: 'All', VERBOSE: 'false' });
    expect(got.tools).toEqual(['list-pets', 'create-pets', 'show-pet-by-id', 'delete-pet', 'get-inventory', ...META]);
    expect(logEntries(got.stderr).filter((entry) => Number(entry.level) < 40)).toEqual([]);
  });

  it('serves HTTP from TRANSPORT_TYPE, HTTP_HOST, HTTP_PORT and ENDPOINT_PATH', async () => {
    const server = spawn([], { API_BASE_URL: upstream.url, OPENAPI_SPEC_PATH: PETSTORE, TRANSPORT_TYPE: 'http', HTTP_HOST: '127.0.0.1', HTTP_PORT: '0', ENDPOINT_PATH: '/rpc' });
    const url = String((await server.waitForLog((line) => line.msg === 'listening')).url);
    expect(new URL(url).pathname).toBe('/rpc');
    const { client } = await connectHttp(url);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('show-pet-by-id');
    } finally {
      await client.close();
    }
  });
});

describe("the reference's command-line flags", () => {
  it('runs its long example: short aliases, --exclude-tag, --name, --server-version, --disable-abbreviation true, --verbose false', async () => {
    const got = await names([
      '-u', upstream.url, '-s', PETSTORE, '-H', 'Authorization:Bearer token123,X-API-Key:your-api-key',
      '--exclude-tag', 'Store', '--name', 'my-mcp-server', '--server-version', '1.2.3', '--disable-abbreviation', 'true', '--verbose', 'false',
    ]);
    // `store` is the tag of get-inventory; the deny filter takes any case.
    expect(got.tools).toEqual(['list-pets', 'create-pets', 'show-pet-by-id', 'delete-pet', ...META]);
    expect(got.server).toMatchObject({ name: 'my-mcp-server', version: '1.2.3' });
    // --verbose false: warnings and errors only.
    expect(logEntries(got.stderr).filter((entry) => Number(entry.level) < 40)).toEqual([]);
  });

  it('sends the headers of every --headers given, where the last alone was kept and the others silently never sent', async () => {
    const conn = await connectStdio('openapi-mcp-server', ['--api-base-url', upstream.url, '--openapi-spec', PETSTORE, '--headers', 'X-One:first-value-1', '-H', 'X-Two:second-value-2,X-Three:third-value-3'], ENV);
    try {
      const before = upstream.requests.length;
      await conn.client.callTool({ name: 'get-inventory', arguments: {} });
      expect(upstream.requests.slice(before).map((request) => [request.headers['x-one'], request.headers['x-two'], request.headers['x-three']])).toEqual([['first-value-1', 'second-value-2', 'third-value-3']]);
    } finally {
      await conn.close();
    }
  });

  it('takes --include-tags and --include-operations more than once, where the last alone was kept', async () => {
    const got = await names(['--api-base-url', upstream.url, '--openapi-spec', PETSTORE, '--include-tags', 'pets', '--include-tags', 'store', '--include-operations', 'get', '--include-operations', 'delete']);
    expect(got.tools).toEqual(['lst-pets', 'show-pet-by-id', 'del-pet', 'get-inventory', ...META]);
  });

  it('keeps an excluded tag out of the meta-tools in dynamic mode: neither listed nor invoked', async () => {
    const conn = await connectStdio('openapi-mcp-server', ['--api-base-url', upstream.url, '--openapi-spec', PETSTORE, '--tools', 'dynamic', '--exclude-tag', 'store'], ENV);
    try {
      const listed = textOf(await conn.client.callTool({ name: 'list-api-endpoints', arguments: {} }));
      expect(listed).toContain('GET::pets');
      expect(listed).not.toContain('store');
      const before = upstream.requests.length;
      const invoked = (await conn.client.callTool({ name: 'invoke-api-endpoint', arguments: { toolId: 'GET::store__inventory', parameters: {} } })) as { isError?: boolean };
      expect(invoked.isError).toBe(true);
      expect(upstream.requests.length).toBe(before);
    } finally {
      await conn.close();
    }
  });

  it('warns for an --exclude-tag that matches no tag (a typo in a deny list)', async () => {
    const got = await names(['--api-base-url', upstream.url, '--openapi-spec', PETSTORE, '--exclude-tag', 'admn']);
    expect(got.tools).toContain('get-inventory');
    expect(logEntries(got.stderr).map((entry) => entry.msg)).toContain("excludeTags entry 'admn' matches no operation's tag");
  });

  it('matches --tool IDs with the method in any case, as its README writes them (GET::users, get::users)', async () => {
    const got = await names(['--api-base-url', upstream.url, '--openapi-spec', PETSTORE, '--tools', 'explicit', '--tool', 'get::pets', '--tool', 'POST::pets']);
    expect(got.tools).toEqual(['lst-pets', 'crt-pets']);
  });

  it('serves the --tool named in all mode whatever --tag says, warning that --tag was not applied (they combined to nothing)', async () => {
    const got = await names(['--api-base-url', upstream.url, '--openapi-spec', PETSTORE, '--tool', 'GET::pets', '--tag', 'store']);
    expect(got.tools).toEqual(['lst-pets', ...META]);
    expect(logEntries(got.stderr).map((entry) => entry.msg)).toContain('includeTools is given, so includeTags is not applied: the tools it names are served');
  });

  it('says which tag was meant when --tag differs only by case (tags are case-sensitive here, any case there)', async () => {
    const got = await names(['--api-base-url', upstream.url, '--openapi-spec', PETSTORE, '--tag', 'Pets']);
    expect(got.tools).toEqual(META);
    expect(logEntries(got.stderr).map((entry) => entry.msg)).toContain("no operations for tag 'Pets' (tags are case-sensitive: the description has 'pets')");
  });

  it('reads --spec-inline, and --spec-from-stdin over HTTP', async () => {
    const inline = await names(['--api-base-url', upstream.url, '--spec-inline', readFileSync(PETSTORE, 'utf8')]);
    expect(inline.tools).toContain('show-pet-by-id');
    // A YAML document that starts with `---`, which the parser took for a flag ("ambiguous").
    const marked = await names(['--api-base-url', upstream.url, '--spec-inline', `---\n${readFileSync(PETSTORE, 'utf8')}`]);
    expect(marked.tools).toContain('show-pet-by-id');

    const server = spawn(['--api-base-url', upstream.url, '--spec-from-stdin', '--transport', 'http', '--host', '127.0.0.1', '--port', '0']);
    server.child.stdin!.end(readFileSync(PETSTORE));
    const url = String((await server.waitForLog((line) => line.msg === 'listening')).url);
    const { client } = await connectHttp(url);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('show-pet-by-id');
    } finally {
      await client.close();
    }
  });

  it('refuses a description given two ways, naming both, and stdin over stdio, naming the flag', async () => {
    const twice = spawn(['--api-base-url', upstream.url, '--spec-inline', '{}'], { OPENAPI_SPEC_PATH: PETSTORE });
    expect(await twice.exited).toBe(2);
    expect(twice.stderr()).toContain('the OpenAPI description is given 2 ways (OPENAPI_SPEC_PATH, --spec-inline)');

    const stdin = spawn(['--api-base-url', upstream.url], { OPENAPI_SPEC_FROM_STDIN: 'true' });
    expect(await stdin.exited).toBe(2);
    expect(stdin.stderr()).toContain('OPENAPI_SPEC_FROM_STDIN needs --transport http: with stdio, standard input carries the MCP messages');
  });

  it('names the flag for an empty description: --spec-inline "$SPEC" with SPEC unset, and --spec-from-stdin with nothing piped', async () => {
    const empty = spawn(['--api-base-url', upstream.url, '--spec-inline', '']);
    expect(await empty.exited).toBe(2);
    expect(empty.stderr()).toContain('openapi-mcp-server: --spec-inline: the OpenAPI description given is empty\n');

    const nothing = spawn(['--api-base-url', upstream.url, '--spec-from-stdin', '--transport', 'http', '--port', '0']);
    nothing.child.stdin!.end();
    expect(await nothing.exited).toBe(2);
    expect(nothing.stderr()).toContain('standard input was empty: --spec-from-stdin reads the OpenAPI description from it until it closes');
  });
});

describe("the reference's library config", () => {
  it('reads inline content from inlineSpecContent beside an openApiSpec placeholder, and takes verbose', async () => {
    const server = new OpenAPIServer({ apiBaseUrl: upstream.url, openApiSpec: 'inline', specInputMethod: 'inline', inlineSpecContent: readFileSync(PETSTORE, 'utf8'), verbose: false, specCache: false });
    try {
      await server.start();
      expect((await server.listTools()).map((tool) => tool.name)).toContain('show-pet-by-id');
    } finally {
      await server.stop();
    }
    expect(() => new OpenAPIServer({ apiBaseUrl: upstream.url, openApiSpec: PETSTORE, specInputMethod: 'file', inlineSpecContent: '{}' })).toThrow(
      expect.objectContaining({ code: 'BAD_INPUT', message: "invalid configuration: inlineSpecContent is read with specInputMethod 'inline', not 'file'" }),
    );
  });

  it('names what to do instead for the keys it has no equivalent of (they were each "Unrecognized key")', () => {
    expect(() => new OpenAPIServer({ apiBaseUrl: upstream.url, openApiSpec: PETSTORE, extraTools: [], prompts: [], clientCertPath: './client.pem', colour: 'red' } as never)).toThrow(
      expect.objectContaining({
        code: 'BAD_INPUT',
        message:
          'invalid configuration: extraTools: not supported: serve hand-written tools as an mcpvisor customToolsets module; prompts: MCP prompts are not served (tools only); ' +
          'clientCertPath: mutual TLS is not supported (a private CA: NODE_EXTRA_CA_CERTS); unrecognized key(s): colour',
      }),
    );
  });
});

describe("the reference's library example with excludeTags", () => {
  it('leaves the tag out of the tools and the meta-tools', async () => {
    const server = new OpenAPIServer({ name: 'my-api-server', version: '1.0.0', apiBaseUrl: upstream.url, openApiSpec: PETSTORE, specInputMethod: 'file', toolsMode: 'all', excludeTags: ['store'], specCache: false });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.start(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      const tools = (await client.listTools()).tools.map((tool) => tool.name);
      expect(tools).not.toContain('get-inventory');
      expect(tools).toContain('show-pet-by-id');
      expect(server.getStats().filtering).toEqual({ applied: true, excludedTags: ['store'] });
    } finally {
      await client.close();
      await server.stop();
    }
  });
});
