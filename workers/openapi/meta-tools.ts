import { McpvisorError } from '../../protocol/errors';
import type { JsonObjectSchema, ToolDescriptor } from '../../protocol/tool';
import { META_TOOL_NAMES } from './meta-names';
import { rankBySearch } from './endpoint-search';
import type { SchemaQuestion } from './endpoint-schema';
import type { EndpointTool } from './tools-manager';

/** Page size of `list-api-endpoints` when none is asked; the most it returns is 200. */
export const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 200;
/**
 * Characters of a `list-api-endpoints` page as compact JSON: endpoints past it start the next
 * page (`nextOffset`), whatever `limit` asked, at least one per page. Why: 200 of Azure's
 * endpoints, with their long paths written twice (path and ID), were 107 KB of text, over what
 * hosts take from one tool result (Claude Code: 25,000 tokens); GitHub's and Stripe's 200 are
 * 46 KB and 57 KB.
 */
export const MAX_PAGE_CHARS = 60_000;
/** Property names a `get-api-endpoint-schema` `at` may go through. */
export const MAX_AT_LEVELS = 256;

export interface MetaTool {
  name: (typeof META_TOOL_NAMES)[number];
  title: string;
  description: string;
  inputSchema: JsonObjectSchema;
  annotations: NonNullable<ToolDescriptor['annotations']>;
}

/**
 * Hints of the two lookups: they read the description this server loaded and call nothing, so a
 * host need not ask the user to confirm each one.
 */
const LOOKUP_HINTS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** spec 000's three meta-tools, in a fixed order. */
export function createMetaTools(): MetaTool[] {
  return [
    {
      name: 'list-api-endpoints',
      title: 'List API endpoints',
      description:
        'List the API endpoints this server can call, with their tool IDs. Filter by tag, HTTP method, path substring or free text; results come in pages (see nextOffset).',
      inputSchema: {
        type: 'object',
        properties: {
          tag: { type: 'string', description: 'Only endpoints with this OpenAPI tag (exact)' },
          method: { type: 'string', description: 'Only this HTTP method (any case)' },
          path: { type: 'string', description: 'Only paths containing this text' },
          search: { type: 'string', description: "What to do, in words (e.g. 'create an issue'), looked for in the summary, path, name, tags and ID (any case); the best matches come first: words in the summary and path count most, then the HTTP method the action word asks for. Endpoints matching none are left out" },
          limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: 'Page size' },
          offset: { type: 'integer', minimum: 0, default: 0, description: 'Endpoints to skip (nextOffset of the previous page)' },
        },
      },
      annotations: LOOKUP_HINTS,
    },
    {
      name: 'get-api-endpoint-schema',
      title: "Get an API endpoint's schema",
      description:
        "Get one endpoint's input schema (the arguments invoke-api-endpoint takes in 'parameters'), its success responses with their schemas two levels deep, the other responses by status, and its security. What is left out for size is named in 'note': ask again with 'response' for one response in full, or 'at' for a part of a schema.",
      inputSchema: {
        type: 'object',
        properties: {
          toolId: { type: 'string', description: 'Tool ID from list-api-endpoints (e.g. GET::users__---id), or the tool name' },
          response: { type: ['string', 'integer'], description: "A status code (e.g. '200', '404', 'default'): that response's description, headers and schema, as deep as fits, instead of the summary" },
          at: { type: 'string', description: "A dotted path of property names (e.g. 'owner.login'; arrays are passed through): that part of the input schema, or of the response's schema when 'response' is given" },
        },
        required: ['toolId'],
      },
      annotations: LOOKUP_HINTS,
    },
    {
      name: 'invoke-api-endpoint',
      title: 'Call an API endpoint',
      description: "Call an endpoint by tool ID. 'parameters' holds the same arguments as the endpoint's tool (see get-api-endpoint-schema); they are validated, path templates are filled in and authentication applies.",
      inputSchema: {
        type: 'object',
        properties: {
          toolId: { type: 'string', description: 'Tool ID from list-api-endpoints, or the tool name' },
          parameters: { type: 'object', description: 'Arguments of the endpoint', additionalProperties: true },
        },
        required: ['toolId'],
      },
      // It calls the API: what it changes depends on the endpoint, so MCP's defaults (destructive) apply.
      annotations: { readOnlyHint: false, openWorldHint: true },
    },
  ];
}

/** Names a model gives these arguments, for the refusal to point at the right one. */
const SYNONYMS: Record<string, string> = {
  query: 'search', q: 'search', keyword: 'search', keywords: 'search', text: 'search', term: 'search', filter: 'search', name: 'search',
  tags: 'tag', category: 'tag', verb: 'method', httpMethod: 'method', http_method: 'method', url: 'path', endpoint: 'path',
  page: 'offset', skip: 'offset', start: 'offset', cursor: 'offset', per_page: 'limit', page_size: 'limit', pageSize: 'limit', size: 'limit', count: 'limit', max: 'limit',
  id: 'toolId', tool_id: 'toolId', tool: 'toolId', operationId: 'toolId', status: 'response', code: 'response', statusCode: 'response', path_in_schema: 'at', property: 'at',
};

/**
 * BAD_INPUT for an argument `name` does not take, naming the one meant where it is plain and
 * those it takes. Why: `{"query": "create issue"}` was ignored, and the unfiltered first page
 * read as "nothing matches".
 */
function refuseUnknown(name: 'list-api-endpoints' | 'get-api-endpoint-schema', args: Record<string, unknown>): void {
  const known = Object.keys(createMetaTools().find((tool) => tool.name === name)!.inputSchema.properties ?? {});
  const unknown = Object.keys(args).filter((key) => !known.includes(key));
  if (unknown.length === 0) return;
  const named = unknown.slice(0, 5).map((key) => {
    const lower = key.toLowerCase();
    const meant = Object.hasOwn(SYNONYMS, key) && known.includes(SYNONYMS[key]) ? SYNONYMS[key] : known.find((name) => name.toLowerCase() === lower || `${name.toLowerCase()}s` === lower);
    return meant ? `'${key}' (did you mean '${meant}'?)` : `'${key}'`;
  });
  throw new McpvisorError('BAD_INPUT', `unknown argument${unknown.length > 1 ? 's' : ''} ${named.join(', ')}; ${name} takes ${known.map((key) => `'${key}'`).join(', ')}`, { data: { unknown } });
}

/** `list-api-endpoints`: a page of the (filtered) endpoints as a JSON object; BAD_INPUT for an argument it does not take. */
export function listEndpoints(tools: EndpointTool[], args: Record<string, unknown>, prefix = ''): Record<string, unknown> {
  refuseUnknown('list-api-endpoints', args);
  const tag = typeof args.tag === 'string' ? args.tag : undefined;
  const method = typeof args.method === 'string' ? args.method.toUpperCase() : undefined;
  const path = typeof args.path === 'string' ? args.path : undefined;
  const search = typeof args.search === 'string' && args.search.trim() !== '' ? args.search.toLowerCase().trim() : undefined;
  const limit = Math.min(MAX_PAGE_SIZE, Math.max(1, Number.isInteger(args.limit) ? (args.limit as number) : DEFAULT_PAGE_SIZE));
  const offset = Math.max(0, Number.isInteger(args.offset) ? (args.offset as number) : 0);
  let matching = tools.filter((t) => (!tag || t.tags?.includes(tag)) && (!method || t.method === method) && (!path || t.path.includes(path)));
  if (search) matching = rankBySearch(matching, search, summaryOf);
  const page: Array<Record<string, unknown>> = [];
  let chars = 0;
  for (const t of matching.slice(offset, offset + limit)) {
    const entry = {
      toolId: t.toolId,
      name: `${prefix}${t.name}`,
      method: t.method,
      path: t.path,
      summary: summaryOf(t),
      ...(t.tags && t.tags.length > 0 ? { tags: t.tags } : {}),
    };
    chars += JSON.stringify(entry).length + 1;
    if (chars > MAX_PAGE_CHARS && page.length > 0) break;
    page.push(entry);
  }
  const end = offset + page.length;
  const next = end < matching.length ? end : undefined;
  return { total: matching.length, offset, limit, ...(next !== undefined ? { nextOffset: next } : {}), endpoints: page };
}

/** What a `get-api-endpoint-schema` call asks besides its tool; BAD_INPUT for a value of the wrong type or an argument it does not take. */
export function schemaQuestion(args: Record<string, unknown>): SchemaQuestion {
  refuseUnknown('get-api-endpoint-schema', args);
  const question: SchemaQuestion = {};
  if (args.response !== undefined) {
    // A model writes a status as a number as often as a string.
    if (typeof args.response !== 'string' && !Number.isInteger(args.response)) throw new McpvisorError('BAD_INPUT', "'response' must be a status code such as '200'");
    question.response = String(args.response);
  }
  if (args.at !== undefined) {
    if (typeof args.at !== 'string' || args.at.trim() === '') throw new McpvisorError('BAD_INPUT', "'at' must be a dotted path of property names such as 'owner.login'");
    // Deeper than any real schema, and each level is a frame of the walk: 16,000 overflowed the stack.
    const levels = args.at.split('.').length;
    if (levels > MAX_AT_LEVELS) throw new McpvisorError('BAD_INPUT', `'at' names at most ${MAX_AT_LEVELS} levels (this one ${levels})`);
    question.at = args.at.trim();
  }
  return question;
}

/** The tool an `invoke-api-endpoint` or `get-api-endpoint-schema` call names; BAD_INPUT otherwise. */
export function requireToolId(args: Record<string, unknown>): string {
  if (typeof args.toolId !== 'string' || args.toolId === '') throw new McpvisorError('BAD_INPUT', "'toolId' is required: a tool ID from list-api-endpoints");
  return args.toolId;
}

function summaryOf(tool: EndpointTool): string {
  const text = tool.summary ?? tool.description;
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
