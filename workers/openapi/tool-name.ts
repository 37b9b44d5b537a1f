import { createHash } from 'node:crypto';

/**
 * Tool names of spec 000, built exactly as `../shared/OPENAPI-NAMING.md` describes (the word lists
 * and rules of `@ivotoby/openapi-mcp-server` 1.16.1), so users migrating keep their names.
 */

/** Longest tool name spec 000 allows. */
export const MAX_TOOL_NAME_LENGTH = 64;

const COMMON_WORDS = new Set([
  'controller', 'api', 'operation', 'handler', 'endpoint', 'action', 'perform', 'execute', 'retrieve',
  'specify', 'for', 'and', 'the', 'with', 'from', 'into', 'onto', 'out',
]);

// A Map: words come from operationIds, and a plain object's lookup of `constructor` gave Object.
const ABBREVIATIONS = new Map<string, string>(Object.entries({
  service: 'svc', services: 'svcs', user: 'usr', users: 'usrs', management: 'mgmt', manager: 'mgr',
  manage: 'mng', authority: 'auth', authorities: 'auths', group: 'grp', groups: 'grps', update: 'upd',
  updating: 'upd', updated: 'upd', delete: 'del', deleting: 'del', deleted: 'del', create: 'crt',
  creating: 'crt', created: 'crt', get: 'get', getting: 'get', list: 'lst', listing: 'lst', post: 'pst',
  put: 'put', patch: 'ptch', request: 'req', response: 'resp', parameter: 'param', parameters: 'params',
  config: 'cfg', configuration: 'config', configure: 'cfg', resource: 'res', resources: 'resrcs',
  identity: 'id', identifier: 'id', identification: 'id', identifiers: 'ids', application: 'app',
  account: 'acct', information: 'info', notification: 'notif', description: 'desc', summary: 'summ',
  version: 'ver', value: 'val', values: 'vals', authentication: 'authn', authorization: 'authz',
  specification: 'spec', document: 'doc', documents: 'docs', repository: 'repo', repositories: 'repos',
  experimental: 'exp', deprecated: 'depr', query: 'qry',
}));
const ABBREVIATED = new Set(ABBREVIATIONS.values());

function shortHash(input: string, length: number): string {
  return createHash('sha256').update(input).digest('hex').slice(0, length);
}

function splitWords(input: string, atDigits: boolean): string[] {
  return input.split('_').flatMap((piece) => {
    let spaced = piece.replace(/([A-Z]+)/g, ' $1').replace(/([A-Z][a-z])/g, ' $1');
    if (atDigits) spaced = spaced.replace(/([a-z])([0-9])/g, '$1 $2').replace(/([0-9])([A-Za-z])/g, '$1 $2');
    return spaced.split(' ').map((word) => word.trim()).filter((word) => word.length > 0);
  });
}

function removeVowels(name: string): string {
  return name
    .split('-')
    .map((part) => {
      if (part.length <= 5 || ABBREVIATED.has(part.toLowerCase())) return part;
      const shorter = part[0] + part.slice(1).replace(/[aeiouAEIOU]/g, '');
      return shorter.length < part.length && shorter.length > 1 ? shorter : part;
    })
    .join('-');
}

/**
 * The name of a tool from its source text (operationId, else summary, else `"<METHOD> <path>"`).
 * At most `maxLength` characters (default 64) of `[a-z0-9-]`; with `disableAbbreviation` no word
 * is dropped or shortened and the length is not limited (the caller rejects names over 64).
 * Blank input gives `unnamed-tool`.
 */
export function generateToolName(input: string, disableAbbreviation = false, maxLength = MAX_TOOL_NAME_LENGTH): string {
  if (!input || input.trim().length === 0) return 'unnamed-tool';
  const limit = disableAbbreviation ? Number.MAX_SAFE_INTEGER : maxLength;
  const wasLong = input.length > limit;
  const sanitized = input.replace(/[^a-zA-Z0-9_]/g, '-').replace(/-+/g, '-').replace(/^-+|-+$/g, '');
  if (sanitized.length === 0) return `tool-${shortHash(input, 8)}`;

  let name: string;
  if (disableAbbreviation) {
    name = splitWords(sanitized, false).join('-');
  } else {
    name = splitWords(sanitized, true)
      .filter((word) => !COMMON_WORDS.has(word.toLowerCase().replace(/-+$/, '')))
      .map((word) => ABBREVIATIONS.get(word.toLowerCase()) ?? word)
      .join('-');
    if (name.length > limit) name = removeVowels(name);
  }

  name = name.replace(/-+/g, '-').replace(/^-+|-+$/g, '');
  if (wasLong || name.length > limit) {
    const hash = shortHash(input, 4);
    if (name.length > limit - 5) name = name.slice(0, limit - 5).replace(/-+$/, '');
    name = `${name}-${hash}`;
  }

  name = name.toLowerCase().replace(/[^a-z0-9-]/g, '-').replace(/-+/g, '-').replace(/^-+|-+$/g, '');
  if (name.length > limit) name = name.slice(0, limit).replace(/-+$/, '');
  return name.length === 0 ? `tool-${shortHash(input, 8)}` : name;
}

/** True for 1-64 characters of `[a-z0-9-]`. */
export function isValidToolName(name: unknown): boolean {
  return typeof name === 'string' && name.length > 0 && name.length <= MAX_TOOL_NAME_LENGTH && /^[a-z0-9-]+$/.test(name);
}

/** The source text of a name: operationId, then summary, then `"<METHOD> <path>"`. */
export function toolNameSource(method: string, path: string, operation: { operationId?: unknown; summary?: unknown }): string {
  if (typeof operation.operationId === 'string' && operation.operationId !== '') return operation.operationId;
  if (typeof operation.summary === 'string' && operation.summary !== '') return operation.summary;
  return `${method.toUpperCase()} ${path}`;
}

/**
 * Makes names unique in document order. The first holder of a name keeps it (the reference's
 * name); each later one gets `-2`, `-3`, … (cut so the result stays within `maxLength`), the
 * first free suffix. Deterministic, so names are stable across restarts of the same document.
 * Returns the new names and the renames made, for a warning.
 */
export function dedupeToolNames(names: readonly string[], maxLength = MAX_TOOL_NAME_LENGTH): { names: string[]; renamed: Array<{ index: number; from: string; to: string }> } {
  const taken = new Set(names);
  const seen = new Set<string>();
  // The suffix after the last one a name got: those before it are still taken (the sets only
  // grow), and trying them again for each holder made 8,000 holders of one name take 11 s.
  const nextSuffix = new Map<string, number>();
  const renamed: Array<{ index: number; from: string; to: string }> = [];
  const out = names.map((name, index) => {
    if (!seen.has(name)) {
      seen.add(name);
      return name;
    }
    for (let n = nextSuffix.get(name) ?? 2; ; n++) {
      const suffix = `-${n}`;
      const candidate = `${name.slice(0, Math.max(1, maxLength - suffix.length)).replace(/-+$/, '')}${suffix}`;
      if (!taken.has(candidate) && !seen.has(candidate)) {
        seen.add(candidate);
        taken.add(candidate);
        nextSuffix.set(name, n + 1);
        renamed.push({ index, from: name, to: candidate });
        return candidate;
      }
    }
  });
  return { names: out, renamed };
}
