/**
 * The floor of the supervisor + worker design on this machine, for bench/openapi/throughput.ts:
 * the least a two-process MCP relay can do per call. The parent answers JSON-RPC over HTTP
 * (initialize, and tools/call as plain JSON, no SDK, no validation, no limits) and hands each call
 * over IPC to a forked child, which sends one undici request upstream and returns the body. Not
 * a server anyone should run: a yardstick for how much of mcpvisor's cost is the design itself.
 * `node relay-floor.js <port> <upstream base URL>`; prints its port when listening.
 */
const http = require('node:http');
const { fork } = require('node:child_process');

if (process.argv[2] === 'child') {
  const { Agent, request } = require('undici');
  const dispatcher = new Agent({ connections: 64 });
  const base = process.argv[3];
  process.on('message', async ({ id, petId }) => {
    const res = await request(`${base}/pets/${encodeURIComponent(petId)}`, { dispatcher });
    const json = await res.body.json();
    process.send({ id, result: { content: [{ type: 'text', text: JSON.stringify(json, null, 2) }], structuredContent: json } });
  });
} else {
  const child = fork(__filename, ['child', process.argv[3]]);
  const pending = new Map();
  let next = 1;
  child.on('message', ({ id, result }) => {
    const done = pending.get(id);
    pending.delete(id);
    done(result);
  });
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const message = JSON.parse(body);
      const reply = (result) => {
        const text = JSON.stringify({ jsonrpc: '2.0', id: message.id, result });
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'floor', 'content-length': Buffer.byteLength(text) }).end(text);
      };
      if (message.id === undefined) return void res.writeHead(202).end();
      if (message.method === 'initialize') return reply({ protocolVersion: '2025-03-26', capabilities: { tools: {} }, serverInfo: { name: 'floor', version: '1' } });
      const id = next++;
      pending.set(id, reply);
      child.send({ id, petId: message.params.arguments.petId });
    });
  });
  server.listen(Number(process.argv[2]), '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
}
