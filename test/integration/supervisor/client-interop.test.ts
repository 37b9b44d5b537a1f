import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { browserFetch } from '../../helpers/browser-fetch';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, connectStdio, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { bin, eventually } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

/**
 * What clients people use send and need, beyond the SDK client's defaults: a browser page (the
 * MCP Inspector's Direct connection), 2025-11-25's task-augmented requests, null params, and a
 * stdio server started in / (Claude Desktop).
 */
const TOKEN = 'a-long-test-token-0123456789';
const LISTED = 'http://localhost:6274';
const AUTH = { authorization: `Bearer ${TOKEN}` };

describe('browser clients (CORS)', () => {
  let server: HttpServer;

  beforeAll(async () => {
    const config = fixtureConfig({ thread: false, root: { http: { allowedOrigins: [LISTED], authToken: TOKEN } } });
    server = await startHttp('mcpvisor', ['--config', writeConfig(config)]);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('serves the SDK client in a page of a listed origin over Streamable HTTP: preflights pass and the session id is readable', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), { fetch: browserFetch(LISTED), requestInit: { headers: AUTH } });
    const client = new Client({ name: 'browser', version: '1' });
    try {
      await client.connect(transport);
      expect(transport.sessionId).toEqual(expect.any(String));
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('echo');
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'from a page' } }))).toBe('from a page');
      // DELETE is preflighted too.
      await transport.terminateSession();
      expect(transport.sessionId).toBeUndefined();
    } finally {
      await transport.close();
    }
  });

  it('serves the SDK client in a page of a listed origin over legacy SSE', async () => {
    const transport = new SSEClientTransport(new URL('/sse', server.baseUrl), { fetch: browserFetch(LISTED), requestInit: { headers: AUTH } });
    const client = new Client({ name: 'browser-sse', version: '1' });
    try {
      await client.connect(transport);
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'over sse' } }))).toBe('over sse');
    } finally {
      // Its EventSource would otherwise retry a refused stream for ever.
      await transport.close();
    }
  });

  it('answers the preflight of a listed origin before the token check, and none of a local origin that is not listed', async () => {
    const preflight = await fetch(server.mcpUrl, {
      method: 'OPTIONS',
      headers: { origin: LISTED, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,mcp-protocol-version,mcp-session-id' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(LISTED);
    // A page without the token sees the 401, not a CORS failure.
    const noToken = new StreamableHTTPClientTransport(new URL(server.mcpUrl), { fetch: browserFetch(LISTED) });
    await expect(new Client({ name: 'no-token', version: '1' }).connect(noToken)).rejects.toThrow(/401|Unauthorized/);
    // Decision (cors.ts): a page on another local port gets no CORS answer, so it cannot drive the tools.
    const other = 'http://localhost:5173';
    const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), { fetch: browserFetch(other), requestInit: { headers: AUTH } });
    await expect(new Client({ name: 'other-page', version: '1' }).connect(transport)).rejects.toThrow(/CORS preflight of POST \/mcp refused/);
    const answer = await fetch(server.mcpUrl, { method: 'POST', headers: { origin: other, ...AUTH, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('task-augmented requests (MCP 2025-11-25) to a server that declares no tasks', () => {
  const config = () => writeConfig(fixtureConfig({ thread: false }));

  it('are processed as plain requests over Streamable HTTP, on the call path and the SDK path', async () => {
    const server = await startHttp('mcpvisor', ['--config', config()]);
    try {
      const { client } = await connectHttp(server.mcpUrl);
      expect(client.getServerCapabilities()?.tasks).toBeUndefined();
      const task = { task: { ttl: 60_000 } };
      const plain = await client.request({ method: 'tools/call', params: { name: 'echo', arguments: { text: 'as a task' } } }, CallToolResultSchema, task);
      expect(textOf(plain)).toBe('as a task');
      // Other _meta takes the SDK's path.
      const withMeta = await client.request({ method: 'tools/call', params: { name: 'echo', arguments: { text: 'meta' }, _meta: { 'com.example/trace': 'x' } } }, CallToolResultSchema, task);
      expect(textOf(withMeta)).toBe('meta');
      const list = await client.request({ method: 'tools/list', params: {} }, ListToolsResultSchema, task);
      expect(list.tools.map((tool) => tool.name)).toContain('echo');
      await client.close();
    } finally {
      await server.stop();
    }
  });

  it('are processed as plain requests over stdio', async () => {
    const connection = await connectStdio('mcpvisor', ['--config', config()]);
    try {
      const result = await connection.client.request({ method: 'tools/call', params: { name: 'echo', arguments: { text: 'stdio task' } } }, CallToolResultSchema, { task: { ttl: 1000 } });
      expect(textOf(result)).toBe('stdio task');
    } finally {
      await connection.close();
    }
  });
});

describe('params: null, which some clients send for "none" (Emacs\' mcp.el on tools/list)', () => {
  const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'mcp.el', version: '1' } } };
  const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const config = () => writeConfig(fixtureConfig({ thread: false }));

  it('is taken as no params over stdio: the list and the ping are answered, the notification is not', async () => {
    const child = spawn(process.execPath, [bin('mcpvisor'), '--config', config()], { stdio: ['pipe', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    const answers = () => stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { id: unknown; result?: { tools?: Array<{ name: string }> }; error?: unknown });
    for (const message of [INIT, { jsonrpc: '2.0', method: 'notifications/initialized', params: null }, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: null }, { jsonrpc: '2.0', id: 3, method: 'ping', params: null }]) {
      child.stdin.write(`${JSON.stringify(message)}\n`);
    }
    try {
      expect(await eventually(() => answers().length >= 3)).toBe(true);
      const byId = new Map(answers().map((answer) => [answer.id, answer]));
      expect(byId.get(2)?.result?.tools?.map((tool) => tool.name)).toContain('echo');
      expect(byId.get(3)).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
      // No error for the notification (id null) or anything else.
      expect(answers().filter((answer) => answer.error !== undefined)).toEqual([]);
    } finally {
      child.stdin.end();
      await new Promise((resolve) => child.on('exit', resolve));
    }
  });

  describe('over HTTP', () => {
    let server: HttpServer;

    beforeAll(async () => {
      server = await startHttp('mcpvisor', ['--config', config()]);
    });
    afterAll(async () => {
      await server.stop();
    });

    it('is taken as no params over Streamable HTTP', async () => {
      const init = await fetch(server.mcpUrl, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) });
      const session = { ...HEADERS, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
      await init.text();
      const list = await fetch(server.mcpUrl, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: null }) });
      expect(list.status).toBe(200);
      expect(((await list.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map((tool) => tool.name)).toContain('echo');
    });

    it('is taken as no params over legacy SSE', async () => {
      const controller = new AbortController();
      const stream = await fetch(`${server.baseUrl}/sse`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
      const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      const until = async (pattern: RegExp) => {
        while (!pattern.test(text)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`the stream ended before ${pattern}: ${text}`);
          text += value;
        }
        return pattern.exec(text)!;
      };
      try {
        const endpoint = (await until(/event: endpoint\ndata: (\S+)\n/))[1];
        const post = (message: unknown) => fetch(new URL(endpoint, server.baseUrl), { method: 'POST', headers: HEADERS, body: JSON.stringify(message) });
        expect((await post(INIT)).status).toBe(202);
        expect((await post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: null })).status).toBe(202);
        // `id` before or after `result`: the SDK's transport wrote it after, ours (as on Streamable HTTP) before.
        expect((await until(/data: (\{.*"id":2[,}].*)\n/))[1]).toContain('"name":"echo"');
      } finally {
        controller.abort();
      }
    });
  });
});

describe('shell-mcp-server started in / (Claude Desktop starts stdio servers there)', () => {
  /** The SDK client spawning the server as Claude Desktop does: cwd /, the SDK's default environment plus the server's `env`. */
  const fromRoot = (env: Record<string, string>) =>
    new StdioClientTransport({ command: process.execPath, args: [bin('shell-mcp-server')], cwd: '/', env: { ...getDefaultEnvironment(), ...env }, stderr: 'pipe' });

  it('stops at once naming SHELL_WORKSPACE when no workspace is set, and serves its tools once the client config sets it', async () => {
    const refused = fromRoot({});
    let stderr = '';
    refused.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await expect(new Client({ name: 'claude-desktop-like', version: '1' }).connect(refused)).rejects.toThrow();
    expect(stderr).toContain('SHELL_WORKSPACE (shell.workspace): the workspace is the current directory, /, as MCP clients such as Claude Desktop start servers there');

    const transport = fromRoot({ SHELL_WORKSPACE: tempDir('mcpvisor-ws-') });
    const client = new Client({ name: 'claude-desktop-like', version: '1' });
    try {
      await client.connect(transport);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('exec');
    } finally {
      await transport.close();
    }
  });
});
