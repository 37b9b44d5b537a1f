import { McpvisorError } from '../../protocol/errors';
import type { JsonObjectSchema } from '../../protocol/tool';
import { buildInputSchema, markDeprecated, type ArgumentTarget, type BodyInfo } from './input-schema';
import { collectOperations, skipFields, skipReason, type OperationEntry } from './operations';
import type { JsonObject, RefContext } from './refs';
import { META_TOOL_NAMES } from './meta-names';
import { dedupeToolNames, generateToolName, MAX_TOOL_NAME_LENGTH, toolNameSource } from './tool-name';
import { fitSchemas } from './schema-budget';
import { planSpec } from './request';

/** spec 000's ITool. */
export interface ITool {
  name: string;
  description: string;
  inputSchema: JsonObjectSchema;
  tags?: string[];
  method: string;
  resourceName?: string;
  toolId: string;
}

/** An endpoint tool with what the worker needs to call it (never sent to clients). */
export interface EndpointTool extends ITool {
  path: string;
  /** The operation's summary (titles, listings). */
  summary?: string;
  targets: Map<string, ArgumentTarget>;
  body?: BodyInfo;
  /** The operation as read from the description; absent on tools loaded from a compiled artifact (compiled.ts). */
  entry?: OperationEntry;
  /** request.ts planSpec, precomputed: present on tools built from a description and on compiled tools. */
  planSpec?: JsonObject;
  /** Response headers the operation declares, lower case (compiled tools). */
  responseHeaders?: string[];
}

export interface ToolFilter {
  toolsMode?: 'all' | 'dynamic' | 'explicit';
  includeTools?: string[];
  includeTags?: string[];
  includeResources?: string[];
  includeOperations?: string[];
  /** Tags whose operations are never tools nor reachable through the meta-tools, in any mode. */
  excludeTags?: string[];
}

const FILTER_KEYS = ['toolsMode', 'includeTools', 'includeTags', 'includeResources', 'includeOperations', 'excludeTags'] as const;
/** Entries of a filter list a log line shows; the rest are counted. */
const SHOWN_ENTRIES = 20;

/**
 * The filters as a log line shows them: the filter keys only (the service passes the whole API
 * configuration as its filter, which put its base URL, headers and every other setting in the
 * warning), each list cut at SHOWN_ENTRIES with a count (16,000 includeTools entries were one line).
 */
function shownFilter(filter: ToolFilter): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const key of FILTER_KEYS) {
    const value = filter[key];
    if (value === undefined) continue;
    shown[key] = Array.isArray(value) && value.length > SHOWN_ENTRIES ? [...value.slice(0, SHOWN_ENTRIES), `… ${value.length} in all`] : value;
  }
  return shown;
}

export interface GenerateOptions {
  disableAbbreviation?: boolean;
  /** Longest name; default 64, less when the supervisor adds a namespace prefix. */
  maxNameLength?: number;
  /** Warnings and skipped operations go here. */
  warn?: (message: string, fields?: Record<string, unknown>) => void;
}

export interface ToolsManagerStats {
  endpointTools: number;
  paths: number;
  operations: number;
  filtering?: { applied: boolean; includedTags?: string[]; includedOperations?: string[]; excludedTags?: string[] };
}

/**
 * Turns a description into endpoint tools and applies spec 000's modes and filters.
 *
 * Decisions (spec 000: "not shown"):
 * - includeTools, when given, decides alone, in `all` mode too (as the reference documents): the
 *   tools it names are served whatever includeTags, includeResources and includeOperations say,
 *   with a warning that those were not applied; otherwise a tool must match every filter given
 *   (they narrowed the named tools until none was left). includeTools matches tool IDs (the
 *   method in any case, `get::users`, as invoke-api-endpoint takes it and the reference matched)
 *   and names without regard to case; includeTags is case-sensitive (spec); includeResources
 *   matches the resource name (`users`, any case) or a path prefix (`/users` matches
 *   `/users/{id}`); includeOperations matches the method in any case.
 * - `explicit` without includeTools gives no endpoint tools (and the warning).
 * - excludeTags (not in spec 000; the reference's deny filter, `--exclude-tag`) wins over every
 *   include filter and applies in every mode, the meta-tools' reach included. Any case: a deny
 *   list that missed `Admin` for `admin` would expose what it was written to hide.
 * - Meta-tools reach only the tools that pass the filters.
 */
export class ToolsManager {
  readonly #filter: ToolFilter;
  readonly #ctx: RefContext;
  #all: EndpointTool[] = [];
  #byId = new Map<string, EndpointTool>();
  #byName = new Map<string, EndpointTool>();
  #filtered: EndpointTool[] = [];
  /** Set when the tools came without the description (fromTools). */
  #paths?: number;

  constructor(filter: ToolFilter, spec: RefContext | JsonObject) {
    this.#filter = filter;
    this.#ctx = 'root' in spec && 'external' in spec ? (spec as RefContext) : { root: spec as JsonObject, external: new Map() };
  }

  /** Builds every endpoint tool, names unique (see tool-name.ts), and applies the filters. */
  generateTools(disableAbbreviation = false, options: GenerateOptions = {}): EndpointTool[] {
    const warn = options.warn ?? (() => undefined);
    const tools = buildEndpointTools(this.#ctx, disableAbbreviation, options.maxNameLength ?? MAX_TOOL_NAME_LENGTH, warn);
    return this.#install(tools, warn);
  }

  /**
   * A manager over tools built earlier (compiled.ts `fromCompiledTool`), without the description:
   * `paths` is the description's path count for getStats. The filters apply as in generateTools.
   */
  static fromTools(filter: ToolFilter, tools: EndpointTool[], paths: number, warn: (message: string, fields?: Record<string, unknown>) => void = () => undefined): ToolsManager {
    const manager = new ToolsManager(filter, { paths: {} });
    manager.#paths = paths;
    manager.#install(tools, warn);
    return manager;
  }

  #install(tools: EndpointTool[], warn: (message: string, fields?: Record<string, unknown>) => void): EndpointTool[] {
    this.#all = tools;
    this.#byId = new Map(tools.map((t) => [t.toolId, t]));
    this.#byName = new Map(tools.map((t) => [t.name, t]));
    this.#filtered = this.filterTools(tools, warn);
    return this.#filtered;
  }

  /** The tools that pass the mode and filters; warns for a tag without operations and for none left. */
  filterTools(tools: EndpointTool[], warn: (message: string, fields?: Record<string, unknown>) => void = () => undefined): EndpointTool[] {
    const f = this.#filter;
    const mode = f.toolsMode ?? 'all';
    const wantTools = f.includeTools && f.includeTools.length > 0 ? f.includeTools : undefined;
    if (mode === 'explicit' && !wantTools) {
      warn('toolsMode explicit without includeTools: no endpoint tools');
      return [];
    }
    const ids = new Set(wantTools?.map(normaliseToolId));
    const names = new Set(wantTools?.map((t) => t.toLowerCase()));
    const tags = f.includeTags && f.includeTags.length > 0 ? new Set(f.includeTags) : undefined;
    const resources = f.includeResources && f.includeResources.length > 0 ? resourceMatcher(f.includeResources) : undefined;
    const methods = f.includeOperations && f.includeOperations.length > 0 ? new Set(f.includeOperations.map((m) => m.toUpperCase())) : undefined;
    // Sets, not a search of every tool per entry: 8,000 entries over 8,000 operations took 4 s.
    if (tags) {
      const used = new Set(tools.flatMap((t) => t.tags ?? []));
      const byCase = new Map([...used].map((tag) => [tag.toLowerCase(), tag]));
      for (const tag of tags) {
        if (used.has(tag)) continue;
        // Case-sensitive as spec 000 says; the reference matched any case, so say what was meant.
        const other = byCase.get(tag.toLowerCase());
        warn(`no operations for tag '${tag}'${other === undefined ? '' : ` (tags are case-sensitive: the description has '${other}')`}`, { tag });
      }
    }
    if (wantTools && (tags || methods || resources)) {
      const unused = [tags && 'includeTags', resources && 'includeResources', methods && 'includeOperations'].filter(Boolean).join(', ');
      warn(`includeTools is given, so ${unused} ${unused.includes(',') ? 'are' : 'is'} not applied: the tools it names are served`, { ignored: unused });
    }
    const denied = f.excludeTags && f.excludeTags.length > 0 ? new Set(f.excludeTags.map((tag) => tag.toLowerCase())) : undefined;
    if (denied) {
      const used = new Set(tools.flatMap((t) => t.tags ?? []).map((tag) => tag.toLowerCase()));
      for (const tag of f.excludeTags ?? []) if (!used.has(tag.toLowerCase())) warn(`excludeTags entry '${tag}' matches no operation's tag`, { tag });
    }
    const out = tools.filter((tool) => {
      if (denied && (tool.tags ?? []).some((tag) => denied.has(tag.toLowerCase()))) return false;
      if (wantTools && !ids.has(tool.toolId) && !names.has(tool.name.toLowerCase())) return false;
      if (wantTools) return true;
      if (tags && !(tool.tags ?? []).some((tag) => tags.has(tag))) return false;
      if (methods && !methods.has(tool.method)) return false;
      if (resources && !resources(tool)) return false;
      return true;
    });
    if (wantTools) {
      const allIds = new Set(tools.map((t) => t.toolId));
      const allNames = new Set(tools.map((t) => t.name));
      for (const want of wantTools) {
        if (!allIds.has(normaliseToolId(want)) && !allNames.has(want.toLowerCase()) && !META_TOOL_NAMES.includes(want as never)) warn(`includeTools entry '${want}' matches no operation`, { tool: want });
      }
    }
    if (out.length === 0 && (mode !== 'all' || wantTools || tags || methods || resources || denied)) warn('no tools left after filtering', { filter: shownFilter(f) });
    return out;
  }

  /** An endpoint tool that passed the filters, by tool ID, or by name when `byName`. */
  getToolById(id: string, byName = false): EndpointTool | undefined {
    const tool = this.#byId.get(id) ?? (byName ? this.#byName.get(id.toLowerCase()) : undefined);
    return tool && this.#filtered.includes(tool) ? tool : undefined;
  }

  /** The filtered endpoint tools (whatever the mode exposes as tools). */
  getFilteredTools(): EndpointTool[] {
    return this.#filtered;
  }

  getStats(): ToolsManagerStats {
    const f = this.#filter;
    const applied = Boolean(f.includeTools?.length || f.includeTags?.length || f.includeResources?.length || f.includeOperations?.length || f.excludeTags?.length || (f.toolsMode ?? 'all') !== 'all');
    return {
      endpointTools: this.#filtered.length,
      paths: this.#paths ?? Object.keys((this.#ctx.root.paths ?? {}) as object).filter((key) => key.startsWith('/')).length,
      operations: this.#all.length,
      filtering: {
        applied,
        ...(f.includeTags?.length ? { includedTags: f.includeTags } : {}),
        ...(f.includeOperations?.length ? { includedOperations: f.includeOperations } : {}),
        ...(f.excludeTags?.length ? { excludedTags: f.excludeTags } : {}),
      },
    };
  }
}

/**
 * Every endpoint tool of a description, in document order, names unique within `maxLength`
 * (meta-tool names reserved). Skipped operations, abbreviations, renames and each external
 * document that could not be loaded go to `warn`. Decisions (spec 000: "no operation is silently
 * dropped", the rest not shown): an operation whose arguments or request plan need such a
 * document is skipped, even for an optional parameter's schema (a tool whose schema took anything
 * there, or lacked an argument the API documents, would mislead the model without a word); one
 * that needs it elsewhere only (a response, an unused component) is kept, as a call reads neither.
 * Throws BAD_INPUT with disableAbbreviation when a name is longer than `maxLength`.
 */
export function buildEndpointTools(ctx: RefContext, disableAbbreviation: boolean, maxLength: number, warn: (message: string, fields?: Record<string, unknown>) => void): EndpointTool[] {
  for (const doc of ctx.unloaded?.values() ?? []) {
    warn(`external document ${doc.shown}, referenced from ${doc.from}, could not be loaded: ${doc.reason}; operations whose arguments need it are skipped`, { document: doc.shown, from: doc.from, code: doc.code, reason: doc.reason });
  }
  const entries = collectOperations(
    ctx,
    (where, reason, fields) => warn(`operation skipped: ${where}: ${reason}`, { operation: where, reason, ...fields }),
    (where, problem) => warn(`${where}: ${problem}`, { operation: where }),
  );
  const seenIds = new Set<string>();
  const tools: Array<EndpointTool & { entry: OperationEntry }> = [];
  const opIds = new Map<string, string>();
  for (const entry of entries) {
    if (seenIds.has(entry.toolId)) {
      warn(`operation skipped: ${entry.method} ${entry.path}: its tool ID ${entry.toolId} is taken by another path`, { toolId: entry.toolId });
      continue;
    }
    seenIds.add(entry.toolId);
    const opId = entry.operation.operationId;
    if (typeof opId === 'string') {
      if (opIds.has(opId)) warn(`duplicate operationId '${opId}' (${opIds.get(opId)} and ${entry.method} ${entry.path}); the later tool gets a suffix`, { operationId: opId });
      else opIds.set(opId, `${entry.method} ${entry.path}`);
    }
    // One operation the description makes unusable (a requestBody $ref that loops, a broken
    // escape in a $ref, a schema nested thousands deep, a $ref into a document that could not be
    // loaded) is skipped, not the whole start.
    let tool: EndpointTool & { entry: OperationEntry };
    try {
      tool = createEndpointTool(entry, ctx, disableAbbreviation, maxLength, warn);
      // Here, not in compileApi: the plan reads parts of the operation the input schema does not
      // (a parameter's other media types, a form's encoding), which may need such a document too.
      tool.planSpec = planSpec(entry, ctx);
    } catch (error) {
      const reason = skipReason(error);
      warn(`operation skipped: ${entry.method} ${entry.path}: ${reason}`, { operation: `${entry.method} ${entry.path}`, reason, ...skipFields(error) });
      continue;
    }
    tools.push(tool);
  }
  if (!disableAbbreviation) {
    // spec 000: "Abbreviated name: warning logged". One line for all of them, not one per tool.
    const shortened = tools.filter((t) => t.name !== generateToolName(toolNameSource(t.method, t.path, t.entry.operation), true));
    if (shortened.length > 0) {
      const examples = shortened.slice(0, 5).map((t) => `${toolNameSource(t.method, t.path, t.entry.operation)} → ${t.name}`);
      warn(`${shortened.length} tool name(s) abbreviated, e.g. ${examples.join(', ')}`, { abbreviated: shortened.slice(0, 20).map((t) => t.toolId) });
    }
  }
  if (disableAbbreviation) {
    const long = tools.filter((tool) => tool.name.length > maxLength);
    if (long.length > 0) {
      throw new McpvisorError('BAD_INPUT', `with disableAbbreviation, ${long.length} tool name(s) exceed ${maxLength} characters: ${long.slice(0, 20).map((t) => `${t.name} (${t.toolId})`).join(', ')}${long.length > 20 ? ', …' : ''}`);
    }
  }
  // Written out, shared components can make schemas of any size: each within its share.
  const fitted = fitSchemas(tools.map((tool) => tool.inputSchema as unknown as JsonObject));
  const cut = tools.filter((tool, i) => {
    if (fitted[i] === (tool.inputSchema as unknown)) return false;
    tool.inputSchema = fitted[i] as unknown as JsonObjectSchema;
    return true;
  });
  // One line for all of them (Microsoft Graph has over a thousand), as for abbreviations.
  if (cut.length > 0) {
    const examples = cut.slice(0, 5).map((tool) => `${tool.method} ${tool.path}`);
    warn(`${cut.length} input schema(s) too large to list whole, deeper parts left out (get-api-endpoint-schema shows them), e.g. ${examples.join(', ')}`, { cut: cut.slice(0, 20).map((tool) => tool.toolId) });
  }
  // The meta-tools hold their names first, so an endpoint named like one gets a suffix.
  const { names, renamed } = dedupeToolNames([...META_TOOL_NAMES, ...tools.map((t) => t.name)], maxLength);
  for (let i = 0; i < tools.length; i++) tools[i].name = names[i + META_TOOL_NAMES.length];
  // A line each for the first ones, then one for the rest: a description without operationIds
  // whose summaries repeat wrote 16,000 lines.
  for (const change of renamed.slice(0, MAX_RENAME_LINES)) {
    const tool = tools[change.index - META_TOOL_NAMES.length];
    warn(`duplicate tool name '${change.from}': ${tool.toolId} is '${change.to}'`, { toolId: tool.toolId, name: change.to });
  }
  if (renamed.length > MAX_RENAME_LINES) {
    const rest = renamed.slice(MAX_RENAME_LINES);
    const examples = rest.slice(0, 5).map((change) => `'${change.to}'`);
    warn(`${rest.length} more duplicate tool name(s) given a suffix, e.g. ${examples.join(', ')} (list-api-endpoints shows every tool)`, { renamed: rest.length });
  }
  return tools;
}

/** Duplicate names logged one by one; the rest in one line. */
const MAX_RENAME_LINES = 20;

/**
 * Whether a tool is one of `resources`: a path prefix (`/users` takes `/users` and
 * `/users/{id}`) or a resource name in any case. Sets looked up with each of the tool's path
 * prefixes, not every entry tried per tool: 8,000 entries over 8,000 operations took 4.6 s.
 */
/** A tool ID with its method upper-cased (`get::users` → `GET::users`); the path part stays as written. */
function normaliseToolId(id: string): string {
  const at = id.indexOf('::');
  return at > 0 ? id.slice(0, at).toUpperCase() + id.slice(at) : id;
}

function resourceMatcher(resources: string[]): (tool: EndpointTool) => boolean {
  const prefixes = new Set(resources.filter((r) => r.startsWith('/')).map((r) => r.replace(/\/+$/, '')));
  const names = new Set(resources.filter((r) => !r.startsWith('/')).map((r) => r.toLowerCase()));
  return (tool) => {
    if (tool.resourceName !== undefined && names.has(tool.resourceName.toLowerCase())) return true;
    if (prefixes.has(tool.path)) return true;
    for (let at = tool.path.indexOf('/'); at >= 0; at = tool.path.indexOf('/', at + 1)) if (prefixes.has(tool.path.slice(0, at))) return true;
    return false;
  };
}

function createEndpointTool(entry: OperationEntry, ctx: RefContext, disableAbbreviation: boolean, maxLength: number, warn: (message: string, fields?: Record<string, unknown>) => void): EndpointTool & { entry: OperationEntry } {
  const op = entry.operation;
  const source = toolNameSource(entry.method, entry.path, op);
  const name = generateToolName(source, disableAbbreviation, maxLength);
  const { inputSchema, targets, body } = buildInputSchema(entry, ctx, (problem) => warn(`${entry.method} ${entry.path}: ${problem}`));
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value : undefined);
  return {
    name,
    description: markDeprecated(text(op.description) ?? text(op.summary) ?? `Make a ${entry.method} request to ${entry.path}`, op),
    ...(typeof op.summary === 'string' ? { summary: op.summary } : {}),
    inputSchema,
    tags: entry.tags,
    method: entry.method,
    resourceName: entry.resourceName,
    toolId: entry.toolId,
    path: entry.path,
    entry,
    targets,
    body,
  };
}

/**
 * spec 000's `createToolFromOperation`: one tool from a path, a method and an operation object.
 * `$ref`s resolve against `spec` when given.
 */
export function createToolFromOperation(path: string, method: string, operation: JsonObject, disableAbbreviation = false, spec?: JsonObject): ITool {
  const ctx: RefContext = { root: spec ?? { paths: { [path]: { [method.toLowerCase()]: operation } } }, external: new Map() };
  const entries = collectOperations({ ...ctx, root: { ...ctx.root, paths: { [path]: { [method.toLowerCase()]: operation } } } }, () => undefined);
  if (entries.length === 0) throw new McpvisorError('BAD_INPUT', `no usable operation ${method.toUpperCase()} ${path}`);
  const tool = createEndpointTool(entries[0], ctx, disableAbbreviation, MAX_TOOL_NAME_LENGTH, () => undefined);
  return { name: tool.name, description: tool.description, inputSchema: tool.inputSchema, tags: tool.tags, method: tool.method, resourceName: tool.resourceName, toolId: tool.toolId };
}
