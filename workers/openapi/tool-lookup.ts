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
  // Close enough to be a slip, not just another endpoint.
  const most = Math.max(3, Math.floor(wanted.length / 3));
  // A slip is most often a character or two: those are looked for first, and cheaply.
  let near: Array<{ label: string; score: number }> = [];
  for (const bound of [2, 8, most]) {
    near = closest(tools, wanted, prefix, Math.min(bound, most));
    if (near.length === SUGGESTIONS || bound >= most) break;
  }
  const hint = near.length > 0 ? `; did you mean ${near.map((entry) => entry.label).join(', ')}?` : '';
  return `${start}${hint} (list-api-endpoints lists them)`;
}

/**
 * The SUGGESTIONS tools whose ID or name is closest to `wanted` and at most `most` edits from it,
 * closest first, the earlier first among equals. Once there are enough, a later tool must be
 * closer than the last of them to count, so its distance stops sooner.
 */
function closest(tools: EndpointTool[], wanted: string, prefix: string, most: number): Array<{ label: string; score: number }> {
  const near: Array<{ label: string; score: number }> = [];
  for (const tool of tools) {
    const bound = near.length < SUGGESTIONS ? most : near[near.length - 1].score - 1;
    if (bound < 0) break;
    const name = `${prefix}${tool.name}`;
    const byId = distance(wanted, tool.toolId.toLowerCase(), bound);
    const byName = distance(wanted, name.toLowerCase(), bound);
    const score = Math.min(byId, byName);
    if (score > bound) continue;
    const at = near.findIndex((entry) => entry.score > score);
    near.splice(at === -1 ? near.length : at, 0, { label: byName < byId ? name : tool.toolId, score });
    near.length = Math.min(near.length, SUGGESTIONS);
  }
  return near;
}

/** The path part of a tool ID (`users__---id`) that `id` names as an ID, a method and a path, or a bare path. */
function pathPartOf(id: string): string | undefined {
  const trimmed = id.trim();
  if (trimmed.startsWith('/')) return generateToolId('GET', trimmed).slice('GET::'.length);
  const match = /^([A-Za-z]+)(?:::|\s+)(.*)$/.exec(trimmed);
  if (!match || !isValidHttpMethod(match[1])) return undefined;
  return /[/{}]/.test(match[2]) ? generateToolId('GET', match[2]).slice('GET::'.length) : match[2];
}

/**
 * Levenshtein distance of `a` and `b` when at most `most`, else `most + 1`. Only the band of
 * cells within `most` of the diagonal is computed, and a row past `most` ends it: a wrong ID in
 * Microsoft Graph's 22,361 endpoints took 2.7 s of the worker's thread, computed whole.
 */
export function distance(a: string, b: string, most: number): number {
  if (Math.abs(a.length - b.length) > most) return most + 1;
  const over = most + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => (j <= most ? j : over));
  for (let i = 1; i <= a.length; i++) {
    const current = new Array<number>(b.length + 1).fill(over);
    const from = Math.max(1, i - most);
    const to = Math.min(b.length, i + most);
    if (i <= most) current[0] = i;
    let best = current[0];
    for (let j = from; j <= to; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1), over);
      if (current[j] < best) best = current[j];
    }
    if (best > most) return over;
    previous = current;
  }
  return previous[b.length];
}
