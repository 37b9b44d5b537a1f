import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { connectStdio, textOf } from '../../helpers/mcp';
import { spawnBin, tempCacheEnv } from '../../helpers/processes';

// A private API that serves its own description behind the token its calls need
// (`GET /openapi.json` with `Authorization: Bearer …`), as many internal services do.

const PETSTORE = readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'openapi', 'petstore-3.0.yaml'), 'utf8');
const TOKEN = 'Bearer private-api-token-0123456789';
const KEY = 'key-0123456789abcdef';
const ENV = tempCacheEnv();

interface Site {
  url: string;
  seen: Array<{ path: string; headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
}

/** A server on 127.0.0.1 whose every path needs `Authorization: <TOKEN>` when `locked`, or redirects as `redirects` says. */
async function site(options: { locked: boolean; redirects?: Record<string, () => string> }): Promise<Site> {
  const seen: Site['seen'] = [];
  const server: Server = createServer((req, res) => {
    const asked = new URL(req.url ?? '/', 'http://x').pathname;
    seen.push({ path: asked, headers: req.headers });
    const redirect = options.redirects?.[asked];
    if (redirect) return res.writeHead(302, { location: redirect() }).end();
    if (options.locked && req.headers.authorization !== TOKEN) return res.writeHead(401, { 'www-authenticate': 'Bearer' }).end('{"error":"unauthorized"}');
    if (asked === '/openapi.yaml') return res.writeHead(200, { 'content-type': 'application/yaml' }).end(PETSTORE);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: asked }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function failedStart(args: string[]): Promise<string> {
  const server = spawnBin('openapi-mcp-server', args, ENV);
  expect(await server.exited).toBe(1);
  return server.stderr();
}

describe('a description behind the API\'s own authentication', () => {
  it("is fetched with the API's headers when it is on apiBaseUrl's origin (it answered 401)", async () => {
    const api = await site({ locked: true });
    try {
      const conn = await connectStdio('openapi-mcp-server', ['--api-base-url', api.url, '--openapi-spec', `${api.url}/openapi.yaml`, '--headers', `Authorization:${TOKEN}`], ENV);
      try {
        const names = (await conn.client.listTools()).tools.map((tool) => tool.name);
        expect(names).toContain('show-pet-by-id');
        expect(textOf(await conn.client.callTool({ name: 'show-pet-by-id', arguments: { petId: '7' } }))).toContain('/pets/7');
      } finally {
        await conn.close();
      }
    } finally {
      await api.close();
    }
  });

  it('says that it needs authentication and how to give it, when no headers are configured', async () => {
    const api = await site({ locked: true });
    try {
      const stderr = await failedStart(['--api-base-url', api.url, '--openapi-spec', `${api.url}/openapi.yaml`]);
      expect(stderr).toContain(
        `openapi-mcp-server: failed to start: failed to load the OpenAPI spec from ${api.url}/openapi.yaml: HTTP 401: the description needs authentication: configure the API's headers (--headers, --header, API_HEADERS, or headers in the config file)`,
      );
    } finally {
      await api.close();
    }
  });

  it("never sends the API's headers to another origin, and says so when that one needs authentication", async () => {
    const api = await site({ locked: true });
    const docs = await site({ locked: true });
    try {
      const stderr = await failedStart(['--api-base-url', api.url, '--openapi-spec', `${docs.url}/openapi.yaml`, '--headers', `Authorization:${TOKEN},X-Api-Key:${KEY}`]);
      expect(stderr).toContain(`HTTP 401: the description needs authentication, and the API's headers are sent only to a description on apiBaseUrl's origin (${api.url}), never to ${docs.url}: download it and give it as a file`);
      expect(stderr).not.toContain(KEY);
      expect(docs.seen.length).toBeGreaterThan(0);
      for (const { headers } of docs.seen) expect([headers.authorization, headers['x-api-key']]).toEqual([undefined, undefined]);
    } finally {
      await Promise.all([api.close(), docs.close()]);
    }
  });

  it('follows a redirect to another origin without the headers (undici kept X-Api-Key across origins)', async () => {
    const storage = await site({ locked: false });
    const api = await site({ locked: true, redirects: { '/openapi.yaml': () => `${storage.url}/openapi.yaml` } });
    try {
      const conn = await connectStdio('openapi-mcp-server', ['--api-base-url', api.url, '--openapi-spec', `${api.url}/openapi.yaml`, '--headers', `Authorization:${TOKEN},X-Api-Key:${KEY}`], ENV);
      try {
        expect((await conn.client.listTools()).tools.map((tool) => tool.name)).toContain('show-pet-by-id');
      } finally {
        await conn.close();
      }
      expect(api.seen[0]).toMatchObject({ path: '/openapi.yaml', headers: { authorization: TOKEN, 'x-api-key': KEY } });
      expect(storage.seen.map(({ path: asked, headers }) => [asked, headers.authorization, headers['x-api-key']])).toEqual([['/openapi.yaml', undefined, undefined]]);
    } finally {
      await Promise.all([api.close(), storage.close()]);
    }
  });
});
