import { CallToolResultSchema, ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, connectStdio, startHttp, textOf } from '../../helpers/mcp';

/** What clients people use send and need, beyond the SDK client's defaults: 2025-11-25's task-augmented requests. */

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
