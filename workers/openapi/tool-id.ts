/**
 * Tool IDs of spec 000: `<METHOD>::<pathPart>`. The path loses its leading and trailing slashes,
 * repeated slashes collapse, segments are joined with `__`, and a parameter `{name}` becomes
 * `---name`. Characters outside `[A-Za-z0-9_.-]` are dropped, as the reference implementation
 * (`@ivotoby/openapi-mcp-server` 1.16.1) does, so IDs users have in allow-lists stay valid.
 */

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
export type HttpMethod = (typeof METHODS)[number];
export const HTTP_METHODS: readonly HttpMethod[] = METHODS;

/** Whether `method` is one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS (any case). */
export function isValidHttpMethod(method: string): boolean {
  return typeof method === 'string' && (METHODS as readonly string[]).includes(method.toUpperCase());
}

/** `generateToolId('get', '/users/{id}/posts')` → `GET::users__---id__posts`. */
export function generateToolId(method: string, path: string): string {
  const slashes = path.replace(/^\/+/, '').replace(/\/+/g, '/').replace(/\/+$/, '');
  // Up to the last `}` only: past it no `{…}` ends, and over the whole text each `{` read on to
  // the end (a toolId argument of `/` and 32,000 `{` took 2 s, its time the square of its length).
  const end = slashes.lastIndexOf('}') + 1;
  const clean = (slashes.slice(0, end).replace(/\{([^}]+)\}/g, '---$1') + slashes.slice(end)).replace(/\//g, '__');
  const sanitized = clean
    .replace(/[^A-Za-z0-9_.-]/g, '')
    .replace(/_{3,}/g, '__')
    .replace(/-{4,}/g, '---')
    .replace(/^[_-]+|[_-]+$/g, (match) => (match.startsWith('---') ? match : ''));
  return `${method.toUpperCase()}::${sanitized}`;
}

/**
 * Restores method and path: `GET::users__---id` → `{ method: 'GET', path: '/users/{id}' }`.
 * A parameter runs to the end of its segment, or to a `.` followed by more text (GitHub's
 * `{base}...{head}` round-trips). Throws `Error` for a string without the `<METHOD>::` form.
 */
export function parseToolId(toolId: string): { method: string; path: string } {
  const at = typeof toolId === 'string' ? toolId.indexOf('::') : -1;
  if (at <= 0) throw new Error(`invalid tool ID '${String(toolId)}': expected <METHOD>::<path>`);
  const method = toolId.slice(0, at);
  const pathPart = toolId.slice(at + 2);
  const segments = pathPart === '' ? [] : pathPart.split('__');
  const path = segments
    .map((segment) => segment.replace(/---([^.]+?)(?=\.|---|$)/g, (_m, name: string) => `{${name}}`))
    .join('/');
  return { method, path: `/${path}` };
}

/** True for `<METHOD>::<pathPart>` with a known method and a path part of `[A-Za-z0-9_.-]`. */
export function isValidToolId(toolId: unknown): boolean {
  if (typeof toolId !== 'string') return false;
  const match = /^([A-Za-z]+)::([A-Za-z0-9_.-]*)$/.exec(toolId);
  return match !== null && isValidHttpMethod(match[1]) && match[1] === match[1].toUpperCase();
}

/**
 * The resource of a path: its last literal segment (`/users/{id}/posts` → `posts`, `/users/{id}`
 * → `users`); the first segment when every one is a parameter; undefined for `/`.
 */
export function extractResourceName(path: string): string | undefined {
  const segments = path.replace(/^\/+/, '').split('/');
  for (let i = segments.length - 1; i >= 0; i--) {
    const segment = segments[i];
    if (segment.length > 0 && !segment.includes('{') && !segment.includes('}')) return segment;
  }
  return segments[0] || undefined;
}
