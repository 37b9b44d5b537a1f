/** A stdio MCP client for lifecycle.ts: starts the server, puts calls in flight, prints `running`, then waits to be killed (SIGUSR2: close stdin and wait). */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

async function main(): Promise<void> {
  const [bin, config, engine] = process.argv.slice(2);
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, '--config', config, '--transport', 'stdio'], env: process.env as Record<string, string>, stderr: 'ignore' });
  const client = new Client({ name: 'lc-stdio', version: '1' });
  await client.connect(transport);
  process.stdout.write(`pid ${transport.pid}\n`);
  // The server gone (SIGTERM): so is this client.
  client.onclose = () => process.exit(0);
  const { tools } = await client.listTools();
  const slow = tools.find((t) => t.description?.includes('SOAK:slow'))!.name;
  const opts = { timeout: 600_000 };
  void client.callTool({ name: slow, arguments: { ms: 30_000 } }, undefined, opts).catch(() => {});
  void client.callTool({ name: 'exec', arguments: { command: "setsid sh -c 'sleep 301' & (sleep 302 &); nohup sleep 303 >/dev/null 2>&1 & sleep 300" } }, undefined, opts).catch(() => {});
  void client.callTool({ name: 'exec', arguments: { command: 'sleep 300' } }, undefined, opts).catch(() => {});
  if (engine) {
    void client.callTool({ name: 'search', arguments: { query: 'never' } }, undefined, opts).catch(() => {});
    void client.callTool({ name: 'fetch_web_content', arguments: { url: `${engine}/never` } }, undefined, opts).catch(() => {});
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  process.stdout.write('running\n');
  // Closing the transport closes the server's stdin (the SDK then SIGTERMs it after 2 s).
  process.on('SIGUSR2', () => void transport.close().then(() => process.exit(0)));
  setInterval(() => {}, 1000);
}

void main();
