/**
 * The baseline of bench/sessions: a bare SDK McpServer with one echo tool over Streamable HTTP,
 * stateful like mcpvisor (one transport and one McpServer per session, kept in a Map), no worker
 * processes, no guards. Prints `{"port":N}` on stdout once listening on 127.0.0.1 (port 0).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const sessions = new Map<string, StreamableHTTPServerTransport>();

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        resolve(chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined);
      } catch (error) {
        reject(error);
      }
    });
  });
}

const server = createServer(async (req, res) => {
  try {
    if (req.url === '/health') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ sessions: sessions.size }));
      return;
    }
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const id = req.headers['mcp-session-id'] as string | undefined;
    let transport = id ? sessions.get(id) : undefined;
    if (!transport) {
      if (id || !isInitializeRequest(body)) {
        res.writeHead(id ? 404 : 400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no session' }, id: null }));
        return;
      }
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => void sessions.set(sid, created) });
      created.onclose = () => created.sessionId && sessions.delete(created.sessionId);
      const mcp = new McpServer({ name: 'baseline', version: '1.0.0' });
      mcp.registerTool('echo', { description: 'Returns its text', inputSchema: { text: z.string() } }, async ({ text }) => ({
        content: [{ type: 'text', text }],
        structuredContent: { text, pid: process.pid },
      }));
      await mcp.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, body);
  } catch (error) {
    if (!res.headersSent) res.writeHead(500).end(String(error));
  }
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
