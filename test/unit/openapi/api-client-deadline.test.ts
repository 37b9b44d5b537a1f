import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiClient } from '../../../workers/openapi/api-client';

// Fake timers drive undici's own timers (its 300 s headers and body timeouts by default) and
// the client's requestTimeoutMs; sockets and their callbacks stay real. One fake clock for the
// whole file: undici keeps the timer of its clock in module state, and one made on a clock
// dropped between tests never fires again.
let server: Server;
let url: string;
let waiting: Array<(res: ServerResponse) => void> = [];

beforeAll(async () => {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
  server = createServer((_req, res) => waiting.shift()?.(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  jest.useRealTimers();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** The response of the next request, once it arrives. */
const nextRequest = () => new Promise<ServerResponse>((resolve) => waiting.push(resolve));

/** Lets real I/O and its callbacks run. */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('ApiClient with requestTimeoutMs past undici\'s 300 s timeouts', () => {
  beforeEach(() => {
    waiting = [];
  });

  test('waits for headers that take longer than 300 s, up to requestTimeoutMs (they failed at 300 s: UND_ERR_HEADERS_TIMEOUT)', async () => {
    const client = new ApiClient(url, undefined, undefined, { requestTimeoutMs: 600_000 });
    const arrived = nextRequest();
    const pending = client.request('GET', '/report');
    let outcome: unknown;
    pending.then((value) => (outcome = value), (error: unknown) => (outcome = error));
    const res = await arrived;
    await jest.advanceTimersByTimeAsync(310_000);
    await settle();
    expect(outcome).toBeUndefined();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"done":true}');
    const response = await pending;
    expect(response.status).toBe(200);
    expect(response.body.toString()).toBe('{"done":true}');
    await client.close();
  });

  test('waits for a body silent for longer than 300 s (it failed at 300 s: UND_ERR_BODY_TIMEOUT), and still times out at requestTimeoutMs', async () => {
    const client = new ApiClient(url, undefined, undefined, { requestTimeoutMs: 600_000 });
    const arrived = nextRequest();
    const pending = client.request('GET', '/export');
    const res = await arrived;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first part, ');
    await settle();
    await jest.advanceTimersByTimeAsync(310_000);
    await settle();
    res.end('last part');
    const response = await pending;
    expect(response.body.toString()).toBe('first part, last part');

    const silent = nextRequest();
    const never = client.request('GET', '/never');
    const caught = never.catch((error: unknown) => error);
    await silent;
    await jest.advanceTimersByTimeAsync(600_000);
    await settle();
    expect(await caught).toMatchObject({ code: 'TIMEOUT', message: expect.stringMatching(/^the upstream request timed out after 600000 ms \(GET http:\/\/127\.0\.0\.1:\d+\/never\)$/) });
    await client.close();
  });
});
