import { generateToolId, isValidHttpMethod } from './tool-id';
import type { EndpointTool } from './tools-manager';

/** Suggestions named when a toolId matches nothing. */
const SUGGESTIONS = 3;

/**
 * The forms of `id` to look up, in order: as given, without the namespace prefix, the method of a
 * tool ID in upper case (`get::users` is `GET::users`), and a method with a path as the
 * description writes it (`GET /users/{id}`, `GET::users/{id}`) as its tool ID. A model writes all
 * of these; only the first was found.
 */
export function toolIdForms(id: string, prefix: string): string[] {
  const forms = [id];
  if (prefix !== '' && id.startsWith(prefix)) forms.push(id.slice(prefix.length));
  const match = /^([A-Za-z]+)(?:::|\s+)(.*)$/.exec(id.trim());
  if (match && isValidHttpMethod(match[1])) {
    const method = match[1].toUpperCase();
    forms.push(`${method}::${match[2]}`);
    if (/[/{}]/.test(match[2])) forms.push(generateToolId(method, match[2]));
  }
  return forms;
}

/**
 * Why `id` names no endpoint of `tools`, with what it may have meant: the methods its path has
 * (`POST::users` when only GET is there, or a bare `/users/{id}`), else the closest tool IDs and
 * names.
 */
export function unknownEndpointMessage(tools: EndpointTool[], id: string, prefix: string): string {
  const start = `no endpoint with tool ID or name '${id}'`;
  const path = pathPartOf(id);
  const samePath = path === undefined ? [] : tools.filter((tool) => tool.toolId.slice(tool.toolId.indexOf('::') + 2) === path);
  if (samePath.length > 0) {
    return `${start}; its path ${samePath[0].path} has ${samePath.map((tool) => tool.method).join(', ')}: ${samePath.map((tool) => tool.toolId).join(', ')}`;
  }
  const wanted = id.toLowerCase();
  const scored = tools.map((tool) => {
    const name = `${prefix}${tool.name}`;
    const byId = distance(wanted, tool.toolId.toLowerCase());
    const byName = distance(wanted, name.toLowerCase());
    return { label: byName < byId ? name : tool.toolId, score: Math.min(byId, byName) };
  });
  // Close enough to be a slip, not just another endpoint.
  const near = scored.filter((entry) => entry.score <= Math.max(3, Math.floor(wanted.length / 3))).sort((a, b) => a.score - b.score);
  const hint = near.length > 0 ? `; did you mean ${near.slice(0, SUGGESTIONS).map((entry) => entry.label).join(', ')}?` : '';
  return `${start}${hint} (list-api-endpoints lists them)`;
}

/** The path part of a tool ID (`users__---id`) that `id` names as an ID, a method and a path, or a bare path. */
function pathPartOf(id: string): string | undefined {
  const trimmed = id.trim();
  if (trimmed.startsWith('/')) return generateToolId('GET', trimmed).slice('GET::'.length);
  const match = /^([A-Za-z]+)(?:::|\s+)(.*)$/.exec(trimmed);
  if (!match || !isValidHttpMethod(match[1])) return undefined;
  return /[/{}]/.test(match[2]) ? generateToolId('GET', match[2]).slice('GET::'.length) : match[2];
}

/** Levenshtein distance of two short strings. */
function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 40) return Math.abs(a.length - b.length);
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length];
}
