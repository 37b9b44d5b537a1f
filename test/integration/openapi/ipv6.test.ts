import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { spawnBin, tempCacheEnv } from '../../helpers/processes';

const DESCRIPTION = `openapi: 3.0.3
info: { title: six, version: '1' }
servers: [{ url: 'http://[::2]:9/elsewhere' }]
paths:
  /things/{id}:
    get:
      operationId: getThing
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses:
        '200': { description: ok, content: { application/json: { schema: { $ref: 'OWN' } } } }
  /others:
    get:
      operationId: getOthers
      responses:
        '200': { description: ok, content: { application/json: { schema: { $ref: 'MAPPED' } } } }
`;
const THING = 'type: object\nproperties: { name: { type: string, description: read-from-the-own-host } }\n';

/** An API and its description on `host`, which records what reached it. */
function listen(host: string, answer: (url: string) => string, seen: string[]): Promise<Server> {
  const server = createServer((req, res) => {
    seen.push(`${req.headers.host} ${req.url}`);
    res.setHeader('content-type', req.url?.endsWith('.yaml') ? 'application/yaml' : 'application/json');
    res.end(answer(req.url ?? ''));
  });
  return new Promise((resolve) => server.listen(0, host, () => resolve(server)));
}

describe('openapi-mcp-server with IPv6 literals', () => {
  const seen: string[] = [];
  let six: Server;
  let four: Server;
  let conn: StdioConnection;

  beforeAll(async () => {
    let refs: Record<string, string> = {};
    const answer = (url: string) => (url === '/main.yaml' ? DESCRIPTION.replace(/OWN|MAPPED/g, (name) => refs[name]) : url.endsWith('.yaml') ? THING : JSON.stringify({ url }));
    six = await listen('::1', answer, seen);
    four = await listen('127.0.0.1', answer, seen);
    const port6 = (six.address() as AddressInfo).port;
    // The description's own host in another spelling, and 127.0.0.1 as an IPv4-mapped IPv6 literal.
    refs = { OWN: `http://[0:0::1]:${port6}/thing.yaml`, MAPPED: `http://[::ffff:127.0.0.1]:${(four.address() as AddressInfo).port}/thing.yaml` };
    conn = await connectStdio('openapi-mcp-server', ['--api-base-url', `http://[::1]:${port6}/v1`, '--openapi-spec', `http://[::1]:${port6}/main.yaml`], tempCacheEnv());
  });
  afterAll(async () => {
    await conn.close();
    six.close();
    four.close();
  });

  it('sends calls to an [::1] base URL, not to the description\'s servers, and no path argument moves the host', async () => {
    for (const id of ['plain', '@[::2]', '[::2]:80', '/../../x', '%5B::2%5D']) {
      const before = seen.length;
      const result = await conn.client.callTool({ name: 'get-thing', arguments: { id } });
      expect(result.isError).toBeFalsy();
      expect(seen.slice(before)).toEqual([`[::1]:${(six.address() as AddressInfo).port} /v1/things/${encodeURIComponent(id)}`]);
    }
    expect(JSON.parse(textOf(await conn.client.callTool({ name: 'get-others', arguments: {} })))).toEqual({ url: '/v1/others' });
  });

  it('reads a $ref on the description\'s own host written another way, and refuses one to an IPv4-mapped loopback', async () => {
    expect(seen).toContain(`[::1]:${(six.address() as AddressInfo).port} /thing.yaml`);
    expect(seen.filter((line) => line.startsWith('127.0.0.1') || line.includes('ffff'))).toEqual([]);
    expect(conn.stderr()).toMatch(/may not reference http:\/\/\[::ffff:7f00:1\]:\d+\/thing\.yaml: ::ffff:7f00:1 is a private, loopback or link-local address/);
  });

  it.each([
    ['http://::1:8080/v1', 'an IPv6 address goes in brackets, as in http://[::1]:8080/'],
    ['http://[fe80::1%25eth0]:8080/v1', 'a URL cannot carry an IPv6 zone id'],
  ])('says what is wrong with the IPv6 address of the base URL %s', async (url, reason) => {
    const server = spawnBin('openapi-mcp-server', ['--api-base-url', url, '--openapi-spec', 'http://[::1]:9/none.yaml']);
    // 2: a configuration error.
    expect(await server.exited).toBe(2);
    expect(server.stderr()).toContain(`apiBaseUrl must be an absolute URL: ${reason}`);
  });

  it('says so for a search engine URL too (web-search, before any browser starts)', async () => {
    const cli = spawnBin('web-search', ['search', 'anything'], { WEB_SEARCH_ENGINE_URL: 'http://::1:8080/html/' });
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toContain('WEB_SEARCH_ENGINE_URL (web.search.engineUrl): Invalid URL: an IPv6 address goes in brackets');
  });
});
