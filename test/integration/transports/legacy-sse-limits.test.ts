import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { startHttp, type HttpServer } from '../../helpers/mcp';

// The per-session rate limit of a legacy HTTP+SSE session (GET /sse, POST /message), whichever
// way its POSTs name the session. The SDK client POSTs to the endpoint the server gave
// (`/message?sessionId=<id>`); a fetch of its own rewrites that as other clients write it.

/** A token per 100 s: after `initialize`, `notifications/initialized` and two pings, a third ping is refused. */
const BURST = 4;

type Rewrite = (url: URL, headers: Headers) => URL;

/** `id` with its first character percent-encoded, as a URL may carry it and express decodes it. */
const encoded = (id: string) => `%${id.charCodeAt(0).toString(16)}${id.slice(1)}`;

const rewrites: Array<[string, Rewrite]> = [
  ['the endpoint as given', (url) => url],
  ['spec 001\'s path form, POST /message/{sessionId}', (url) => new URL(`/message/${url.searchParams.get('sessionId')}`, url)],
  ['the path form with the id percent-encoded', (url) => new URL(`/message/${encoded(url.searchParams.get('sessionId')!)}`, url)],
  ['the query form with the id percent-encoded', (url) => new URL(`/message?sessionId=${encoded(url.searchParams.get('sessionId')!)}`, url)],
  [
    'an Mcp-Session-Id header of its own making',
    (url, headers) => {
      headers.set('mcp-session-id', 'made-up');
      return url;
    },
  ],
];

async function connect(server: HttpServer, rewrite: Rewrite): Promise<Client> {
  const transport = new SSEClientTransport(new URL('/sse', server.baseUrl), {
    // The SDK client opens its GET stream with this fetch too: POSTs only.
    fetch: (input, init) => {
      if (init?.method !== 'POST') return fetch(input, init);
      const headers = new Headers(init.headers);
      const url = rewrite(new URL(String(input)), headers);
      return fetch(url, { ...init, headers });
    },
  });
  const client = new Client({ name: 'legacy-limits', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

describe('the per-session rate limit of a legacy SSE session', () => {
  let server: HttpServer;
  beforeAll(async () => {
    const config = fixtureConfig({ thread: false, root: { http: { rateLimit: { perSessionRequestsPerSecond: 0.01, perSessionBurst: BURST } } } });
    server = await startHttp('mcpvisor', ['--config', writeConfig(config)]);
  });
  afterAll(() => server?.stop());

  it.each(rewrites)('holds for POSTs that name the session by %s', async (_how, rewrite) => {
    const client = await connect(server, rewrite);
    try {
      await client.ping();
      await client.ping();
      // Before: a percent-encoded id, or any Mcp-Session-Id header, keyed the limit by a session
      // it did not know, and the POST went through unlimited.
      await expect(client.ping()).rejects.toThrow(/HTTP 429.*per-session rate limit/);
    } finally {
      await client.close();
    }
  });

  it('keys each session apart: a second session has its own burst', async () => {
    const first = await connect(server, (url) => url);
    const second = await connect(server, (url) => url);
    try {
      await first.ping();
      await first.ping();
      await expect(first.ping()).rejects.toThrow(/HTTP 429/);
      await second.ping();
      await second.ping();
    } finally {
      await first.close();
      await second.close();
    }
  });
});
