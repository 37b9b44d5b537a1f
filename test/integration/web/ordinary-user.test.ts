/**
 * web-search-mcp run as an ordinary user (nobody when the tests run as root): Chromium runs as
 * that user, its profile in a temporary directory that user can write.
 */
import { chmodSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { textOf } from '../../helpers/mcp';
import { connectStdioAsOrdinaryUser, ordinaryUserDir } from '../../helpers/ordinary-user';
import type { LocalSite } from '../../fixtures/web/local-site';
import { startSerpSite } from '../../fixtures/web/serp-site';

let site: LocalSite;
beforeAll(async () => {
  site = await startSerpSite();
});
afterAll(() => site.close());

describe('web-search-mcp as an ordinary user', () => {
  test('with a TMPDIR it cannot write, searches: the browser profile goes to /tmp (every launch failed with EACCES)', async () => {
    // Read-only to the user: root's, or its own with mode 0555. A short path: a long one sent the
    // profile to /tmp anyway (Chromium's socket path, profileRoot).
    const closedTmp = path.join(ordinaryUserDir('w-'), 't');
    mkdirSync(closedTmp);
    chmodSync(closedTmp, 0o555);
    const server = await connectStdioAsOrdinaryUser('web-search-mcp', { TMPDIR: closedTmp, WEB_SEARCH_ENGINE_URL: `${site.origin}/router`, WEB_ALLOW_PRIVATE_NETWORK: 'true' });
    try {
      const result = (await server.client.callTool({ name: 'search', arguments: { query: 'foo' } })) as { isError?: boolean };
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toMatch(/^Found \d+ results for "foo"/);
      expect(readdirSync(closedTmp)).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
