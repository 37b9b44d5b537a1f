import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { connectStdio, textOf } from '../../helpers/mcp';
import { descendants, tempCacheEnv } from '../../helpers/processes';

const TLS = path.join(__dirname, '..', '..', 'fixtures', 'tls');
const SPEC = path.join(__dirname, '..', '..', 'fixtures', 'openapi', 'petstore-3.0.yaml');

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer({ key: readFileSync(path.join(TLS, 'server.key')), cert: readFileSync(path.join(TLS, 'server.pem')) }, (req, res) => {
    if (req.url === '/petstore.yaml') return void res.end(readFileSync(SPEC));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: req.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** The variables a process was started with (its later changes to process.env do not show). */
function startEnv(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
}

describe('NODE_EXTRA_CA_CERTS and api workers (real binary, HTTPS upstream on 127.0.0.1)', () => {
  test('an API and a description URL whose certificate an extra CA signed are trusted; the worker started without reading the file', async () => {
    const conn = await connectStdio('openapi-mcp-server', ['--api-base-url', base, '--openapi-spec', `${base}/petstore.yaml`], { ...tempCacheEnv(), NODE_EXTRA_CA_CERTS: path.join(TLS, 'ca.pem') });
    try {
      const result = await conn.client.callTool({ name: 'show-pet-by-id', arguments: { petId: 'p1' } });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toContain('/pets/p1');
      const workers = descendants(conn.pid()!);
      expect(workers.length).toBeGreaterThan(0);
      for (const pid of workers) expect(startEnv(pid).filter((entry) => entry.startsWith('NODE_EXTRA_CA_CERTS='))).toEqual([]);
    } finally {
      await conn.close();
    }
  });

  test('without it, the same API is refused for its certificate (the CA is trusted through the variable only)', async () => {
    const conn = await connectStdio('openapi-mcp-server', ['--api-base-url', base, '--openapi-spec', SPEC], { ...tempCacheEnv(), NODE_EXTRA_CA_CERTS: '' });
    try {
      const result = await conn.client.callTool({ name: 'show-pet-by-id', arguments: { petId: 'p1' } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|certificate/i);
    } finally {
      await conn.close();
    }
  });
});
