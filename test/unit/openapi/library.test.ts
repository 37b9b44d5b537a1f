import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import net from 'node:net';
import path from 'node:path';
import {
  createMetaTools,
  createToolFromOperation,
  DEFAULT_CONFIG,
  OpenAPIServer,
  StaticAuthProvider,
  validateConfig,
  type IAuthProvider,
} from '../../../workers/openapi';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';

const PETSTORE = path.join(__dirname, '..', '..', 'fixtures', 'openapi', 'petstore-3.0.yaml');

let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());

describe('validateConfig and DEFAULT_CONFIG', () => {
  test('apply spec 000 defaults', () => {
    expect(validateConfig({ apiBaseUrl: 'https://api.example.com' })).toMatchObject({
      specInputMethod: 'url', name: 'openapi-mcp-server', version: '1.0.0', transportType: 'stdio', httpPort: 3000, httpHost: '127.0.0.1', endpointPath: '/mcp', toolsMode: 'all', disableAbbreviation: false, debug: false,
    });
    expect(DEFAULT_CONFIG).toMatchObject({ httpPort: 3000, toolsMode: 'all' });
    expect(Object.isFrozen(DEFAULT_CONFIG)).toBe(true);
  });

  test('say that apiBaseUrl is required and that transportType must be stdio or http', () => {
    expect(() => validateConfig({})).toThrow(expect.objectContaining({ code: 'BAD_INPUT', message: expect.stringContaining('apiBaseUrl is required') }));
    expect(() => validateConfig({ apiBaseUrl: 'https://a.example', transportType: 'sse' })).toThrow(expect.objectContaining({ message: expect.stringContaining('transportType must be stdio or http') }));
    expect(() => validateConfig({ apiBaseUrl: 'https://a.example', authProvider: {} })).toThrow(/authProvider must implement/);
    expect(() => validateConfig({ apiBaseUrl: 'https://a.example', specCache: true })).toThrow(/specCache must be a directory path or false/);
  });

  test('take HTTP methods of includeOperations in any case, as the CLI does', () => {
    expect(validateConfig({ apiBaseUrl: 'https://a.example', includeOperations: ['get', 'Post'] }).includeOperations).toEqual(['GET', 'POST']);
    expect(() => validateConfig({ apiBaseUrl: 'https://a.example', includeOperations: ['fetch'] })).toThrow(/includeOperations\.0: .*expected one of "GET"/);
  });
});

describe('OpenAPIServer', () => {
  test('starts in process, lists and calls tools with an auth provider, reports stats and stops', async () => {
    const server = new OpenAPIServer({ apiBaseUrl: upstream.url, openApiSpec: PETSTORE, specCache: false, namespace: 'pets', authProvider: new StaticAuthProvider({ Authorization: 'Bearer good' }) });
    expect(() => server.getStats()).toThrow(/not started/);
    // A promise's failure, not a throw: `callTool(…).catch(…)` must reach its handler.
    const early = server.callTool('pets-lst-pets').catch((error: { code?: string }) => error.code);
    await expect(early).resolves.toBe('INTERNAL');
    await server.start();
    expect(server.getStats().tools).toEqual({ total: 8, endpointTools: 5, metaTools: 3 });
    expect(server.listTools().map((t) => t.name)).toContain('pets-lst-pets');
    const result = await server.callTool('pets-lst-pets', { limit: 1 });
    expect(upstream.requests.at(-1)!.headers.authorization).toBe('Bearer good');
    // The upstream echoes the provider's header: the result shows a marker (redact.ts).
    expect((result.structuredContent as { echo: { headers: Record<string, string> } }).echo.headers.authorization).toBe('[redacted: Authorization]');
    expect(await server.testConnection()).toBe(true);
    await server.stop();
  });

  test('start(transport) serves the tools on an MCP SDK transport, as the reference\'s start(transport) does, and stop() closes it', async () => {
    const server = new OpenAPIServer({ apiBaseUrl: upstream.url, openApiSpec: PETSTORE, specCache: false, name: 'pets-api', version: '2.0.0' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.start(serverSide);
    await expect(server.start(InMemoryTransport.createLinkedPair()[1])).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining('already serving') });
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(clientSide);
    expect(client.getServerVersion()).toMatchObject({ name: 'pets-api', version: '2.0.0' });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('lst-pets');
    const listed = await client.callTool({ name: 'lst-pets', arguments: { limit: 2 } });
    expect((listed.structuredContent as { echo: { url: string } }).echo.url).toBe('/pets?limit=2');
    const bad = await client.callTool({ name: 'lst-pets', arguments: { limit: 'two' } });
    expect(bad).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining("BAD_INPUT: invalid arguments: 'limit' must be integer") }] });
    await expect(client.callTool({ name: 'no-such-tool', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    const closed = new Promise<void>((resolve) => (client.onclose = resolve));
    await server.stop();
    await closed;
  });

  test('a stop() while start(transport) is loading wins: the start rejects, nothing stays open, and a later start works', async () => {
    const server = new OpenAPIServer({ apiBaseUrl: upstream.url, openApiSpec: PETSTORE, specCache: false });
    const starting = expect(server.start(InMemoryTransport.createLinkedPair()[1])).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
    const alsoStarting = expect(server.start()).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
    await server.stop();
    await starting;
    await alsoStarting;
    expect(() => server.listTools()).toThrow(/not started/);
    await Promise.all([server.start(), server.start()]);
    expect(server.listTools().length).toBe(8);
    await server.stop();
  });

  test('rejects start() without a transport when the config asks for one it cannot serve by itself; the defaults only load', async () => {
    const http = new OpenAPIServer({ apiBaseUrl: upstream.url, openApiSpec: PETSTORE, specCache: false, transportType: 'http', httpPort: 4567 });
    await expect(http.start()).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining('the config sets transportType, httpPort: pass the transport to serve') });
    await http.stop();
    const defaults = new OpenAPIServer({ ...DEFAULT_CONFIG, apiBaseUrl: upstream.url, openApiSpec: PETSTORE, specCache: false });
    await defaults.start();
    expect(defaults.listTools().length).toBe(8);
    await defaults.stop();
  });

  test('testConnection() answers before start(), with the configured auth, and false for an upstream that is down', async () => {
    const server = new OpenAPIServer({ apiBaseUrl: upstream.url, openApiSpec: '/not-loaded.yaml', authProvider: new StaticAuthProvider({ Authorization: 'Bearer early' }) });
    expect(await server.testConnection()).toBe(true);
    expect(upstream.requests.at(-1)!.headers.authorization).toBe('Bearer early');
    const closed = await new Promise<string>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(`http://127.0.0.1:${port}`));
      });
    });
    expect(await new OpenAPIServer({ apiBaseUrl: closed, openApiSpec: '/not-loaded.yaml' }).testConnection()).toBe(false);
  });

  test('rejects start() when the description cannot be loaded', async () => {
    const server = new OpenAPIServer({ apiBaseUrl: upstream.url, openApiSpec: '/missing.yaml', specCache: false });
    await expect(server.start()).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'OpenAPI spec file not found: /missing.yaml' });
  });
});

describe('an IAuthProvider\'s headers echoed by the upstream', () => {
  /** Hands out `Bearer rotating-token-<n>`, a new one after each 401. */
  class RotatingProvider implements IAuthProvider {
    issued = 0;
    constructor(readonly refuse: boolean) {}
    async getAuthHeaders(): Promise<Record<string, string>> {
      return { Authorization: `Bearer rotating-token-${this.issued}` };
    }
    async handleAuthError(): Promise<boolean> {
      if (this.refuse) throw new Error(`rotating-token-${this.issued} was refused`);
      this.issued += 1;
      return this.issued < 2;
    }
  }

  test('never reach a result: each token sent on the call, the retried one\'s too, is a marker', async () => {
    const provider = new RotatingProvider(false);
    // `/debug/401/…`: a 401 HTML page listing the request headers.
    const server = new OpenAPIServer({ apiBaseUrl: `${upstream.url}/debug/401`, openApiSpec: PETSTORE, specCache: false, authProvider: provider });
    await server.start();
    try {
      const before = upstream.requests.length;
      const result = await server.callTool('lst-pets', { limit: 1 });
      expect(upstream.requests.slice(before).map((r) => r.headers.authorization)).toEqual(['Bearer rotating-token-0', 'Bearer rotating-token-1']);
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result)).not.toMatch(/rotating-token/);
      expect(JSON.stringify(result)).toContain('[redacted: Authorization]');
      const echoed = new OpenAPIServer({ apiBaseUrl: upstream.url, openApiSpec: PETSTORE, specCache: false, authProvider: provider });
      await echoed.start();
      const ok = await echoed.callTool('lst-pets', { limit: 1 });
      await echoed.stop();
      expect((ok.structuredContent as { echo: { headers: Record<string, string> } }).echo.headers.authorization).toBe('[redacted: Authorization]');
      expect(JSON.stringify(ok)).not.toMatch(/rotating-token/);
    } finally {
      await server.stop();
    }
  });

  test('named in notCredentials, are shown as echoed; the others stay markers', async () => {
    const provider: IAuthProvider = {
      getAuthHeaders: async () => ({ 'X-Tenant': 'tenant-from-provider', Authorization: 'Bearer provider-token-1234' }),
      handleAuthError: async () => false,
    };
    const server = new OpenAPIServer({ apiBaseUrl: upstream.url, openApiSpec: PETSTORE, specCache: false, authProvider: provider, notCredentials: ['X-TENANT'] });
    await server.start();
    try {
      const result = await server.callTool('lst-pets', { limit: 1 });
      const headers = (result.structuredContent as { echo: { headers: Record<string, string> } }).echo.headers;
      expect(headers['x-tenant']).toBe('tenant-from-provider');
      expect(headers.authorization).toBe('[redacted: Authorization]');
    } finally {
      await server.stop();
    }
  });

  test('never reach an error a throwing handleAuthError raises', async () => {
    const server = new OpenAPIServer({ apiBaseUrl: `${upstream.url}/debug/401`, openApiSpec: PETSTORE, specCache: false, authProvider: new RotatingProvider(true) });
    await server.start();
    try {
      await expect(server.callTool('lst-pets', {})).rejects.toMatchObject({ code: 'UPSTREAM_ERROR', message: 'authentication error (HTTP 401): [redacted: Authorization] was refused' });
    } finally {
      await server.stop();
    }
  });
});

describe('createToolFromOperation and createMetaTools', () => {
  test('build one tool from an operation', () => {
    const tool = createToolFromOperation('/users/{id}', 'get', {
      operationId: 'getUserById',
      tags: ['users'],
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
    });
    expect(tool).toEqual({
      name: 'get-usr-by-id',
      description: 'Make a GET request to /users/{id}',
      inputSchema: { type: 'object', properties: { id: { type: 'string', minLength: 1, description: "(path parameter 'id')" } }, required: ['id'] },
      tags: ['users'],
      method: 'GET',
      resourceName: 'users',
      toolId: 'GET::users__---id',
    });
  });

  test('give the three meta-tools with object input schemas', () => {
    const tools = createMetaTools();
    expect(tools.map((t) => t.name)).toEqual(['list-api-endpoints', 'get-api-endpoint-schema', 'invoke-api-endpoint']);
    for (const tool of tools) expect(tool.inputSchema.type).toBe('object');
  });
});
