import path from 'node:path';
import { connectStdio, type StdioConnection } from '../../helpers/mcp';
import { tempCacheEnv } from '../../helpers/processes';
import { startUpstream, type Recorded, type Upstream } from '../../fixtures/openapi/upstream';

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'openapi');

let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());

/** What the upstream got for one call, which must succeed. */
async function sent(conn: StdioConnection, name: string, args: Record<string, unknown>): Promise<Recorded> {
  const before = upstream.requests.length;
  const result = await conn.client.callTool({ name, arguments: args });
  expect(result.isError).toBeUndefined();
  return upstream.requests[before];
}

/** The header lines after the name and the content of each multipart part named `name`, as the upstream got them. */
function parts(body: string, name: string): Array<{ head: string; content: string }> {
  return [...body.matchAll(new RegExp(`Content-Disposition: form-data; name="${name}"([^]*?)\\r\\n\\r\\n([^]*?)\\r\\n--`, 'g'))].map((match) => ({ head: match[1], content: match[2] }));
}

describe('openapi-mcp-server: what goes on the wire', () => {
  test('multipart: a JSON or typed part carries its type and no file name; a file part its name', async () => {
    const conn = await connectStdio('openapi-mcp-server', ['--api-base-url', `${upstream.url}/v1`, '--openapi-spec', path.join(FIXTURES, 'wire-formats.yaml')], tempCacheEnv());
    try {
      const request = await sent(conn, 'upload', {
        file: Buffer.from('%PDF-1.4').toString('base64'),
        metadata: { title: 'Q3', tags: ['a', 'b'] },
        options: { public: true },
        rows: 'a,b\n1,2',
        comment: 'c',
        sections: [{ heading: 'h1' }, { heading: 'h2' }],
      });
      expect(request.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
      // swagger-client named the metadata part `blob` (filename="blob"), which multer refuses as an
      // unexpected file, and sent `options` and each section with no type (OpenAPI's default for an object is JSON).
      const json = '\r\nContent-Type: application/json';
      expect(['file', 'metadata', 'options', 'rows', 'comment', 'sections'].map((name) => parts(request.body, name))).toEqual([
        [{ head: '; filename="file"\r\nContent-Type: application/octet-stream', content: '%PDF-1.4' }],
        [{ head: json, content: '{"title":"Q3","tags":["a","b"]}' }],
        [{ head: json, content: '{"public":true}' }],
        [{ head: '\r\nContent-Type: text/csv', content: 'a,b\n1,2' }],
        [{ head: '', content: 'c' }],
        [{ head: json, content: '{"heading":"h1"}' }, { head: json, content: '{"heading":"h2"}' }],
      ]);
    } finally {
      await conn.close();
    }
  });

  test('parameters: content as its media type\'s text, unexploded cookies as a,b, an empty matrix as ;name; typed multipart arrays a part per item', async () => {
    const conn = await connectStdio('openapi-mcp-server', ['--api-base-url', `${upstream.url}/v1`, '--openapi-spec', path.join(FIXTURES, 'wire-formats.yaml')], tempCacheEnv());
    try {
      const request = await sent(conn, 'report', { period: [], filter: 'open', 'X-Where': { a: 1 }, prefs: ['dark', 'compact,wide'] });
      // The empty matrix list was refused; `?filter=open` (no JSON document) and `prefs=dark%2Ccompact%2Cwide` (separator and comma alike) were sent.
      expect([request.url, request.headers['x-where'], request.headers.cookie]).toEqual(['/v1/reports/;period?filter=%22open%22', '{"a":1}', 'prefs=dark,compact%2Cwide']);
      const upload = await sent(conn, 'upload', { file: Buffer.from('x').toString('base64'), metadata: { title: 't' }, labels: ['a', 'b,c'] });
      // One text/plain part `a,b,c` was sent.
      expect(parts(upload.body, 'labels')).toEqual([{ head: '\r\nContent-Type: text/plain', content: 'a' }, { head: '\r\nContent-Type: text/plain', content: 'b,c' }]);
    } finally {
      await conn.close();
    }
  });

  test('Swagger 2.0: a parameter\'s default is not sent for an argument left out; one given is', async () => {
    const conn = await connectStdio('openapi-mcp-server', ['--api-base-url', `${upstream.url}/v1`, '--openapi-spec', path.join(FIXTURES, 'wire-formats-2.0.yaml')], tempCacheEnv());
    try {
      const bare = await sent(conn, 'search-orders', { q: 'x' });
      expect([bare.url, bare.headers['accept-language'], bare.body]).toEqual(['/v1/orders', undefined, 'q=x']);
      const given = await sent(conn, 'search-orders', { q: 'x', page: 2, status: 'closed', 'Accept-Language': 'de', note: 'n' });
      expect([given.url, given.headers['accept-language'], given.body]).toEqual(['/v1/orders?page=2&status=closed', 'de', 'note=n&q=x']);
    } finally {
      await conn.close();
    }
  });
});
