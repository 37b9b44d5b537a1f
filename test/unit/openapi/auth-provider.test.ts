import { ApiClient } from '../../../workers/openapi/api-client';
import { isAuthError, StaticAuthProvider, type IAuthProvider } from '../../../workers/openapi/auth';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';
import { rejection } from '../../helpers/rejection';

let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(() => upstream.close());

describe('an IAuthProvider whose getAuthHeaders fails or gives what is no headers', () => {
  const provider = (getAuthHeaders: () => Promise<unknown>): IAuthProvider => ({ getAuthHeaders, handleAuthError: async () => false }) as IAuthProvider;

  test('a thrown getAuthHeaders is an UPSTREAM_ERROR naming it, an authentication error, and nothing is sent', async () => {
    const client = new ApiClient(upstream.url, provider(async () => { throw new Error('token store down'); }));
    const before = upstream.requests.length;
    const error = await rejection(client.request('GET', '/users'));
    expect(error).toMatchObject({ code: 'UPSTREAM_ERROR', message: 'authentication error: getAuthHeaders() failed: token store down' });
    expect(isAuthError(error)).toBe(true);
    expect(upstream.requests.length).toBe(before);
    await client.close();
  });

  test.each([
    ['null', null],
    ['undefined', undefined],
    ['an array', ['Bearer x']],
  ])('resolving to %s is an UPSTREAM_ERROR saying what came', async (got, value) => {
    const client = new ApiClient(upstream.url, provider(async () => value));
    await expect(client.request('GET', '/users')).rejects.toMatchObject({
      code: 'UPSTREAM_ERROR',
      message: `authentication error: getAuthHeaders() must resolve to an object of header names to values, got ${got}`,
    });
    await client.close();
  });

  test.each([
    ['a value with a line break', { Authorization: 'Bearer a\r\nX-Injected: 1' }, "getAuthHeaders() gave header 'Authorization' a value with a line break or NUL, which no HTTP request can carry; nothing was sent"],
    ['a name with a space', { 'X Token': 't' }, 'getAuthHeaders() gave a header name no HTTP request can carry: "X Token"'],
  ])('%s is an UPSTREAM_ERROR naming the header, not a network error, and nothing is sent', async (_what, headers, message) => {
    const client = new ApiClient(upstream.url, provider(async () => headers));
    const before = upstream.requests.length;
    const error = await rejection(client.request('GET', '/users'));
    expect(error).toMatchObject({ code: 'UPSTREAM_ERROR', message: `authentication error: ${message}` });
    // The value is a credential: never in the message.
    expect((error as Error).message).not.toContain('Bearer a');
    expect(upstream.requests.length).toBe(before);
    await client.close();
  });

  test('a header whose value is undefined or null is not sent (it went out as the text "undefined")', async () => {
    const client = new ApiClient(upstream.url, provider(async () => ({ Authorization: undefined, 'X-Tenant': null, 'X-Kept': 'k' })), { 'X-Tenant': 'static' });
    const echo = JSON.parse((await client.request('GET', '/users')).body.toString()).echo;
    expect(echo.headers.authorization).toBeUndefined();
    expect(echo.headers['x-tenant']).toBe('static');
    expect(echo.headers['x-kept']).toBe('k');
    await client.close();
  });
});

describe('auth helpers', () => {
  test('StaticAuthProvider gives its headers and never asks for a retry', async () => {
    const provider = new StaticAuthProvider({ Authorization: 'Bearer t' });
    expect(await provider.getAuthHeaders()).toEqual({ Authorization: 'Bearer t' });
    expect(await provider.handleAuthError()).toBe(false);
  });
  test('isAuthError is true for 401 and 403 only', () => {
    expect(isAuthError({ status: 401 })).toBe(true);
    expect(isAuthError({ response: { status: 403 } })).toBe(true);
    expect(isAuthError({ statusCode: 403 })).toBe(true);
    expect(isAuthError({ status: 404 })).toBe(false);
    expect(isAuthError(new Error('x'))).toBe(false);
    expect(isAuthError(null)).toBe(false);
  });
});
