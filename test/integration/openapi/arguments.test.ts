import path from 'node:path';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { tempCacheEnv } from '../../helpers/processes';
import { startUpstream, type Recorded, type Upstream } from '../../fixtures/openapi/upstream';

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'openapi');

let upstream: Upstream;
let conn: StdioConnection;
beforeAll(async () => {
  upstream = await startUpstream();
  // `--tools all` (the default): a direct call is checked by the supervisor, invoke-api-endpoint by the worker.
  conn = await connectStdio('openapi-mcp-server', ['--api-base-url', upstream.url, '--openapi-spec', path.join(FIXTURES, 'arguments.yaml')], tempCacheEnv());
});
afterAll(async () => {
  await conn.close();
  await upstream.close();
});

/** The result's text and whether it is an error, and what reached the upstream (if anything). */
async function call(name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean; sent?: Recorded }> {
  const before = upstream.requests.length;
  const result = await conn.client.callTool({ name, arguments: args });
  return { text: textOf(result), isError: result.isError === true, sent: upstream.requests[before] };
}

/** The same arguments as a direct call and through invoke-api-endpoint: both answers. */
async function both(args: Record<string, unknown>) {
  return [await call('lst-runs', args), await call('invoke-api-endpoint', { toolId: 'GET::repos__---owner__---repo__runs', parameters: args })];
}

const REPO = { owner: 'o', repo: 'r' };

describe('openapi-mcp-server argument checks', () => {
  test('a format is an annotation: GitHub\'s documented range on a date-time is sent; a byte (base64) argument is still checked', async () => {
    for (const answer of await both({ ...REPO, created: '>=2024-01-01' })) {
      expect(answer.isError).toBe(false);
      expect(answer.sent?.url).toBe('/repos/o/r/runs?created=%3E%3D2024-01-01');
    }
    for (const answer of await both({ ...REPO, token: 'not base64!' })) {
      expect(answer).toMatchObject({ isError: true, sent: undefined });
      expect(answer.text).toMatch(/BAD_INPUT.*'token' must match format "byte"/);
    }
  });

  test('a refusal names every problem, up to five, in a direct call as through invoke-api-endpoint', async () => {
    const [direct, invoked] = await both({ ...REPO, state: 'x', sort: 'y', per_page: 1.5 });
    expect(direct).toMatchObject({ isError: true, sent: undefined });
    expect(direct.text).toMatch(/argument 'state' must be one of .*; argument 'sort' must be one of .*; argument 'per_page' must be integer/);
    expect(invoked.text).toMatch(/'state' must be one of .*; 'sort' must be one of .*; 'per_page' must be integer/);
    const missing = await call('lst-runs', {});
    expect(missing.text).toBe("BAD_INPUT (tool lst-runs): invalid arguments: missing required argument 'owner'; missing required argument 'repo'");
    // Valid arguments still pass (the first, fast validator), and the tool keeps refusing after.
    expect((await call('lst-runs', { ...REPO, state: 'open' })).sent?.url).toBe('/repos/o/r/runs?state=open');
    expect((await call('lst-runs', { state: 'x' })).text).toMatch(/: missing required argument 'owner'; missing required argument 'repo'; argument 'state' must be one of /);
  });

  test('an integer past 2^53 is refused, not sent rounded, saying to give it as a string', async () => {
    // What JSON.parse made of 9007199254740993 on the way: 9007199254740992.
    for (const answer of await both({ ...REPO, since_id: 9007199254740992 })) {
      expect(answer).toMatchObject({ isError: true, sent: undefined });
      expect(answer.text).toMatch(/'since_id' is past 2\^53 \(it arrived as 9007199254740992\): JSON numbers this large lose digits .*give it as a string if the API takes one/);
    }
    expect((await call('lst-runs', { ...REPO, cursor: -(2 ** 60) })).text).toMatch(/'cursor' is past 2\^53 \(it arrived as -1152921504606847000\)/);
    expect((await call('lst-runs', { ...REPO, since_id: Number.MAX_SAFE_INTEGER })).sent?.url).toBe('/repos/o/r/runs?since_id=9007199254740991');
  });

  test('a type error says what came, and the value to send when a string held exactly the number or boolean wanted', async () => {
    for (const answer of await both({ ...REPO, per_page: '10', private: 'true', labels: null })) {
      expect(answer).toMatchObject({ isError: true, sent: undefined });
      expect(answer.text).toMatch(/'per_page' must be integer, got the string "10": send the number 10; (argument )?'private' must be boolean, got the string "true": send true; (argument )?'labels' must be string, got null: leave an optional argument out rather than send null$/);
    }
    expect((await call('lst-runs', { ...REPO, owner: null, per_page: 'ten' })).text).toBe(
      'BAD_INPUT (tool lst-runs): invalid arguments: argument \'owner\' must be string, got null; argument \'per_page\' must be integer, got the string "ten"',
    );
  });
});
