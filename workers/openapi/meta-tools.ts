import { McpvisorError } from '../../protocol/errors';
import type { JsonObjectSchema } from '../../protocol/tool';
import { META_TOOL_NAMES } from './meta-names';
import type { OperationEntry } from './operations';
import { deref, follow, type Json, type JsonObject, type RefContext } from './refs';
import type { EndpointTool } from './tools-manager';
import { withinBudget } from './schema-budget';

/** Page size of `list-api-endpoints` when none is asked; the most it returns is 200. */
export const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 200;
/** Characters of a serialized `get-api-endpoint-schema` answer before responses are trimmed. */
const MAX_SCHEMA_CHARS = 200_000;

export interface MetaTool {
  name: (typeof META_TOOL_NAMES)[number];
  description: string;
  inputSchema: JsonObjectSchema;
}

/** spec 000's three meta-tools, in a fixed order. */
export function createMetaTools(): MetaTool[] {
  return [
    {
      name: 'list-api-endpoints',
      description:
        'List the API endpoints this server can call, with their tool IDs. Filter by tag, HTTP method, path substring or free text; results come in pages (see nextOffset).',
      inputSchema: {
        type: 'object',
        properties: {
          tag: { type: 'string', description: 'Only endpoints with this OpenAPI tag (exact)' },
          method: { type: 'string', description: 'Only this HTTP method (any case)' },
          path: { type: 'string', description: 'Only paths containing this text' },
          search: { type: 'string', description: 'Words to look for in the name, path, summary, tags and ID (any case); endpoints matching more of them come first, those matching none are left out' },
          limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: 'Page size' },
          offset: { type: 'integer', minimum: 0, default: 0, description: 'Endpoints to skip (nextOffset of the previous page)' },
        },
      },
    },
    {
      name: 'get-api-endpoint-schema',
      description: 'Get the input schema, parameters, request body, responses and security of one endpoint, with $refs resolved.',
      inputSchema: {
        type: 'object',
        properties: { toolId: { type: 'string', description: 'Tool ID from list-api-endpoints (e.g. GET::users__---id), or the tool name' } },
        required: ['toolId'],
      },
    },
    {
      name: 'invoke-api-endpoint',
      description: "Call an endpoint by tool ID. 'parameters' holds the same arguments as the endpoint's tool (see get-api-endpoint-schema); they are validated, path templates are filled in and authentication applies.",
      inputSchema: {
        type: 'object',
        properties: {
          toolId: { type: 'string', description: 'Tool ID from list-api-endpoints, or the tool name' },
          parameters: { type: 'object', description: 'Arguments of the endpoint', additionalProperties: true },
        },
        required: ['toolId'],
      },
    },
  ];
}

/** `list-api-endpoints`: a page of the (filtered) endpoints as a JSON object. */
export function listEndpoints(tools: EndpointTool[], args: Record<string, unknown>, prefix = ''): Record<string, unknown> {
  const tag = typeof args.tag === 'string' ? args.tag : undefined;
  const method = typeof args.method === 'string' ? args.method.toUpperCase() : undefined;
  const path = typeof args.path === 'string' ? args.path : undefined;
  const search = typeof args.search === 'string' && args.search.trim() !== '' ? args.search.toLowerCase().trim() : undefined;
  const limit = Math.min(MAX_PAGE_SIZE, Math.max(1, Number.isInteger(args.limit) ? (args.limit as number) : DEFAULT_PAGE_SIZE));
  const offset = Math.max(0, Number.isInteger(args.offset) ? (args.offset as number) : 0);
  let matching = tools.filter((t) => (!tag || t.tags?.includes(tag)) && (!method || t.method === method) && (!path || t.path.includes(path)));
  if (search) matching = bySearch(matching, search);
  const page = matching.slice(offset, offset + limit).map((t) => ({
    toolId: t.toolId,
    name: `${prefix}${t.name}`,
    method: t.method,
    path: t.path,
    summary: summaryOf(t),
    ...(t.tags && t.tags.length > 0 ? { tags: t.tags } : {}),
  }));
  const next = offset + limit < matching.length ? offset + limit : undefined;
  return { total: matching.length, offset, limit, ...(next !== undefined ? { nextOffset: next } : {}), endpoints: page };
}

/** Words a search drops: an assistant asks "list my repositories", not "list repositories". */
const STOP_WORDS = new Set(['a', 'an', 'the', 'my', 'our', 'of', 'for', 'to', 'in', 'on', 'by', 'with', 'and', 'or', 'all', 'me', 'i', 'get']);

/**
 * The tools that match `search` (lower case), best first. Each word of it found in a tool's name, path, ID, summary or tags counts one (a plural
 * also matches its singular: `issues` finds `issue`); the whole text found counts one more. A
 * single literal substring found nothing for "create issue" when the tool is `issues-create`.
 */
function bySearch(tools: EndpointTool[], search: string): EndpointTool[] {
  const all = search.split(/\s+/);
  const kept = all.filter((word) => !STOP_WORDS.has(word));
  const words = (kept.length > 0 ? kept : all).map((word) => (word.length > 3 && word.endsWith('s') ? word.slice(0, -1) : word));
  const scored: Array<{ tool: EndpointTool; score: number }> = [];
  for (const tool of tools) {
    const text = `${tool.name}\n${tool.path}\n${tool.toolId}\n${summaryOf(tool)}\n${(tool.tags ?? []).join(' ')}`.toLowerCase();
    let score = text.includes(search) ? 1 : 0;
    for (const word of words) if (text.includes(word)) score++;
    if (score > 0) scored.push({ tool, score });
  }
  // Among equals the shorter path first (the general endpoint before the nested ones); sort is
  // stable, so then the description's order.
  return scored.sort((a, b) => b.score - a.score || a.tool.path.length - b.tool.path.length).map((entry) => entry.tool);
}

/**
 * `get-api-endpoint-schema`: resolved schemas of one endpoint (`entry`, its operation in the
 * description `ctx`); each part cut to MAX_SCHEMA_CHARS (fit), responses trimmed further when the
 * whole is larger.
 */
export function endpointSchema(tool: EndpointTool, entry: OperationEntry, ctx: RefContext, prefix = ''): Record<string, unknown> {
  const op = entry.operation;
  const requestBody = op.requestBody !== undefined ? fit(deref(follow(op.requestBody, ctx).value, ctx)) : undefined;
  let responses = fit(deref(op.responses as Json | undefined, ctx)) as JsonObject | undefined;
  const security = (op.security ?? ctx.root.security) as Json | undefined;
  const schemes = (ctx.root.components as JsonObject | undefined)?.securitySchemes ?? ctx.root.securityDefinitions;
  const out: Record<string, unknown> = {
    toolId: tool.toolId,
    name: `${prefix}${tool.name}`,
    method: tool.method,
    path: tool.path,
    summary: op.summary,
    description: tool.description,
    tags: tool.tags,
    inputSchema: tool.inputSchema,
    parameters: entry.parameters.map((p) => fit(deref(p as unknown as Json, ctx))),
    requestBody,
    responses,
    security,
    securitySchemes: security ? fit(deref(schemes as Json | undefined, ctx)) : undefined,
  };
  if (JSON.stringify(out).length > MAX_SCHEMA_CHARS && responses) {
    // Keep success responses only, then only their status and description.
    responses = Object.fromEntries(Object.entries(responses).filter(([code]) => /^2/.test(code) || code === 'default'));
    out.responses = responses;
    if (JSON.stringify(out).length > MAX_SCHEMA_CHARS) {
      out.responses = Object.fromEntries(Object.entries(responses).map(([code, r]) => [code, { description: (r as JsonObject)?.description ?? '' }]));
      out.note = 'response schemas left out: too large';
    }
  }
  return out;
}

/**
 * A written-out part within MAX_SCHEMA_CHARS, cut at whole levels (schema-budget.ts). Why: refs
 * written out share their targets, so 40 schemas that each use the one before twice are a small
 * graph whose text is 2^40 copies; measuring or serialising it whole took a worker to 1.7 GB.
 */
function fit(part: Json | undefined): Json | undefined {
  return part !== null && typeof part === 'object' && !Array.isArray(part) ? withinBudget(part, MAX_SCHEMA_CHARS) : part;
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
