import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';

/**
 * fetch_web_content and IPv6 literals, through web-search-mcp (no search is run: no browser).
 * A page on ::1, and one on 127.0.0.1 that redirects to it.
 */
let six: Server;
let four: Server;
let port6: number;
let port4: number;

function listen(server: Server, host: string): Promise<number> {
  return new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)));
}

beforeAll(async () => {
  six = createServer((_req, res) => res.setHeader('content-type', 'text/html').end('<html><head><title>six</title></head><body><p>served over IPv6</p></body></html>'));
  four = createServer((req, res) => {
    if (req.url === '/to-six') return void res.writeHead(302, { location: `http://[::1]:${port6}/` }).end();
    res.setHeader('content-type', 'text/html').end(`<html><body><p>served over IPv4 to ${req.headers.host}</p></body></html>`);
  });
  port6 = await listen(six, '::1');
  port4 = await listen(four, '127.0.0.1');
});
afterAll(() => {
  six.close();
  four.close();
});

async function fetchWith(conn: StdioConnection, url: string): Promise<{ text: string; isError: boolean }> {
  const result = await conn.client.callTool({ name: 'fetch_web_content', arguments: { url } });
  return { text: textOf(result), isError: result.isError === true };
}

describe('fetch_web_content with private networks refused', () => {
  let conn: StdioConnection;
  beforeAll(async () => {
    conn = await connectStdio('web-search-mcp', [], { WEB_ALLOW_PRIVATE_NETWORK: 'false' });
  });
  afterAll(() => conn.close());

  it.each([
    ['the IPv6 loopback', () => `http://[::1]:${port6}/`],
    ['the IPv6 loopback written out', () => `http://[0:0:0:0:0:0:0:1]:${port6}/`],
    ['127.0.0.1 IPv4-mapped', () => `http://[::ffff:7f00:1]:${port4}/`],
    ['127.0.0.1 IPv4-mapped, dotted', () => `http://[::ffff:127.0.0.1]:${port4}/`],
    ['127.0.0.1 IPv4-compatible', () => `http://[::127.0.0.1]:${port4}/`],
    ['127.0.0.1 through NAT64', () => `http://[64:ff9b::7f00:1]:${port4}/`],
    ['the unspecified address', () => `http://[::]:${port6}/`],
  ])('refuses %s, naming why and how to allow it', async (_what, url) => {
    const answer = await fetchWith(conn, url());
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/BLOCKED.*is a private, loopback, link-local or metadata address; refused; allowPrivateNetwork: true allows it/);
    expect(answer.text).not.toContain('served over');
  });

  it.each([
    [`http://[fe80::1%25lo]:8080/`, 'a URL cannot carry an IPv6 zone id'],
    [`http://::1:8080/`, 'an IPv6 address goes in brackets, as in http://[::1]:8080/'],
  ])('says what is wrong with the IPv6 address of %s', async (url, reason) => {
    const answer = await fetchWith(conn, url);
    expect(answer.isError).toBe(true);
    expect(answer.text).toBe(`BAD_INPUT: invalid URL: '${url}': ${reason}${reason.startsWith('a URL') ? ' (%25eth0; WHATWG URLs, which Node and undici parse, have none): use a global or loopback address, or a name' : ''}`);
  });
});

describe('fetch_web_content with private networks allowed', () => {
  let conn: StdioConnection;
  beforeAll(async () => {
    conn = await connectStdio('web-search-mcp', [], { WEB_ALLOW_PRIVATE_NETWORK: 'true' });
  });
  afterAll(() => conn.close());

  it('fetches a page on [::1], and one on 127.0.0.1 as an IPv4-mapped address', async () => {
    expect(await fetchWith(conn, `http://[::1]:${port6}/`)).toMatchObject({ isError: false, text: expect.stringContaining('served over IPv6') });
    const mapped = await fetchWith(conn, `http://[::ffff:127.0.0.1]:${port4}/`);
    expect(mapped.isError).toBe(false);
    expect(mapped.text).toContain(`URL: http://[::ffff:7f00:1]:${port4}/`);
    expect(mapped.text).toContain('served over IPv4');
  });

  it('follows a redirect from an IPv4 page to an IPv6 literal, and names the last hop', async () => {
    const answer = await fetchWith(conn, `http://127.0.0.1:${port4}/to-six`);
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain('served over IPv6');
    expect(answer.text).toContain(`http://[::1]:${port6}/`);
  });
});
