import { randomBytes } from 'node:crypto';
import type { JsonObjectSchema, ToolDescriptor } from '../../protocol/tool';
import { asciiJson } from '../../protocol/tool-text';
import { packageVersion } from '../../protocol/version';
import { cleanDisplayTexts, displayText, MAY_HOLD_UNSAFE } from './display-text';
import type { ArgumentTarget, BodyInfo } from './input-schema';
import type { LoadedSpec } from './load-spec';
import type { JsonObject } from './refs';
import { isCredentialName } from './redact';
import { declaredResponseHeaders } from './response-headers';
import { buildEndpointTools, type EndpointTool } from './tools-manager';

/** Bump when the shape or meaning of CompiledApi or of the data text changes. */
export const COMPILED_FORMAT = 11;

/** One endpoint tool in the index: what filters, routing and listings read; the rest is in the data text. */
export interface IndexedTool {
  name: string;
  toolId: string;
  method: string;
  path: string;
  tags?: string[];
  resourceName?: string;
  summary?: string;
  /** Where its descriptor, as listed to clients (describeTool), is in the data text: [start, end). */
  listed: [number, number];
  /** Where its CallPlan is in the data text: [start, end). */
  call: [number, number];
}

/** What a call needs besides the input schema, stored as JSON. */
interface CallPlan {
  targets: Array<[string, ArgumentTarget]>;
  body?: BodyInfo;
  /** request.ts planSpec. */
  plan: JsonObject;
  /** Response headers the operation declares (response-headers.ts), shown in results. */
  responseHeaders?: string[];
}

export interface CompiledWarning {
  message: string;
  fields?: Record<string, unknown>;
}

/**
 * The index of a compiled description: built once from the parsed description (compileApi),
 * stored by spec-cache.ts, loaded instead of the description on the next start. Warnings are
 * replayed on load, so logs match a cold start.
 */
export interface CompiledApi {
  format: number;
  packageVersion: string;
  openapiVersion: string;
  isSwagger2: boolean;
  paths: number;
  operations: number;
  tools: IndexedTool[];
  warnings: CompiledWarning[];
  /** Random per build; the data text starts with it, so an index never pairs with another build's data. */
  token: string;
}

/**
 * A compiled description: its index, and its data text (ASCII): the token, a line break, then
 * every tool's listed descriptor and call plan at the offsets the index gives. Why two parts: a
 * start reads the small index as JSON and keeps the data as one string, so GitHub's 1,226 tools
 * cost ~2.5 MB and no parse of 2.9 MB of JSON into objects; the listing goes to the supervisor
 * as text (protocol/tool-text.ts) and a tool's schema and plan are parsed on its first call.
 */
export interface Compiled {
  api: CompiledApi;
  data: string;
}

/**
 * Builds every endpoint tool of `spec` and its request plan. `maxNameLength` is 64 less the
 * namespace prefix. Throws what buildEndpointTools throws (BAD_INPUT for names too long with
 * disableAbbreviation). The result holds no reference into `spec`.
 */
export function compileApi(spec: LoadedSpec, options: { disableAbbreviation: boolean; maxNameLength: number; baseQuery?: string }): Compiled {
  const warnings: CompiledWarning[] = [];
  const built = buildEndpointTools(spec, options.disableAbbreviation, options.maxNameLength, (message, fields) => warnings.push(fields === undefined ? { message } : { message, fields }));
  if (options.baseQuery) {
    const base = new URLSearchParams(options.baseQuery);
    for (const tool of built) tool.inputSchema = withBaseQuery(tool.inputSchema, tool.targets, base);
  }
  const token = randomBytes(8).toString('hex');
  const parts = [`${token}\n`];
  let at = parts[0].length;
  const put = (json: string): [number, number] => {
    parts.push(json, '\n');
    at += json.length + 1;
    return [at - json.length - 1, at - 1];
  };
  const tools = built.map((tool): IndexedTool => {
    let json = asciiJson(describeTool(tool));
    if (MAY_HOLD_UNSAFE.test(json)) json = asciiJson(cleanDisplayTexts(describeTool(tool)));
    const listed = put(json);
    const responseHeaders = declaredResponseHeaders(tool.entry!, spec);
    const plan: CallPlan = { targets: [...tool.targets], ...(tool.body !== undefined ? { body: tool.body } : {}), plan: tool.planSpec!, ...(responseHeaders ? { responseHeaders } : {}) };
    return {
      name: tool.name,
      toolId: tool.toolId,
      method: tool.method,
      path: tool.path,
      tags: tool.tags,
      ...(tool.resourceName !== undefined ? { resourceName: tool.resourceName } : {}),
      ...(tool.summary !== undefined ? { summary: displayText(tool.summary) } : {}),
      listed,
      call: put(asciiJson(plan)),
    };
  });
  const api: CompiledApi = {
    format: COMPILED_FORMAT,
    packageVersion: packageVersion(),
    openapiVersion: spec.version,
    isSwagger2: spec.isSwagger2,
    paths: Object.keys(spec.root.paths as JsonObject).filter((key) => key.startsWith('/')).length,
    operations: tools.length,
    tools,
    warnings,
    token,
  };
  return { api, data: parts.join('') };
}

/**
 * A query parameter the base URL sets (`?api-version=2024-01-01`, Azure) is optional: its value
 * goes out unless the call gives another (request.ts: the call's value replaces the base's).
 * Required, a model had to send one and would replace the version the operator pinned with
 * whatever it guessed. Its description says so.
 */
export function withBaseQuery<T extends Record<string, unknown>>(schema: T, targets: Iterable<[string, ArgumentTarget]>, base: URLSearchParams): T {
  const properties = { ...(schema.properties as Record<string, Record<string, unknown>>) };
  let required = Array.isArray(schema.required) ? [...(schema.required as string[])] : undefined;
  let changed = false;
  for (const [arg, target] of targets) {
    if (target.kind !== 'parameter' || target.in !== 'query' || !base.has(target.name) || !properties[arg]) continue;
    // A credential's value (redact.ts's rule: `api_key`, not `api-version`) would reach every model that lists the tools.
    const set = isCredentialName(target.name) ? `${target.name} (its value is not shown)` : `${target.name}=${base.get(target.name)}`;
    const note = `Optional: the base URL sets ${set}; give it to send another value.`;
    properties[arg] = { ...properties[arg], description: [properties[arg].description, note].filter(Boolean).join(' ') };
    required = required?.filter((name) => name !== arg);
    changed = true;
  }
  if (!changed) return schema;
  const { required: _dropped, ...rest } = schema;
  return { ...rest, properties, ...(required && required.length > 0 ? { required } : {}) } as unknown as T;
}

/** The tool as listed to clients (names without the namespace prefix; `name` first, as tool-text.ts needs). */
function describeTool(tool: Pick<EndpointTool, 'name' | 'summary' | 'description' | 'inputSchema' | 'method'>): ToolDescriptor {
  const { summary, method } = tool;
  return {
    name: tool.name,
    ...(typeof summary === 'string' && summary !== '' ? { title: summary } : {}),
    description: tool.description,
    inputSchema: tool.inputSchema,
    annotations: hints(method),
  };
}

/**
 * MCP's tool hints from the HTTP method. `destructiveHint: false` promises "only additive updates",
 * on which a host may skip its confirmation: so it is false only for the read-only methods, true
 * for PUT, PATCH and DELETE (they replace, change or remove), and left out for POST, whose effect
 * the method does not tell (a create, a merge, a transfer): MCP's default, true, then applies.
 */
function hints(method: string): NonNullable<ToolDescriptor['annotations']> {
  const readOnly = method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
  return {
    readOnlyHint: readOnly,
    ...(method === 'POST' ? {} : { destructiveHint: !readOnly }),
    idempotentHint: method !== 'POST' && method !== 'PATCH',
    openWorldHint: true,
  };
}

/**
 * The EndpointTool of an indexed tool: the index's fields as they are; its descriptor and call
 * plan parsed from the data text when first read.
 */
export class StoredTool implements EndpointTool {
  readonly name: string;
  readonly toolId: string;
  readonly method: string;
  readonly path: string;
  readonly tags?: string[];
  readonly resourceName?: string;
  readonly summary?: string;
  readonly #data: string;
  readonly #at: IndexedTool;
  #descriptor?: ToolDescriptor;
  #call?: { targets: Map<string, ArgumentTarget>; body?: BodyInfo; plan: JsonObject; responseHeaders?: string[] };

  constructor(tool: IndexedTool, data: string) {
    this.name = tool.name;
    this.toolId = tool.toolId;
    this.method = tool.method;
    this.path = tool.path;
    if (tool.tags !== undefined) this.tags = tool.tags;
    if (tool.resourceName !== undefined) this.resourceName = tool.resourceName;
    if (tool.summary !== undefined) this.summary = tool.summary;
    this.#data = data;
    this.#at = tool;
  }

  /** The descriptor's JSON text, as stored. */
  get listedJson(): string {
    return this.#data.slice(this.#at.listed[0], this.#at.listed[1]);
  }

  get descriptor(): ToolDescriptor {
    return (this.#descriptor ??= JSON.parse(this.listedJson) as ToolDescriptor);
  }

  get description(): string {
    return this.descriptor.description;
  }

  get inputSchema(): JsonObjectSchema {
    return this.descriptor.inputSchema;
  }

  get targets(): Map<string, ArgumentTarget> {
    return this.#plan().targets;
  }

  get body(): BodyInfo | undefined {
    return this.#plan().body;
  }

  get planSpec(): JsonObject {
    return this.#plan().plan;
  }

  get responseHeaders(): string[] | undefined {
    return this.#plan().responseHeaders;
  }

  #plan(): { targets: Map<string, ArgumentTarget>; body?: BodyInfo; plan: JsonObject; responseHeaders?: string[] } {
    if (!this.#call) {
      const stored = JSON.parse(this.#data.slice(this.#at.call[0], this.#at.call[1])) as CallPlan;
      this.#call = { targets: new Map(stored.targets), ...(stored.body !== undefined ? { body: stored.body } : {}), plan: stored.plan, ...(stored.responseHeaders ? { responseHeaders: stored.responseHeaders } : {}) };
    }
    return this.#call;
  }
}

/**
 * True when `value` is an index of CompiledApi's shape, format and this package's version whose
 * offsets all fall inside `data`, which starts with its token. A light check (tools are not
 * validated in depth): artifacts are written by us into a 0700 directory.
 */
export function isCurrentCompiled(value: unknown, data: string): value is CompiledApi {
  const api = value as Partial<CompiledApi> | null;
  if (api === null || typeof api !== 'object' || api.format !== COMPILED_FORMAT || api.packageVersion !== packageVersion()) return false;
  if (typeof api.openapiVersion !== 'string' || typeof api.paths !== 'number' || !Array.isArray(api.tools) || !Array.isArray(api.warnings)) return false;
  if (typeof api.token !== 'string' || !data.startsWith(`${api.token}\n`)) return false;
  if (!api.warnings.every((w) => w !== null && typeof w === 'object' && typeof w.message === 'string')) return false;
  const inside = (span: unknown) => Array.isArray(span) && span.length === 2 && Number.isInteger(span[0]) && Number.isInteger(span[1]) && span[0] > 0 && span[0] < span[1] && span[1] <= data.length;
  return api.tools.every(
    (t) => t !== null && typeof t === 'object' && typeof t.name === 'string' && typeof t.toolId === 'string' && typeof t.path === 'string' && typeof t.method === 'string' && inside(t.listed) && inside(t.call),
  );
}
