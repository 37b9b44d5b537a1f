import { McpvisorError } from '../../protocol/errors';
import type { ToolResult } from '../../protocol/tool';
import { withBaseQuery } from './compiled';
import { cleanDisplayTexts, displayText } from './display-text';
import { buildInputSchema } from './input-schema';
import type { OperationEntry } from './operations';
import { follow, isObject, type Json, type JsonObject, type RefContext } from './refs';
import { ENUM_VALUES, propertyNames, schemaAt, viewSchema, type SchemaView } from './schema-view';
import type { EndpointTool } from './tools-manager';

/**
 * Characters of a whole get-api-endpoint-schema result as sent (its text, JSON-escaped, and
 * structuredContent). Why: a model reads it; Stripe's answers were 443 KB at the median, GitHub's
 * up to 748 KB, written out whole, indented and twice.
 */
export const MAX_SCHEMA_ANSWER_CHARS = 40_000;
/** Levels of properties shown for each success response in the summary. */
const RESPONSE_DEPTH = 2;
/** As deep as a view goes when the answer has room: deeper schemas are cut for size anyway. */
const FULL_DEPTH = 64;
const DESCRIPTION_CHARS = 1_000;
const SHORT_DESCRIPTION_CHARS = 150;
/** Characters of the operation's own description. */
const OPERATION_DESCRIPTION_CHARS = 2_000;

/** What get-api-endpoint-schema may be asked besides the tool: one response, a part of a schema. */
export interface SchemaQuestion {
  /** A status code as the description writes it (`200`, `4XX`, `default`); any case. */
  response?: string;
  /** Property names joined by dots, into the input schema or into `response`'s schema. */
  at?: string;
}

interface ResponseInfo {
  code: string;
  description: string;
  contentType?: string;
  schema?: Json;
  /** Document the schema's relative refs resolve against. */
  uri: string | undefined;
  headers?: JsonObject;
}

interface Shape {
  depth: number;
  descriptionChars: number;
  /** Levels shown of the success responses' schemas in the summary; -1: no schemas. */
  responseDepth?: number;
  /** Values shown of an enum; default ENUM_VALUES. */
  enumValues?: number;
}

/**
 * get-api-endpoint-schema's answer, compact JSON as text plus the same as structuredContent,
 * within MAX_SCHEMA_ANSWER_CHARS. Without a question: the tool's input schema (its arguments, as
 * invoke-api-endpoint takes them), then the success responses with schemas RESPONSE_DEPTH levels
 * deep, the others by status and description, then security. Whatever is cut for size is named in
 * `note` with the question that shows it. Throws BAD_INPUT for a response or a path not there.
 */
export function schemaAnswer(tool: EndpointTool, entry: OperationEntry, ctx: RefContext, prefix: string, question: SchemaQuestion, baseQuery?: URLSearchParams): ToolResult {
  const head: JsonObject = { toolId: tool.toolId, name: `${prefix}${tool.name}`, method: tool.method, path: tool.path };
  const responses = responsesOf(entry, ctx);
  const built = buildInputSchema(entry, ctx);
  // As the tool takes its arguments: a query parameter the base URL sets is optional there too.
  const input = (baseQuery ? withBaseQuery(built.inputSchema, built.targets, baseQuery) : built.inputSchema) as unknown as JsonObject;
  let answer: JsonObject;
  if (question.response !== undefined || question.at !== undefined) {
    const response = question.response === undefined ? undefined : findResponse(responses, question.response, tool);
    answer = partAnswer(head, input, response, question.at, ctx);
  } else {
    answer = summaryAnswer(head, tool, entry, input, responses, ctx);
  }
  const clean = cleanDisplayTexts(answer);
  return { content: [{ type: 'text', text: JSON.stringify(clean) }], structuredContent: clean };
}

function summaryAnswer(head: JsonObject, tool: EndpointTool, entry: OperationEntry, input: JsonObject, responses: ResponseInfo[], ctx: RefContext): JsonObject {
  const op = entry.operation;
  const successes = responses.filter((r) => /^2/.test(r.code));
  const shown = successes.length > 0 ? successes : responses.filter((r) => r.code === 'default');
  const others = responses.filter((r) => !shown.includes(r));
  const security = (op.security ?? ctx.root.security) as Json | undefined;
  const build = (shape: Shape): JsonObject | undefined => {
    const notes: string[] = [];
    const text = (value: string, chars: number) => (value.length > chars ? `${value.slice(0, chars)}…` : value);
    const answer: JsonObject = { ...head };
    if (typeof op.summary === 'string' && op.summary !== '') answer.summary = text(displayText(op.summary), 300);
    answer.description = text(tool.description, Math.min(OPERATION_DESCRIPTION_CHARS, Math.max(SHORT_DESCRIPTION_CHARS, shape.descriptionChars * 2)));
    if (tool.tags && tool.tags.length > 0) answer.tags = tool.tags;
    const inputView = viewSchema(input, ctx, { depth: shape.depth, descriptionChars: shape.descriptionChars, maxChars: MAX_SCHEMA_ANSWER_CHARS / 2 });
    if (!inputView) return undefined;
    answer.inputSchema = inputView.value;
    if (inputView.leftOut.length > 0) notes.push(`the input schema is shown ${levels(shape.depth)} ('x-left-out' marks the rest): ask again with at: '${inputView.leftOut[0]}' (a dotted path of argument and property names) to see a part`);
    if (inputView.enumsCut.length > 0) notes.push(`an enum shows its first ${ENUM_VALUES} values ('x-enum-left-out' counts the rest): ask again with at: '${inputView.enumsCut[0]}' for all of them`);
    const out: JsonObject = {};
    const responseDepth = shape.responseDepth ?? -1;
    const cut: string[] = [];
    for (const response of shown) {
      const item: JsonObject = { description: text(response.description, Math.max(shape.descriptionChars, 60)) };
      if (response.contentType !== undefined) item.contentType = response.contentType;
      if (response.schema !== undefined && responseDepth >= 0) {
        const view = viewSchema(response.schema, ctx, { depth: responseDepth, descriptionChars: Math.min(shape.descriptionChars, 200), maxChars: MAX_SCHEMA_ANSWER_CHARS / 2 }, response.uri);
        if (!view) return undefined;
        item.schema = view.value;
        if (view.leftOut.length > 0) cut.push(response.code);
      } else if (response.schema !== undefined) {
        cut.push(response.code);
      }
      if (response.headers) item.headers = Object.keys(response.headers);
      out[response.code] = item;
    }
    if (shown.length > 0) answer.responses = out;
    if (cut.length > 0) {
      notes.push(responseDepth >= 0
        ? `response schemas are shown ${levels(responseDepth)} ('x-left-out' marks the rest): ask again with response: '${cut[0]}' for one in full, adding at: '<property path>' for a part of it`
        : `response schemas are left out (too large): ask again with response: '${cut[0]}'`);
    }
    if (others.length > 0) {
      answer.otherResponses = Object.fromEntries(others.map((r) => [r.code, text(r.description, Math.min(Math.max(shape.descriptionChars, 60), 200))]));
      if (others.some((r) => r.schema !== undefined)) notes.push(`ask with response: '<status>' for the schema of one of otherResponses`);
    }
    if (security !== undefined) {
      answer.security = security;
      const schemes = securitySchemes(security, ctx);
      if (schemes) answer.securitySchemes = schemes;
    }
    if (inputView.cutText) notes.push('long descriptions are cut (…)');
    if (notes.length > 0) answer.note = `${notes.join('; ')}.`;
    return answer;
  };
  // The input whole first, with shorter descriptions before fewer levels; descriptions go last.
  const shapes: Shape[] = [];
  for (const descriptionChars of [DESCRIPTION_CHARS, SHORT_DESCRIPTION_CHARS]) {
    for (const responseDepth of [RESPONSE_DEPTH, 1, 0, -1]) shapes.push({ depth: FULL_DEPTH, descriptionChars, responseDepth });
  }
  for (let depth = 8; depth >= 1; depth--) shapes.push({ depth, descriptionChars: DESCRIPTION_CHARS }, { depth, descriptionChars: SHORT_DESCRIPTION_CHARS });
  shapes.push({ depth: 1, descriptionChars: 0 });
  return firstThatFits(shapes, build) ?? argumentNames(head, input);
}

/** One response in detail, or the part of a schema `at` names (the input schema when no response is given). */
function partAnswer(head: JsonObject, input: JsonObject, response: ResponseInfo | undefined, at: string | undefined, ctx: RefContext): JsonObject {
  const base: JsonObject = { ...head };
  let schema: Json | undefined = response ? response.schema : input;
  let uri = response ? response.uri : ctx.rootUri;
  if (response) {
    base.response = response.code;
    base.description = response.description;
    if (response.contentType !== undefined) base.contentType = response.contentType;
  }
  const where = response ? `response ${response.code}'s schema` : 'the input schema';
  if (at !== undefined) {
    if (schema === undefined) throw new McpvisorError('BAD_INPUT', `${head.method} ${head.path} response ${response?.code} has no schema to look into`);
    const found = schemaAt(schema, at, ctx, uri);
    if ('missing' in found) {
      const names = found.names.length === 0 ? 'it has no properties' : `its properties: ${found.names.slice(0, 40).join(', ')}${found.names.length > 40 ? ', …' : ''}`;
      throw new McpvisorError('BAD_INPUT', `no property '${found.missing}' at ${found.at === '' ? 'the top' : `'${found.at}'`} of ${where} (${names})`);
    }
    base.at = at;
    schema = found.value;
    uri = found.uri;
  }
  const build = (shape: Shape): JsonObject | undefined => {
    const answer: JsonObject = { ...base };
    const chars = Math.max(shape.descriptionChars, 200);
    if (typeof answer.description === 'string' && answer.description.length > chars) answer.description = `${answer.description.slice(0, chars)}…`;
    let view: SchemaView | undefined;
    if (schema !== undefined) {
      view = viewSchema(schema, ctx, { depth: shape.depth, descriptionChars: shape.descriptionChars, maxChars: MAX_SCHEMA_ANSWER_CHARS / 2, enumValues: shape.enumValues }, uri);
      if (!view) return undefined;
      answer.schema = view.value;
    }
    if (response?.headers && at === undefined) {
      answer.headers = Object.fromEntries(Object.entries(response.headers).map(([name, header]) => [name, headerDescription(header, ctx, response.uri).slice(0, 200)]));
    }
    if (view && view.leftOut.length > 0) {
      // A stub at the top: the way in is one of its properties (asking for `at` again, or for
      // `at: 'undefined'` after a response alone, showed the same stub or was refused).
      const top = view.leftOut[0] === '(top)' ? propertyNames(schema, ctx, uri) : [];
      const first = [at, view.leftOut[0] === '(top)' ? top[0] : view.leftOut[0]].filter(Boolean).join('.');
      const names = top.length > 1 ? ` (its properties: ${top.slice(0, 20).join(', ')}${top.length > 20 ? ', …' : ''})` : '';
      answer.note = `the schema is shown ${levels(shape.depth)} ('x-left-out' marks the rest): ask again with${response ? ` response: '${response.code}' and` : ''} at: '${first}' to see a part${names}.`;
    }
    if (view && view.enumsCut.length > 0) answer.note = `${answer.note === undefined ? '' : `${answer.note} `}Enums past ${ENUM_VALUES} values are cut for size ('x-enum-left-out' counts the rest).`;
    return answer;
  };
  // More levels before longer descriptions; none only when nothing else fits. Asked for a part,
  // its enums whole first: the summary sends here for the values it cut.
  const shapes: Shape[] = [];
  for (let depth = FULL_DEPTH; depth >= 0; depth = depth > 8 ? 8 : depth - 1) {
    for (const enumValues of [Infinity, ENUM_VALUES]) shapes.push({ depth, descriptionChars: DESCRIPTION_CHARS, enumValues }, { depth, descriptionChars: SHORT_DESCRIPTION_CHARS, enumValues });
  }
  for (let depth = 8; depth >= 0; depth--) shapes.push({ depth, descriptionChars: 0 });
  return firstThatFits(shapes, build) ?? { ...head, note: `the schema is too large to show even as a stub; ask with a longer at: path` };
}

function levels(depth: number): string {
  return depth === 0 ? 'at the top level only' : `${depth} level(s) of properties deep`;
}

function firstThatFits(shapes: Shape[], build: (shape: Shape) => JsonObject | undefined): JsonObject | undefined {
  for (const shape of shapes) {
    const answer = build(shape);
    if (answer && resultChars(answer) <= MAX_SCHEMA_ANSWER_CHARS) return answer;
  }
  return undefined;
}

/** Characters of the result as sent: the compact text, JSON-escaped, and structuredContent. */
function resultChars(answer: JsonObject): number {
  const text = JSON.stringify(answer);
  return JSON.stringify(text).length + text.length + 60;
}

/** The last resort: only the arguments' names, as many as fit. */
function argumentNames(head: JsonObject, input: JsonObject): JsonObject {
  const names = Object.keys(isObject(input.properties) ? input.properties : {});
  const answer: JsonObject = { ...head, arguments: names, note: 'the input schema is too large to show: these are its arguments; ask again with at: \'<argument>\' for one' };
  while (resultChars(answer) > MAX_SCHEMA_ANSWER_CHARS && names.length > 0) names.splice(Math.floor(names.length * 0.9));
  return answer;
}

/** The responses of an operation in the description's order (OpenAPI 3 and Swagger 2.0). */
function responsesOf(entry: OperationEntry, ctx: RefContext): ResponseInfo[] {
  let all: Json | undefined;
  let allUri: string | undefined;
  try {
    // The map may be a `$ref` into another file, whose own refs are relative to that file.
    ({ value: all, uri: allUri } = follow(entry.operation.responses, ctx, entry.uri));
  } catch {
    return [];
  }
  if (!isObject(all)) return [];
  const out: ResponseInfo[] = [];
  for (const [code, raw] of Object.entries(all)) {
    if (code.startsWith('x-')) continue;
    let found: { value: Json | undefined; uri: string | undefined };
    try {
      found = follow(raw, ctx, allUri);
    } catch (error) {
      out.push({ code, description: error instanceof Error ? error.message : String(error), uri: allUri });
      continue;
    }
    const response = isObject(found.value) ? found.value : {};
    const info: ResponseInfo = { code, description: typeof response.description === 'string' ? response.description : '', uri: found.uri };
    if (isObject(response.content)) {
      const types = Object.keys(response.content);
      const type = types.find((t) => /json/i.test(t)) ?? types[0];
      if (type !== undefined) {
        info.contentType = type;
        const media = response.content[type];
        if (isObject(media) && media.schema !== undefined) info.schema = media.schema;
      }
    } else if (response.schema !== undefined) {
      const produces = (entry.operation.produces ?? ctx.root.produces) as Json | undefined;
      if (Array.isArray(produces) && typeof produces[0] === 'string') info.contentType = (produces.find((t) => typeof t === 'string' && /json/i.test(t)) ?? produces[0]) as string;
      info.schema = response.schema;
    }
    if (isObject(response.headers) && Object.keys(response.headers).length > 0) info.headers = response.headers;
    out.push(info);
  }
  return out;
}

/**
 * A response header's description, '' without one. A header may be a `$ref` (to
 * `#/components/headers/…` or a headers file), followed from the response's document.
 */
function headerDescription(header: Json, ctx: RefContext, uri: string | undefined): string {
  try {
    const found = follow(header, ctx, uri).value;
    return isObject(found) && typeof found.description === 'string' ? found.description : '';
  } catch {
    return ''; // a header that cannot be read is still named
  }
}

function findResponse(responses: ResponseInfo[], asked: string, tool: EndpointTool): ResponseInfo {
  const found = responses.find((r) => r.code.toLowerCase() === asked.trim().toLowerCase());
  if (found) return found;
  const codes = responses.map((r) => r.code);
  throw new McpvisorError('BAD_INPUT', `${tool.method} ${tool.path} has no response '${asked}'; ${codes.length > 0 ? `its responses: ${codes.join(', ')}` : 'its description lists none'}`);
}

/** The schemes the requirements name, each in brief (its flows' URLs and scopes left out). */
function securitySchemes(security: Json, ctx: RefContext): JsonObject | undefined {
  const all = (isObject(ctx.root.components) ? ctx.root.components.securitySchemes : undefined) ?? ctx.root.securityDefinitions;
  if (!Array.isArray(security) || !isObject(all)) return undefined;
  const out: JsonObject = {};
  for (const requirement of security) {
    if (!isObject(requirement)) continue;
    for (const name of Object.keys(requirement)) {
      let scheme: Json | undefined;
      try {
        scheme = follow(all[name], ctx).value;
      } catch {
        continue;
      }
      if (!isObject(scheme)) continue;
      const brief: JsonObject = {};
      for (const key of ['type', 'scheme', 'bearerFormat', 'in', 'name', 'openIdConnectUrl', 'flow']) if (typeof scheme[key] === 'string') brief[key] = scheme[key];
      if (isObject(scheme.flows)) brief.flows = Object.keys(scheme.flows);
      out[name] = brief;
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
