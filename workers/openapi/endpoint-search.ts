import type { EndpointTool } from './tools-manager';

/** Words a search drops: an assistant asks "list my repositories", not "list repositories". */
const STOP_WORDS = new Set(['a', 'an', 'the', 'my', 'our', 'of', 'for', 'to', 'in', 'on', 'by', 'with', 'and', 'or', 'all', 'me', 'i', 'from', 'into', 'at', 'is', 'it', 'this', 'that', 'some', 'any', 'new', 'given', 'specific']);

/**
 * The HTTP methods an action word asks for. A bonus, never a filter: Stripe updates with POST,
 * GitHub stars with PUT, Slack posts everything.
 */
// Maps, not objects: a search word is anything, and `constructor` found Object in an object.
const VERB_METHODS = new Map<string, string[]>();
for (const [methods, verbs] of [
  [['GET'], 'get retrieve read fetch show find view download list search lookup look check'],
  [['POST', 'PUT'], 'create add make post send open upload submit trigger start invite comment fork star follow request pay confirm capture attach refund run rerun dispatch publish generate merge schedule'],
  [['DELETE', 'POST'], 'delete remove cancel unstar unfollow destroy void detach revoke'],
  [['PATCH', 'PUT', 'POST'], 'update edit modify change set rename close scale replace patch lock'],
] as const) {
  for (const verb of verbs.split(' ')) VERB_METHODS.set(verb, [...methods]);
}

/** Action words that ask the same: "get channel history" is Slack's "Fetches a conversation's history". */
const SAME_ACTION = [
  'get retrieve fetch read show view return download',
  'list return fetch get',
  'create add make open initiate post send submit upload',
  'delete remove destroy cancel',
  'update edit modify change set patch replace',
  'find search lookup look get',
].map((group) => new Set(group.split(' ')));

/** 1.5 when a summary begins with the search's action word, 1 with one asking the same, else 0. */
function actionMatch(action: string, first: string | undefined): number {
  if (first === undefined) return 0;
  if (first === action) return 1.5;
  return SAME_ACTION.some((group) => group.has(action) && group.has(first)) ? 1 : 0;
}

/** Words that name the same thing in a path: GitHub's paths say `repos`, its summaries "repository". */
const SAME_WORD = new Map(Object.entries({ repository: 'repo', repositories: 'repo', configuration: 'config', organization: 'org', organisations: 'org', organisation: 'org' }));

/** A word as compared: lower case, singular (`issues`, `policies`, `branches` → `issue`, `policy`, `branch`). */
export function stem(word: string): string {
  const same = SAME_WORD.get(word);
  if (same) return same;
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && /(ss|x|ch|sh)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/** The words of a text but stop words: split at anything not a letter or digit (of any script) and at camelCase humps (`postMessage`, `ConfigMap`). */
export function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '' && !STOP_WORDS.has(word))
    .map(stem);
}

/** What a search compares, per tool, worked out once: the words of each part and all of them as one text. */
interface Indexed {
  summary: string[];
  /** Literal path segments, without `{parameters}`. */
  path: string[];
  /** The last literal segment: the resource the endpoint acts on. */
  resource: string[];
  name: string[];
  tags: string[];
  text: string;
  /** The path names the caller (`/user/...`, `/me/...`) or the summary says "authenticated" or "current user". */
  own: boolean;
}

const indexes = new WeakMap<EndpointTool, Indexed>();

function indexOf(tool: EndpointTool, summaryOf: (tool: EndpointTool) => string): Indexed {
  let index = indexes.get(tool);
  if (!index) {
    const summary = summaryOf(tool);
    const literal = tool.path.split('/').filter((segment) => segment !== '' && !segment.startsWith('{'));
    const text = `${tool.name}\n${tool.path}\n${tool.toolId}\n${summary}\n${(tool.tags ?? []).join(' ')}`.toLowerCase();
    index = {
      summary: words(summary.replace(/<[^>]*>/g, ' ')),
      path: literal.flatMap(words),
      resource: words(literal.at(-1) ?? ''),
      name: words(tool.name),
      tags: (tool.tags ?? []).flatMap(words),
      text,
      own: /^\/(user|me)(\/|$)/.test(tool.path) || /\bauthenticated\b|\bcurrent user/.test(text),
    };
    indexes.set(tool, index);
  }
  return index;
}

/** 1 for the word itself, 0.5 for a longer word it begins (`review` in `reviewers`), else 0. */
function match(word: string, tokens: string[]): number {
  let best = 0;
  for (const token of tokens) {
    if (token === word) return 1;
    if (word.length >= 4 && token.startsWith(word)) best = 0.5;
  }
  return best;
}

/**
 * The tools that match `search`, best first; those matching none of its words are left out.
 *
 * Each word scores where it is found best, as a whole word or its plural: the summary and the
 * path weigh most (GitHub's summaries read like the question: "Create a customer"), then the name
 * and the tags; a word found only inside another (`pay` in `payments`) counts little. Then smaller
 * bonuses: the HTTP method the leading action word asks for, a summary beginning with that word,
 * how much of the path's last segment and of the summary the search names ("Get Track" before
 * "Get Several Tracks"), the caller's own endpoints for "my"; last, the shorter path. Measured
 * on test/fixtures/openapi/search-queries.ts with bench/openapi/search-ranking.ts: a weight
 * changed there is a weight checked there.
 */
export function rankBySearch(tools: EndpointTool[], search: string, summaryOf: (tool: EndpointTool) => string): EndpointTool[] {
  // Letters of any script: a description in Japanese or German is searched in its own words.
  const raw = search.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((word) => word !== '');
  const mine = raw.some((word) => word === 'my' || word === 'me' || word === 'mine');
  const kept = raw.filter((word) => !STOP_WORDS.has(word));
  const query = [...new Set((kept.length > 0 ? kept : raw).map(stem))];
  // No letter or digit (`.`, `*`): as no search, like an empty one, not as one nothing matches.
  if (query.length === 0) return tools;
  const methods = VERB_METHODS.get(kept[0] ?? '');
  const action = kept.length > 1 ? stem(kept[0]) : undefined;
  const scored: Array<{ tool: EndpointTool; score: number }> = [];
  for (const tool of tools) {
    const index = indexOf(tool, summaryOf);
    let score = 0;
    let found = 0;
    for (const word of query) {
      const best = Math.max(3 * match(word, index.summary), 3 * match(word, index.path), 2 * match(word, index.name), match(word, index.tags));
      if (best > 0) {
        score += best;
        found++;
      } else if (index.text.includes(word)) {
        score += 0.5;
        found++;
      }
    }
    if (found === 0) continue;
    // The first method named is the usual one: delete is DELETE, though some APIs POST it.
    if (methods?.includes(tool.method)) score += tool.method === methods[0] ? 2 : 1;
    if (action !== undefined) score += actionMatch(action, index.summary[0]);
    if (index.resource.length > 0) score += (2 * index.resource.filter((word) => query.includes(word)).length) / index.resource.length;
    if (index.summary.length > 0) score += (2 * index.summary.filter((word) => query.includes(word)).length) / index.summary.length;
    if (mine && index.own) score += 1.5;
    scored.push({ tool, score });
  }
  // Sort is stable: among equals the shorter path, then the description's order.
  return scored.sort((a, b) => b.score - a.score || a.tool.path.length - b.tool.path.length).map((entry) => entry.tool);
}
