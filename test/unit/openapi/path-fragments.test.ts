import { fixtureService } from '../../helpers/openapi-request';

describe('a path whose key has a fragment', () => {
  const { service, upstream } = fixtureService('path-fragments.yaml');

  test('is called at the path before the #, which is never sent', async () => {
    const names = service().tools.map((t) => t.name);
    expect(names.slice(0, 3)).toEqual(['crt-progress-upd-stream', 'cancel-legal-hold', 'lst-transfers']);
    expect((await service().handle('crt-progress-upd-stream', { 'X-Amz-Target': 'AWSMigrationHub.CreateProgressUpdateStream', ProgressUpdateStreamName: 'm' })).isError).toBeUndefined();
    expect((await service().handle('cancel-legal-hold', { legalHoldId: 'h 1', cancelDescription: 'done' })).isError).toBeUndefined();
    const [create, cancel] = upstream().requests.slice(-2);
    expect(create).toMatchObject({ method: 'POST', url: '/v1/', body: '{"ProgressUpdateStreamName":"m"}' });
    expect(create.headers['x-amz-target']).toBe('AWSMigrationHub.CreateProgressUpdateStream');
    expect(cancel).toMatchObject({ method: 'DELETE', url: '/v1/legal-holds/h%201?cancelDescription=done' });
  });

  test('with a path parameter after the # is refused naming the template, and nothing is sent', async () => {
    const before = upstream().requests.length;
    await expect(service().handle('lst-transfers', { partnerId: 'p' })).rejects.toMatchObject({
      code: 'BAD_INPUT',
      message: "cannot build the request: the path template '/send/#env/v1/partners/{partnerId}/transfers' has a '#' before {partnerId}, and nothing after a '#' is sent",
    });
    expect(upstream().requests.length).toBe(before);
  });
});
