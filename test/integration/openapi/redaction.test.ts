import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { tempCacheEnv } from '../../helpers/processes';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';
import { tempDir } from '../../helpers/temp';

const TOKEN = 'tok-3f9a1c7e5b2d4068';
const KEY = 'key-8c1d2e3f4a5b6c7d';
const QUERY_KEY = 'qk-0a1b2c3d4e5f6a7b';
const REQUEST_ID = 'req-0000001234';
/** What the model itself sends: never redacted, even where the upstream echoes it. */
const NOTE = 'model-words-9876543210';

const SPEC = [
  'openapi: 3.0.3', 'info: {title: echo, version: "1"}', 'paths:',
  '  /anything/{word}:', '    post:', '      operationId: anything',
  '      parameters: [{name: word, in: path, required: true, schema: {type: string}}, {name: note, in: query, schema: {type: string}}]',
  '      requestBody: {content: {application/json: {schema: {type: object, properties: {text: {type: string}}}}}}',
  '      responses: {"200": {description: ok}}',
  '  /debug/{code}:', '    get:', '      operationId: debugPage', '      parameters: [{name: code, in: path, required: true, schema: {type: integer}}]', '      responses: {"200": {description: ok}}',
  '  /linked:', '    get:', '      operationId: linked', '      responses: {"200": {description: ok}}',
  '  /utf16/{form}:', '    get:', '      operationId: wideEcho', '      parameters: [{name: form, in: path, required: true, schema: {type: string}}]', '      responses: {"200": {description: ok}}',
].join('\n');

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean; structuredContent?: Record<string, unknown> };

let upstream: Upstream;
let conn: StdioConnection;
beforeAll(async () => {
  upstream = await startUpstream();
  const spec = path.join(tempDir('openapi-redact-'), 'echo.yaml');
  writeFileSync(spec, SPEC);
  conn = await connectStdio(
    'openapi-mcp-server',
    ['--api-base-url', `${upstream.url}/v1?api_key=${QUERY_KEY}`, '--openapi-spec', spec, '--headers', `Authorization:Bearer ${TOKEN}`, '--header', `X-Request-Id=${REQUEST_ID}`],
    { ...tempCacheEnv(), API_HEADERS: `X-Api-Key:${KEY}` },
  );
});
afterAll(async () => {
  await conn?.close();
  await upstream.close();
});

async function call(name: string, args: Record<string, unknown>): Promise<Result> {
  return (await conn.client.callTool({ name, arguments: args })) as Result;
}

function expectNoSecret(result: Result): string {
  const all = JSON.stringify(result);
  for (const secret of [TOKEN, KEY, QUERY_KEY]) expect(all).not.toContain(secret);
  return all;
}

describe('operator credentials echoed by the upstream', () => {
  test('are replaced by a marker naming the header in text and structuredContent; the model\'s own arguments stay', async () => {
    const result = await call('anything', { word: 'w', note: NOTE, text: NOTE });
    // The upstream did get every credential.
    expect(upstream.requests.at(-1)!.headers).toMatchObject({ authorization: `Bearer ${TOKEN}`, 'x-api-key': KEY });
    expect(result.isError).toBeUndefined();
    const all = expectNoSecret(result);
    const echo = (result.structuredContent as { echo: { url: string; headers: Record<string, string>; body: string } }).echo;
    expect(echo.headers.authorization).toBe('[redacted: Authorization]');
    expect(echo.headers['x-api-key']).toBe('[redacted: X-Api-Key]');
    expect(echo.url).toBe(`/v1/anything/w?api_key=[redacted: query api_key]&note=${NOTE}`);
    // No credential: kept.
    expect(echo.headers['x-request-id']).toBe(REQUEST_ID);
    expect(JSON.parse(echo.body)).toEqual({ text: NOTE });
    expect(textOf(result)).toContain('"authorization": "[redacted: Authorization]"');
    expect(all).toContain(NOTE);
  });

  test('are redacted from invoke-api-endpoint results too', async () => {
    const listed = await call('list-api-endpoints', {});
    const toolId = (listed.structuredContent as { endpoints: Array<{ toolId: string; path: string }> }).endpoints.find((e) => e.path === '/anything/{word}')!.toolId;
    const result = await call('invoke-api-endpoint', { toolId, parameters: { word: 'w', note: NOTE } });
    expect(expectNoSecret(result)).toContain('[redacted: Authorization]');
    expect(JSON.stringify(result)).toContain(NOTE);
  });

  test('are redacted from an HTTP error\'s excerpt of a debug page that lists the request headers', async () => {
    const result = await call('debug-page', { code: 401 });
    expect(result.isError).toBe(true);
    expectNoSecret(result);
    expect(textOf(result)).toContain('authentication error: HTTP 401 (an HTML page, as text)');
    expect(textOf(result)).toContain('[redacted: Authorization]');
    expect(textOf(result)).toContain(REQUEST_ID);
  });

  test('are redacted from the response headers shown', async () => {
    const result = await call('linked', {});
    expectNoSecret(result);
    expect(result.content[1]?.text).toContain('link: </linked?page=2&api_key=[redacted: X-Api-Key]>; rel="next"');
  });

  test('are redacted from a UTF-16 body, named by its charset or by a byte order mark (they were looked for as UTF-8 bytes only)', async () => {
    for (const form of ['le', 'bom']) {
      const result = await call('wide-echo', { form });
      expectNoSecret(result);
      expect(textOf(result)).toContain(`x-api-key: [redacted: X-Api-Key]\nauthorization: [redacted: Authorization]\nx-request-id: ${REQUEST_ID}`);
    }
  });

  test('are logged once per tool, by name, never by value', async () => {
    await call('anything', { word: 'again' });
    const warnings = conn.stderr().split('\n').filter((line) => line.includes('echoed a configured credential'));
    expect(warnings.filter((line) => line.includes('"tool":"anything"'))).toHaveLength(1);
    expect(warnings.find((line) => line.includes('"tool":"debug-page"'))).toContain('Authorization');
    // How to show again a value that is no secret.
    expect(warnings[0]).toContain('notCredentials');
    for (const secret of [TOKEN, KEY, QUERY_KEY]) expect(conn.stderr()).not.toContain(secret);
  });
});

describe('names given with --not-credential', () => {
  const TENANT = 'acme-corporation-eu';
  const REGION = 'europe-west-1b';
  let conn2: StdioConnection;
  beforeAll(async () => {
    const spec = path.join(tempDir('openapi-redact-'), 'echo.yaml');
    writeFileSync(spec, SPEC);
    conn2 = await connectStdio(
      'openapi-mcp-server',
      [
        '--api-base-url', `${upstream.url}/v1?region=${REGION}&api_key=${QUERY_KEY}`, '--openapi-spec', spec,
        '--header', `X-Tenant=${TENANT}`, '--header', `X-Team=${TENANT}-team`, '--header', `Authorization=Bearer ${TOKEN}`,
        '--not-credential', 'x-tenant', '--not-credential', 'region', '--not-credential', 'X-Tennant',
      ],
      tempCacheEnv(),
    );
  });
  afterAll(async () => {
    await conn2?.close();
  });

  test('are shown as the upstream says them back; every other configured value is still redacted', async () => {
    const result = (await conn2.client.callTool({ name: 'anything', arguments: { word: 'w' } })) as Result;
    const echo = (result.structuredContent as { echo: { url: string; headers: Record<string, string> } }).echo;
    expect(echo.headers['x-tenant']).toBe(TENANT);
    expect(echo.url).toBe(`/v1/anything/w?region=${REGION}&api_key=[redacted: query api_key]`);
    // Not named: a header of no known kind counts as a credential.
    expect(echo.headers['x-team']).toBe('[redacted: X-Team]');
    expect(echo.headers.authorization).toBe('[redacted: Authorization]');
    expectNoSecret(result);
  });

  test('a name that matches nothing configured is logged at the start, as a likely typo', () => {
    const warning = conn2.stderr().split('\n').find((line) => line.includes('notCredentials names'));
    expect(warning).toContain('"names":["X-Tennant"]');
  });
});
