import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../config/load';
import { COMMON_FLAGS } from '../../../supervisor/profile';
import { openapiProfile } from '../../../supervisor/cli/openapi-mcp-server';

function load(argv: string[], env: Record<string, string> = {}) {
  const profile = openapiProfile();
  const loaded = loadConfig({ argv, env, flags: [...COMMON_FLAGS, ...profile.flags], envVars: profile.envVars, envPrefix: profile.envPrefix, defaults: profile.defaults, mergeByIndex: profile.mergeByIndex });
  return profile.finalize ? profile.finalize(loaded.config) : loaded.config;
}

describe('openapi-mcp-server flags and environment variables', () => {
  test('map every flag of spec 000 onto apis[0] and the server fields', () => {
    const config = load([
      '--api-base-url', 'https://api.example.com', '--openapi-spec', './spec.yaml', '--spec-input-method', 'file',
      '--headers', 'Authorization:Bearer a:b,X-One:1', '--header', 'X-Two=2', '--header', 'X-Three=3=3',
      '--transport', 'http', '--port', '8080', '--host', '127.0.0.1', '--path', '/api-mcp',
      '--tools', 'explicit', '--tool', 'GET::users', '--tool', 'crt-usr', '--tag', 'users', '--include-tags', 'a,b',
      '--resource', 'users', '--operation', 'get', '--include-operations', 'post,DELETE', '--disable-abbreviation', '--debug',
    ]);
    expect(config).toMatchObject({ transport: 'http', debug: true, http: { port: 8080, host: '127.0.0.1', endpointPath: '/api-mcp' }, shell: { enabled: false }, web: { enabled: false } });
    expect(config.apis).toHaveLength(1);
    expect(config.apis[0]).toMatchObject({
      apiBaseUrl: 'https://api.example.com',
      openApiSpec: './spec.yaml',
      specInputMethod: 'file',
      headers: { Authorization: 'Bearer a:b', 'X-One': '1', 'X-Two': '2', 'X-Three': '3=3' },
      toolsMode: 'explicit',
      includeTools: ['GET::users', 'crt-usr'],
      includeTags: ['users', 'a', 'b'],
      includeResources: ['users'],
      includeOperations: ['GET', 'POST', 'DELETE'],
      disableAbbreviation: true,
    });
  });

  test('combine environment variables with flags, flags winning', () => {
    const config = load(['--openapi-spec', './flag.yaml'], { API_BASE_URL: 'https://env.example.com', OPENAPI_SPEC_PATH: './env.yaml', API_HEADERS: 'X-Env:e' });
    expect(config.apis[0]).toMatchObject({ apiBaseUrl: 'https://env.example.com', openApiSpec: './flag.yaml', headers: { 'X-Env': 'e' } });
  });

  test('complete the config file\'s API instead of replacing it: the file holds the API, the environment its token', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'openapi-profile-'));
    try {
      const file = path.join(dir, 'config.json');
      writeFileSync(file, JSON.stringify({ apis: [{ apiBaseUrl: 'https://file.example', openApiSpec: './file.yaml', headers: { 'X-File': 'f' }, includeTags: ['a'] }] }));
      const config = load(['--config', file, '--tag', 'b', '--header', 'X-Flag=1'], { API_HEADERS: 'Authorization:Bearer t' });
      expect(config.apis).toHaveLength(1);
      expect(config.apis[0]).toMatchObject({
        apiBaseUrl: 'https://file.example',
        // A path in the file is relative to the file; one on the command line, to the working directory.
        openApiSpec: path.join(dir, 'file.yaml'),
        headers: { 'X-File': 'f', Authorization: 'Bearer t', 'X-Flag': '1' },
        includeTags: ['b'],
      });
      // The file's inline description and its method go together: a description on the command line replaces both.
      writeFileSync(file, JSON.stringify({ apis: [{ apiBaseUrl: 'https://file.example', openApiSpec: 'openapi: 3.0.3', specInputMethod: 'inline' }] }));
      expect(load(['--config', file, '--openapi-spec', 'https://specs.example/api.yaml']).apis[0]).toMatchObject({ openApiSpec: 'https://specs.example/api.yaml', specInputMethod: 'url' });
      expect(load(['--config', file, '--openapi-spec', './api.yaml', '--spec-input-method', 'file']).apis[0]).toMatchObject({ openApiSpec: './api.yaml', specInputMethod: 'file' });
      expect(load(['--config', file, '--header', 'X-A=1']).apis[0]).toMatchObject({ openApiSpec: 'openapi: 3.0.3', specInputMethod: 'inline' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('--spec-cache takes a directory, or off for no cache', () => {
    const base = ['--api-base-url', 'https://a.example', '--openapi-spec', 'x.yaml'];
    expect(load([...base, '--spec-cache', '/tmp/c']).apis[0].specCache).toBe('/tmp/c');
    expect(load([...base, '--spec-cache', 'off']).apis[0].specCache).toBe(false);
    expect(load(base).apis[0].specCache).toBeUndefined();
  });

  test('refuse a missing apiBaseUrl, a bad method and stdin with the stdio transport', () => {
    expect(() => load([])).toThrow('apiBaseUrl is required');
    expect(() => load(['--openapi-spec', 'x.yaml'])).toThrow(/apiBaseUrl is required/);
    expect(() => load(['--api-base-url', 'https://a.example', '--openapi-spec', 'x', '--operation', 'FETCH'])).toThrow("--operation: 'FETCH' is not an HTTP method");
    expect(() => load(['--api-base-url', 'https://a.example', '--openapi-spec', 'x', '--include-operations', 'get,FETCH'])).toThrow("--include-operations: 'FETCH' is not an HTTP method");
    expect(() => load(['--api-base-url', 'https://a.example', '--spec-input-method', 'stdin'])).toThrow(/needs --transport http/);
    expect(() => load(['--api-base-url', 'https://a.example', '--transport', 'sse', '--openapi-spec', 'x'])).toThrow(/transport must be stdio or http/);
  });

  test('refuse at start what every call would fail on: a bad header value, a base URL that is not http(s)', () => {
    const base = ['--api-base-url', 'https://a.example', '--openapi-spec', 'x'];
    const error = (argv: string[], env: Record<string, string> = {}) => {
      try {
        load(argv, env);
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error('no error');
    };
    expect(error([...base, '--header', 'X-Key=abc\u2713secret'])).toMatch(/apis\[0\]\.headers\.X-Key \(under --header\): a header value may not hold/);
    expect(error([...base, '--header', 'X-Key=abc\u2713secret'])).not.toContain('secret');
    expect(error([...base], { API_HEADERS: 'X-Key:line\r\nbreak-secret' })).not.toContain('secret');
    expect(error(['--api-base-url', 'ftp://files.example', '--openapi-spec', 'x'])).toMatch(/apiBaseUrl must be an http:\/\/ or https:\/\/ URL/);
    expect(error(['--api-base-url', 'https://api.example/v1#frag', '--openapi-spec', 'x'])).toMatch(/apiBaseUrl may not have a #fragment/);
    expect(error(['--api-base-url', 'ftp://user:pw-secret@files.example', '--openapi-spec', 'x'])).toContain('ftp://***@files.example');
    expect(error(['--api-base-url', 'ftp://user:pw-secret@files.example', '--openapi-spec', 'x'])).not.toContain('pw-secret');
    // A password with `#` or `/` breaks the URL: still nothing of it is shown.
    expect(error(['--api-base-url', 'https://admin:s3#cret@api.example', '--openapi-spec', 'x'])).not.toContain('cret');
    expect(error(['--api-base-url', 'https://admin:pa/ss-secret@api.example', '--openapi-spec', 'x'])).not.toContain('secret');
  });

  test('name a malformed header entry without echoing its value', () => {
    const base = ['--api-base-url', 'https://a.example', '--openapi-spec', 'x'];
    expect(() => load([...base, '--headers', 'Authorization=Bearer tok-secret'])).toThrow("--headers: expected Name:value pairs separated by commas; 'Authorization' is not followed by ':' and a value, or is not a header name (separate name and value with ':', not '=')");
    expect(() => load([...base, '--header', 'Authorization: Bearer tok-secret'])).toThrow(/--header: expected Name=value; 'Authorization' .*not ':'/);
    expect(() => load([...base, '--header', 'tok-secret'])).toThrow("--header: expected Name=value; an entry has no '=' between a header name and its value");
    expect(() => load(base, { API_HEADERS: 'Bearer tok-secret' })).toThrow(/^API_HEADERS: .*an entry has no ':'/);
    // A bare base64 token with its `=` padding: nothing of it either.
    expect(() => load(base, { API_HEADERS: 'c2stbGl2ZS0xMjM0NTY3ODkw/abc+de==' })).toThrow("API_HEADERS: expected Name:value pairs separated by commas; an entry is not followed by ':' and a value, or is not a header name (separate name and value with ':', not '=')");
  });
});
