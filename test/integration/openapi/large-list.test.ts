import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { connectStdio, type StdioConnection } from '../../helpers/mcp';
import { tempCacheEnv } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

/**
 * A tool list larger than the 10 MiB the SDK client's stdio reader takes in one message (it then
 * closes the session): 1,400 operations with 8 KB descriptions, ~11.5 MB of descriptors.
 */
function largeDescription(): string {
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < 1400; i++) {
    paths[`/items${i}`] = { get: { operationId: `getItems${i}`, description: `Item list ${i}. ${'All about the items. '.repeat(400)}`, responses: { 200: { description: 'ok' } } } };
  }
  const file = path.join(tempDir('openapi-large-'), 'api.json');
  writeFileSync(file, JSON.stringify({ openapi: '3.0.3', info: { title: 'large', version: '1' }, paths }));
  return file;
}

const ENV = tempCacheEnv();

describe('a tool list larger than one message', () => {
  let conn: StdioConnection;
  beforeAll(async () => {
    conn = await connectStdio('openapi-mcp-server', ['--api-base-url', 'http://127.0.0.1:9', '--openapi-spec', largeDescription()], ENV);
  }, 60_000);
  afterAll(() => conn.close());

  test('is listed over stdio in pages the SDK client reads, every tool once; a bad cursor is -32602', async () => {
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await conn.client.listTools(cursor === undefined ? {} : { cursor });
      names.push(...page.tools.map((tool) => tool.name));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined && pages < 20);
    expect(pages).toBeGreaterThan(2);
    expect(names).toHaveLength(1403);
    expect(new Set(names).size).toBe(1403);
    expect(names).toEqual(expect.arrayContaining(['get-items-0', 'get-items-1399', 'list-api-endpoints']));
    const bad = await conn.client.listTools({ cursor: 'p999g1' }).catch((error: unknown) => error);
    expect(bad).toBeInstanceOf(McpError);
    expect((bad as McpError).code).toBe(ErrorCode.InvalidParams);
    // The session is still up.
    expect((await conn.client.listTools()).tools.length).toBeGreaterThan(0);
  });
});
