import path from 'node:path';
import { ApiToolService } from '../../../workers/openapi/service';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';

const FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'openapi', 'path-fragments.yaml');

describe('a path whose key has a fragment', () => {
  let upstream: Upstream;
  let s: ApiToolService;
  beforeAll(async () => {
    upstream = await startUpstream();
    s = await ApiToolService.create({ apiBaseUrl: `${upstream.url}/v1`, openApiSpec: FIXTURE, specInputMethod: 'file', specCache: false });
  });
  afterAll(async () => {
    await s.close();
    await upstream.close();
  });

  test('is called at the path before the #, which is never sent', async () => {
    const names = s.tools.map((t) => t.name);
    expect(names.slice(0, 3)).toEqual(['crt-progress-upd-stream', 'cancel-legal-hold', 'lst-transfers']);
    expect((await s.handle('crt-progress-upd-stream', { 'X-Amz-Target': 'AWSMigrationHub.CreateProgressUpdateStream', ProgressUpdateStreamName: 'm' })).isError).toBeUndefined();
    expect((await s.handle('cancel-legal-hold', { legalHoldId: 'h 1', cancelDescription: 'done' })).isError).toBeUndefined();
    const [create, cancel] = upstream.requests.slice(-2);
    expect(create).toMatchObject({ method: 'POST', url: '/v1/', body: '{"ProgressUpdateStreamName":"m"}' });
    expect(create.headers['x-amz-target']).toBe('AWSMigrationHub.CreateProgressUpdateStream');
    expect(cancel).toMatchObject({ method: 'DELETE', url: '/v1/legal-holds/h%201?cancelDescription=done' });
  });

  test('with a path parameter after the # is refused naming the template, and nothing is sent', async () => {
    const before = upstream.requests.length;
    await expect(s.handle('lst-transfers', { partnerId: 'p' })).rejects.toMatchObject({
      code: 'BAD_INPUT',
      message: "cannot build the request: the path template '/send/#env/v1/partners/{partnerId}/transfers' has a '#' before {partnerId}, and nothing after a '#' is sent",
    });
    expect(upstream.requests.length).toBe(before);
  });
});
