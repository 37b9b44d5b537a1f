import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectHttp, connectSse, startHttp } from '../../helpers/mcp';
import { tempCacheEnv } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

/**
 * The tool list is held as text and written from it (preserialized.ts). The legacy transport
 * wrote its messages with the SDK's JSON.stringify, which parsed that text into objects the
 * server then kept: listing 1,400 tools of 8 KB (~11.5 MB) three times over legacy SSE grew the
 * server's RSS by 46 MB, over Streamable HTTP by 9-12 MB.
 */
function largeDescription(): string {
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < 1400; i++) {
    paths[`/items${i}`] = { get: { operationId: `getItems${i}`, description: `Item list ${i}. ${'All about the items. '.repeat(400)}`, responses: { 200: { description: 'ok' } } } };
  }
  const file = path.join(tempDir('legacy-list-'), 'api.json');
  writeFileSync(file, JSON.stringify({ openapi: '3.0.3', info: { title: 'large', version: '1' }, paths }));
  return file;
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function listAll(client: Client): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 20; pages++) {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    names.push(...page.tools.map((tool) => tool.name));
    cursor = page.nextCursor;
    if (cursor === undefined) break;
  }
  return names;
}

/** The server's growth in MB over listing every page three times, and the names listed. */
async function growth(spec: string, env: Record<string, string>, transport: 'sse' | 'streamable'): Promise<{ mb: number; names: string[] }> {
  const server = await startHttp('openapi-mcp-server', ['--api-base-url', 'http://127.0.0.1:9', '--openapi-spec', spec], env);
  try {
    const { client } = transport === 'sse' ? await connectSse(server.baseUrl) : await connectHttp(server.mcpUrl);
    // A first call warms what every transport loads alike.
    await client.listTools();
    const before = rssMb(server.server.child.pid!);
    let names: string[] = [];
    for (let round = 0; round < 3; round++) names = await listAll(client);
    const mb = rssMb(server.server.child.pid!) - before;
    await client.close();
    return { mb, names };
  } finally {
    await server.stop();
  }
}

describe('a large tool list over legacy SSE', () => {
  it('is listed whole, as over Streamable HTTP, without the server keeping a parsed copy of it', async () => {
    const spec = largeDescription();
    const env = tempCacheEnv();
    const streamable = await growth(spec, env, 'streamable');
    const legacy = await growth(spec, env, 'sse');
    expect(legacy.names.filter((name) => name.startsWith('get-items-'))).toHaveLength(1400);
    expect(legacy.names).toEqual(streamable.names);
    // Measured: before, 46 MB against 9-12 MB; now 9 MB against 9-24 MB.
    expect(legacy.mb).toBeLessThan(streamable.mb + 20);
  }, 120_000);
});
