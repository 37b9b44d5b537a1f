import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectHttp, connectSse, startHttp } from '../../helpers/mcp';
import { tempCacheEnv } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

/**
 * The tool list is held as text and written from it (preserialized.ts); the legacy transport now
 * writes its frames as the Streamable endpoint does (sse-frames.ts). Its memory is not asserted
 * here (memory is for benchmarks, not tests): listing 1,400 tools of 8 KB (~11.5 MB) three times
 * over legacy SSE grew the server's RSS by 46 MB with the SDK's JSON.stringify, ~9 MB now, as
 * over Streamable HTTP (9-24 MB).
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

/** The names listed, every page read three times. */
async function listed(spec: string, env: Record<string, string>, transport: 'sse' | 'streamable'): Promise<string[]> {
  const server = await startHttp('openapi-mcp-server', ['--api-base-url', 'http://127.0.0.1:9', '--openapi-spec', spec], env);
  try {
    const { client } = transport === 'sse' ? await connectSse(server.baseUrl) : await connectHttp(server.mcpUrl);
    // A first call warms what every transport loads alike.
    await client.listTools();
    let names: string[] = [];
    for (let round = 0; round < 3; round++) names = await listAll(client);
    await client.close();
    return names;
  } finally {
    await server.stop();
  }
}

describe('a large tool list over legacy SSE', () => {
  it('is listed whole and the same as over Streamable HTTP', async () => {
    const spec = largeDescription();
    const env = tempCacheEnv();
    const streamable = await listed(spec, env, 'streamable');
    const legacy = await listed(spec, env, 'sse');
    expect(legacy.filter((name) => name.startsWith('get-items-'))).toHaveLength(1400);
    expect(legacy).toEqual(streamable);
  }, 120_000);
});
