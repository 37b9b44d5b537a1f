import { readFileSync } from 'node:fs';
import path from 'node:path';
import { extractResourceName, generateToolId, isValidHttpMethod, isValidToolId, parseToolId } from '../../../workers/openapi/tool-id';

const GITHUB = path.join(__dirname, '..', '..', '..', 'node_modules', '@octokit', 'openapi', 'generated', 'api.github.com.json');

describe('generateToolId', () => {
  const table: Array<{ method: string; path: string; want: string }> = [
    { method: 'get', path: '/users', want: 'GET::users' },
    { method: 'GET', path: '/users/{id}', want: 'GET::users__---id' },
    { method: 'post', path: '/users/{userId}/posts/{postId}', want: 'POST::users__---userId__posts__---postId' },
    { method: 'delete', path: '//api//v1///items/', want: 'DELETE::api__v1__items' },
    { method: 'get', path: '/', want: 'GET::' },
    { method: 'put', path: '/{id}', want: 'PUT::---id' },
    { method: 'get', path: '/repos/{owner}/{repo}/compare/{base}...{head}', want: 'GET::repos__---owner__---repo__compare__---base...---head' },
    { method: 'patch', path: '/files/v1.2/read-me', want: 'PATCH::files__v1.2__read-me' },
  ];
  test.each(table)('turns $method $path into $want', ({ method, path: p, want }) => {
    expect(generateToolId(method, p)).toBe(want);
  });
});

describe('parseToolId', () => {
  test('restores the method and a path with a leading slash and braces around parameters', () => {
    expect(parseToolId('GET::users__---id__posts')).toEqual({ method: 'GET', path: '/users/{id}/posts' });
    expect(parseToolId('GET::')).toEqual({ method: 'GET', path: '/' });
    expect(parseToolId('GET::repos__---owner__---repo__compare__---base...---head')).toEqual({
      method: 'GET',
      path: '/repos/{owner}/{repo}/compare/{base}...{head}',
    });
  });

  test('throws for a string without the <METHOD>:: form', () => {
    expect(() => parseToolId('users')).toThrow(/invalid tool ID/);
    expect(() => parseToolId('::users')).toThrow(/invalid tool ID/);
  });

  test('round-trips every operation of the GitHub description', () => {
    const spec = JSON.parse(readFileSync(GITHUB, 'utf8')) as { paths: Record<string, Record<string, unknown>> };
    let count = 0;
    for (const [p, item] of Object.entries(spec.paths)) {
      for (const method of Object.keys(item)) {
        if (!isValidHttpMethod(method)) continue;
        const id = generateToolId(method, p);
        expect(isValidToolId(id)).toBe(true);
        expect(parseToolId(id)).toEqual({ method: method.toUpperCase(), path: p });
        count++;
      }
    }
    expect(count).toBe(1223);
  });
});

describe('isValidToolId', () => {
  test.each([
    ['GET::users__---id', true],
    ['DELETE::', true],
    ['get::users', false],
    ['FETCH::users', false],
    ['GET:users', false],
    ['GET::users/{id}', false],
    ['', false],
  ])('%s is %s', (id, want) => {
    expect(isValidToolId(id)).toBe(want);
  });
  test('is false for a non-string', () => {
    expect(isValidToolId(42)).toBe(false);
  });
});

describe('isValidHttpMethod and extractResourceName', () => {
  test('accepts the seven methods in any case and nothing else', () => {
    for (const m of ['GET', 'post', 'Put', 'PATCH', 'delete', 'HEAD', 'options']) expect(isValidHttpMethod(m)).toBe(true);
    for (const m of ['TRACE', 'CONNECT', 'parameters', '']) expect(isValidHttpMethod(m)).toBe(false);
  });
  test.each([
    ['/users', 'users'],
    ['/users/{id}', 'users'],
    ['/api/v1/users/{id}/posts', 'posts'],
    ['/{id}', '{id}'],
    ['/', undefined],
  ])('the resource of %s is %s', (p, want) => {
    expect(extractResourceName(p)).toBe(want);
  });
});
