import { McpvisorError } from '../../protocol/errors';
import { errorResult } from '../../protocol/results';
import type { ToolDescriptor, ToolResult } from '../../protocol/tool';
import type { WorkerLogger } from '../../protocol/worker-runtime';
import { ApiClient } from './api-client';
import type { IAuthProvider } from './auth';
import { loadSpec, type LoadedSpec, type SpecInputMethod } from './load-spec';
import { createMetaTools, endpointSchema, listEndpoints, requireToolId } from './meta-tools';
import { buildUpstreamRequest, requestPlan, type RequestPlan } from './request';
import { responseToResult } from './results';
import { MAX_TOOL_NAME_LENGTH } from './tool-name';
import { ToolsManager, type EndpointTool } from './tools-manager';
import { ArgumentValidator } from './validate-args';

/** What one API needs (one entry of `apis[]`, plus what only a library user can give). */
export interface ApiServiceOptions {
  apiBaseUrl: string;
  openApiSpec?: string;
  specInputMethod?: SpecInputMethod;
  namespace?: string;
  headers?: Record<string, string>;
  authProvider?: IAuthProvider;
  toolsMode?: 'all' | 'dynamic' | 'explicit';
  includeTools?: string[];
  includeTags?: string[];
  includeResources?: string[];
  includeOperations?: string[];
  disableAbbreviation?: boolean;
  /** Default 30,000 ms. */
  requestTimeoutMs?: number;
  /** Default 10 MB. */
  maxResponseBytes?: number;
  /** Default 5 (same origin only). */
  maxRedirects?: number;
  stdin?: NodeJS.ReadableStream;
}

/** spec 000's ServerStats. */
export interface ServerStats {
  tools: { total: number; endpointTools: number; metaTools: number };
  openapi: { version: string; paths: number; operations: number };
  filtering?: { applied: boolean; includedTags?: string[]; includedOperations?: string[] };
}

const SILENT: WorkerLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * One API as tools: loads the description, builds the tools, validates arguments, builds and
 * sends requests. Runs inside an api worker (worker.ts) or in the library user's process.
 *
 * Decision (spec 000: "Meta-tools always three; in toolsMode dynamic they are the only tools"):
 * modes `all` and `dynamic` list the three meta-tools; `explicit` lists only what includeTools
 * names (meta-tools included when named). Meta-tools reach only the filtered endpoints.
 */
export class ApiToolService {
  readonly #spec: LoadedSpec;
  readonly #manager: ToolsManager;
  readonly #client: ApiClient;
  readonly #validator = new ArgumentValidator();
  readonly #log: WorkerLogger;
  readonly #prefix: string;
  readonly #plans = new Map<string, RequestPlan>();
  readonly #endpointTools: EndpointTool[];
  readonly #metaNames: Set<string>;
  readonly #descriptors: ToolDescriptor[];
  readonly #byName = new Map<string, EndpointTool>();

  private constructor(spec: LoadedSpec, options: ApiServiceOptions, log: WorkerLogger) {
    this.#spec = spec;
    this.#log = log;
    this.#prefix = options.namespace ? `${options.namespace}-` : '';
    this.#manager = new ToolsManager(options, spec);
    const filtered = this.#manager.generateTools(options.disableAbbreviation ?? false, {
      maxNameLength: MAX_TOOL_NAME_LENGTH - this.#prefix.length,
      warn: (message, fields) => log.warn(message, fields),
    });
    const mode = options.toolsMode ?? 'all';
    this.#endpointTools = mode === 'dynamic' ? [] : filtered;
    const wanted = new Set((options.includeTools ?? []).map((t) => t.toLowerCase()));
    const metas = createMetaTools().filter((m) => mode !== 'explicit' || wanted.has(m.name));
    this.#metaNames = new Set(metas.map((m) => m.name));
    for (const tool of this.#endpointTools) this.#byName.set(tool.name, tool);
    this.#descriptors = [
      ...this.#endpointTools.map((tool) => describeTool(tool)),
      ...metas.map((m) => ({ name: m.name, description: m.description, inputSchema: m.inputSchema })),
    ];
    if (options.authProvider && options.headers && Object.keys(options.headers).length > 0) {
      log.warn('both headers and authProvider are set: both are sent, the provider wins on the same header');
    }
    this.#client = new ApiClient(options.apiBaseUrl, options.authProvider, options.headers, {
      requestTimeoutMs: options.requestTimeoutMs,
      maxResponseBytes: options.maxResponseBytes,
      maxRedirects: options.maxRedirects,
    });
    const stats = this.getStats();
    log.info('api tools ready', { source: spec.source, version: spec.version, paths: stats.openapi.paths, operations: stats.openapi.operations, tools: stats.tools.total, toolsMode: options.toolsMode ?? 'all', filtering: stats.filtering, headerNames: Object.keys(options.headers ?? {}) });
  }

  /** Loads and builds; throws what loadSpec throws (see load-spec.ts) and BAD_INPUT for bad options. */
  static async create(options: ApiServiceOptions, log: WorkerLogger = SILENT): Promise<ApiToolService> {
    if (typeof options.apiBaseUrl !== 'string' || options.apiBaseUrl === '') throw new McpvisorError('BAD_INPUT', 'apiBaseUrl is required');
    const started = Date.now();
    const spec = await loadSpec({ openApiSpec: options.openApiSpec, specInputMethod: options.specInputMethod, stdin: options.stdin });
    log.debug('spec loaded', { source: spec.source, ms: Date.now() - started });
    return new ApiToolService(spec, options, log);
  }

  /** The tools as listed to clients (names without the namespace prefix). */
  get tools(): ToolDescriptor[] {
    return this.#descriptors;
  }

  get manager(): ToolsManager {
    return this.#manager;
  }

  getStats(): ServerStats {
    const s = this.#manager.getStats();
    return {
      tools: { total: this.#endpointTools.length + this.#metaNames.size, endpointTools: this.#endpointTools.length, metaTools: this.#metaNames.size },
      openapi: { version: this.#spec.version, paths: s.paths, operations: s.operations },
      ...(s.filtering ? { filtering: s.filtering } : {}),
    };
  }

  testConnection(options: { signal?: AbortSignal } = {}): Promise<boolean> {
    return this.#client.testConnection(options);
  }

  /** Runs one call; failures are thrown as McpvisorError (the worker runtime makes them results). */
  async handle(name: string, args: Record<string, unknown>, options: { signal?: AbortSignal } = {}): Promise<ToolResult> {
    const input = args ?? {};
    if (this.#metaNames.has(name)) return this.#meta(name, input, options);
    const tool = this.#byName.get(name);
    if (!tool) throw new McpvisorError('UNKNOWN_TOOL', `no tool named '${name}'`);
    return this.#invoke(tool, input, options);
  }

  async close(): Promise<void> {
    await this.#client.close();
  }

  async #invoke(tool: EndpointTool, args: Record<string, unknown>, options: { signal?: AbortSignal }): Promise<ToolResult> {
    this.#validator.check(tool.toolId, tool.inputSchema, args);
    let plan = this.#plans.get(tool.toolId);
    if (!plan) {
      plan = requestPlan(tool.entry, this.#spec, tool.targets, tool.body);
      this.#plans.set(tool.toolId, plan);
    }
    const request = buildUpstreamRequest(plan, args, this.#client.baseUrl);
    const response = await this.#client.send(request, options);
    return responseToResult(response);
  }

  async #meta(name: string, args: Record<string, unknown>, options: { signal?: AbortSignal }): Promise<ToolResult> {
    const filtered = this.#manager.getFilteredTools();
    if (name === 'list-api-endpoints') return json(listEndpoints(filtered, args, this.#prefix));
    const id = requireToolId(args);
    const tool = this.#manager.getToolById(id, true) ?? this.#manager.getToolById(id.startsWith(this.#prefix) ? id.slice(this.#prefix.length) : id, true);
    if (!tool) {
      return errorResult(new McpvisorError('NOT_FOUND', `no endpoint with tool ID or name '${id}'; list-api-endpoints lists them`));
    }
    if (name === 'get-api-endpoint-schema') return json(endpointSchema(tool, this.#spec, this.#prefix));
    const parameters = args.parameters ?? {};
    if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters)) throw new McpvisorError('BAD_INPUT', "'parameters' must be an object");
    return this.#invoke(tool, parameters as Record<string, unknown>, options);
  }
}

function describeTool(tool: EndpointTool): ToolDescriptor {
  const summary = tool.entry.operation.summary;
  const method = tool.method;
  return {
    name: tool.name,
    ...(typeof summary === 'string' && summary !== '' ? { title: summary } : {}),
    description: tool.description,
    inputSchema: tool.inputSchema,
    annotations: {
      readOnlyHint: method === 'GET' || method === 'HEAD' || method === 'OPTIONS',
      destructiveHint: method === 'DELETE',
      idempotentHint: method !== 'POST' && method !== 'PATCH',
      openWorldHint: true,
    },
  };
}

function json(value: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
}
