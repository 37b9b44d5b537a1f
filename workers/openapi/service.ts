import { McpvisorError } from '../../protocol/errors';
import { errorResult } from '../../protocol/results';
import type { ToolDescriptor, ToolResult } from '../../protocol/tool';
import { asciiJson, ToolTextsBuilder, type ToolTexts } from '../../protocol/tool-text';
import type { WorkerLogger } from '../../protocol/worker-runtime';
import { ApiClient, type ApiResponse } from './api-client';
import type { IAuthProvider } from './auth';
import { StoredTool } from './compiled';
import { loadCompiled, type CompiledStart } from './compiled-source';
import { warmUp as warmUpModules } from './lazy';
import type { LoadedSpec, SpecInputMethod } from './load-spec';
import { schemaAnswer } from './endpoint-schema';
import { createMetaTools, listEndpoints, requireToolId, schemaQuestion } from './meta-tools';
import { collectOperations, type OperationEntry } from './operations';
import { buildUpstreamRequest } from './request';
import { Redaction, type SentCredential } from './redact';
import { bodyShownAsText, DEFAULT_MAX_RESULT_BYTES, responseToResult } from './results';
import { MAX_TOOL_NAME_LENGTH } from './tool-name';
import { toolIdForms, unknownEndpointMessage } from './tool-lookup';
import { ToolsManager, type EndpointTool } from './tools-manager';
import { ArgumentValidator } from './validate-args';
import { UPSTREAM_STATUS_META_KEY } from '../../protocol/results';
import { warmExtraCaCerts } from '../../protocol/extra-ca-certs';

/** What one API needs (one entry of `apis[]`, plus what only a library user can give). */
export interface ApiServiceOptions {
  apiBaseUrl: string;
  openApiSpec?: string;
  /** What inline content is called in messages; default `inline content`. */
  specSource?: string;
  specInputMethod?: SpecInputMethod;
  namespace?: string;
  headers?: Record<string, string>;
  authProvider?: IAuthProvider;
  /** Configured headers and base URL query parameters (any case) whose values are not redacted. */
  notCredentials?: string[];
  toolsMode?: 'all' | 'dynamic' | 'explicit';
  includeTools?: string[];
  includeTags?: string[];
  includeResources?: string[];
  includeOperations?: string[];
  excludeTags?: string[];
  disableAbbreviation?: boolean;
  /**
   * Where compiled descriptions are cached (spec-cache.ts), or false for no cache. Default
   * `$XDG_CACHE_HOME/mcpvisor/openapi`, else `~/.cache/mcpvisor/openapi`.
   */
  specCache?: string | false;
  /** Default 30,000 ms. */
  requestTimeoutMs?: number;
  /** Default 10 MB. */
  maxResponseBytes?: number;
  /** Default 5 (same origin only). */
  maxRedirects?: number;
  /** Bytes one tool result may carry; a longer one is cut, saying so. Default 2 MiB. */
  maxResultBytes?: number;
  stdin?: NodeJS.ReadableStream;
}

/** spec 000's ServerStats. */
export interface ServerStats {
  tools: { total: number; endpointTools: number; metaTools: number };
  openapi: { version: string; paths: number; operations: number };
  filtering?: { applied: boolean; includedTags?: string[]; includedOperations?: string[]; excludedTags?: string[] };
}

const SILENT: WorkerLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** The parsed description and its operations by tool ID, for get-api-endpoint-schema. */
interface DocumentIndex {
  spec: LoadedSpec;
  entries: Map<string, OperationEntry>;
  /** Why collectOperations skipped an operation (`METHOD /path`) or a path item (`/path`), for the log. */
  skipped: Map<string, string>;
}

/**
 * One API as tools: loads the description, builds the tools, validates arguments, builds and
 * sends requests. Runs inside an api worker (worker.ts) or in the library user's process.
 *
 * The tools come from a compiled form of the description (compiled.ts), cached on disk
 * (spec-cache.ts): a restart with an unchanged description neither reads nor parses it. The
 * parsed description is not kept; get-api-endpoint-schema loads it again on its first call.
 *
 * Decision (spec 000: "Meta-tools always three; in toolsMode dynamic they are the only tools"):
 * modes `all` and `dynamic` list the three meta-tools; `explicit` lists only what includeTools
 * names (meta-tools included when named). Meta-tools reach only the filtered endpoints.
 */
export class ApiToolService {
  readonly #manager: ToolsManager;
  readonly #client: ApiClient;
  readonly #maxResultBytes: number;
  readonly #validator = new ArgumentValidator();
  readonly #log: WorkerLogger;
  readonly #prefix: string;
  /** The base URL's own query parameters (`?api-version=…`). */
  readonly #baseQuery: URLSearchParams;
  readonly #openapiVersion: string;
  readonly #reload: () => Promise<LoadedSpec>;
  #document?: Promise<DocumentIndex>;
  #persisting: Promise<void> = Promise.resolve();
  /** The description was read and built at this start (not a spec cache hit). */
  #built = false;
  /** Every tool here was built from the compiled index (StoredTool). */
  readonly #endpointTools: StoredTool[];
  readonly #metaNames: Set<string>;
  readonly #metaDescriptors: ToolDescriptor[];
  #descriptors?: ToolDescriptor[];
  readonly #byName = new Map<string, EndpointTool>();
  /** Tools whose upstream has echoed a credential: the operator is told once per tool. */
  readonly #echoing = new Set<string>();

  private constructor(start: CompiledStart, options: ApiServiceOptions, log: WorkerLogger) {
    this.#log = log;
    this.#prefix = prefixOf(options);
    this.#baseQuery = new URLSearchParams(baseQueryOf(options.apiBaseUrl));
    const { api, data } = start.compiled;
    this.#openapiVersion = api.openapiVersion;
    this.#reload = start.reload;
    // Replayed from the artifact on a cache hit, so logs read as on a cold start.
    for (const w of api.warnings) log.warn(w.message, w.fields);
    this.#manager = ToolsManager.fromTools(options, api.tools.map((tool) => new StoredTool(tool, data)), api.paths, (message, fields) => log.warn(message, fields));
    const filtered = this.#manager.getFilteredTools();
    const mode = options.toolsMode ?? 'all';
    this.#endpointTools = mode === 'dynamic' ? [] : (filtered as StoredTool[]);
    const wanted = new Set((options.includeTools ?? []).map((t) => t.toLowerCase()));
    const metas = createMetaTools().filter((m) => mode !== 'explicit' || wanted.has(m.name));
    this.#metaNames = new Set(metas.map((m) => m.name));
    for (const tool of this.#endpointTools) this.#byName.set(tool.name, tool);
    this.#metaDescriptors = metas.map((m) => ({ name: m.name, title: m.title, description: m.description, inputSchema: m.inputSchema, annotations: m.annotations }));
    if (options.authProvider && options.headers && Object.keys(options.headers).length > 0) {
      log.warn('both headers and authProvider are set: both are sent, the provider wins on the same header');
    }
    this.#maxResultBytes = options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
    this.#client = new ApiClient(options.apiBaseUrl, options.authProvider, options.headers, {
      requestTimeoutMs: options.requestTimeoutMs,
      maxResponseBytes: options.maxResponseBytes,
      maxRedirects: options.maxRedirects,
      notCredentials: options.notCredentials,
    });
    this.#checkNotCredentials(options);
    const stats = this.getStats();
    log.info('api tools ready', { source: start.source, specCache: start.cache, version: this.#openapiVersion, paths: stats.openapi.paths, operations: stats.openapi.operations, tools: stats.tools.total, toolsMode: options.toolsMode ?? 'all', filtering: stats.filtering, headerNames: Object.keys(options.headers ?? {}) });
  }

  /**
   * Loads and builds, from the spec cache when it can; throws what loadSpec throws (see
   * load-spec.ts) and BAD_INPUT for bad options. A cache that cannot be read or written is
   * never an error (a warning when it cannot be written).
   */
  static async create(options: ApiServiceOptions, log: WorkerLogger = SILENT): Promise<ApiToolService> {
    if (typeof options.apiBaseUrl !== 'string' || options.apiBaseUrl === '') throw new McpvisorError('BAD_INPUT', 'apiBaseUrl is required');
    const start = await loadCompiled(
      {
        openApiSpec: options.openApiSpec,
        specSource: options.specSource,
        specInputMethod: options.specInputMethod,
        stdin: options.stdin,
        specCache: options.specCache,
        // A private API's own description (`/openapi.json`) needs the token its calls carry.
        auth: { apiBaseUrl: options.apiBaseUrl, headers: options.headers },
        disableAbbreviation: options.disableAbbreviation ?? false,
        maxNameLength: MAX_TOOL_NAME_LENGTH - prefixOf(options).length,
        baseQuery: baseQueryOf(options.apiBaseUrl),
      },
      log,
    );
    const service = new ApiToolService(start, options, log);
    // The worker sends `ready` in the promise jobs that follow; an immediate runs after them, so
    // storing the artifact never delays startup. close() waits for it.
    service.#persisting = new Promise<void>((resolve) => setImmediate(resolve)).then(start.persist);
    service.#built = start.cache !== 'hit';
    return service;
  }

  /**
   * Resolves once this start's artifact is stored: true when the description was read and built
   * (all that work now garbage), false on a spec cache hit.
   */
  async built(): Promise<boolean> {
    await this.#persisting;
    return this.#built;
  }

  /** The tools as listed to clients (names without the namespace prefix), parsed on first read. */
  get tools(): ToolDescriptor[] {
    return (this.#descriptors ??= [...this.#endpointTools.map((tool) => tool.descriptor), ...this.#metaDescriptors]);
  }

  /** The same tools as text, for the api worker's `ready` (protocol/tool-text.ts); nothing is parsed. */
  toolTexts(): ToolTexts {
    const texts = new ToolTextsBuilder();
    for (const tool of this.#endpointTools) texts.add(tool.name, tool.listedJson);
    for (const meta of this.#metaDescriptors) texts.add(meta.name, asciiJson(meta));
    return texts.build();
  }

  get manager(): ToolsManager {
    return this.#manager;
  }

  getStats(): ServerStats {
    const s = this.#manager.getStats();
    return {
      tools: { total: this.#endpointTools.length + this.#metaNames.size, endpointTools: this.#endpointTools.length, metaTools: this.#metaNames.size },
      openapi: { version: this.#openapiVersion, paths: s.paths, operations: s.operations },
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

  /**
   * Loads what calls need (lazy.ts), warms the argument validator and, for an HTTPS API, the
   * certificates of NODE_EXTRA_CA_CERTS (extra-ca-certs.ts), so the first call does not wait.
   */
  warmUp(): void {
    warmUpModules();
    this.#validator.warmUp();
    if (this.#client.baseUrl.startsWith('https:')) warmExtraCaCerts();
  }

  /** Waits for the spec cache write of this start, then closes the HTTP client. */
  async close(): Promise<void> {
    await this.#persisting;
    await this.#client.close();
  }

  /** A `notCredentials` name that matches nothing configured is likely a typo: the operator is told. */
  #checkNotCredentials(options: ApiServiceOptions): void {
    // A provider's header names are known only per call.
    if (!options.notCredentials || options.authProvider) return;
    const configured = new Set([...Object.keys(options.headers ?? {}), ...this.#baseQuery.keys()].map((name) => name.toLowerCase()));
    // Credentials in the base URL are sent as Authorization: Basic.
    if (new URL(options.apiBaseUrl).username !== '') configured.add('authorization');
    const names = options.notCredentials.filter((name) => !configured.has(name.toLowerCase()));
    if (names.length > 0) this.#log.warn('notCredentials names what is neither a configured header nor a base URL query parameter: it changes nothing', { names });
  }

  async #invoke(tool: EndpointTool, args: Record<string, unknown>, options: { signal?: AbortSignal }): Promise<ToolResult> {
    this.#validator.check(tool.toolId, tool.inputSchema, args);
    if (!tool.planSpec) throw new McpvisorError('INTERNAL', `tool ${tool.toolId} has no request plan`);
    const request = buildUpstreamRequest({ spec: tool.planSpec, targets: tool.targets, body: tool.body }, args, this.#client.baseUrl);
    const sent: SentCredential[] = [];
    let response: ApiResponse;
    try {
      response = await this.#client.send(request, { signal: options.signal, sent });
    } catch (error) {
      // A provider's handleAuthError may name its token; a followed redirect's URL may hold one.
      if (!(error instanceof McpvisorError)) throw error;
      const redaction = new Redaction(sent);
      const message = redaction.text(error.message);
      if (message === error.message) throw error;
      this.#noteEcho(tool, redaction);
      throw new McpvisorError(error.code, message, { data: error.data });
    }
    const redaction = new Redaction(sent);
    const result = responseToResult(redaction.response(response, bodyShownAsText(response)), this.#maxResultBytes, tool.responseHeaders);
    this.#noteEcho(tool, redaction);
    // For the supervisor's mcpvisor_upstream_responses_total.
    result._meta = { ...result._meta, [UPSTREAM_STATUS_META_KEY]: response.status };
    return result;
  }

  /** Logs, once per tool, that its upstream echoed credentials: their names, never their values. */
  #noteEcho(tool: EndpointTool, redaction: Redaction): void {
    const names = redaction.names;
    if (names.length === 0 || this.#echoing.has(tool.name)) return;
    this.#echoing.add(tool.name);
    this.#log.warn(
      `the upstream echoed a configured credential (${names.join(', ')}); it was redacted from the result of ${tool.name}, and will be from later ones (a value that is no secret, such as a tenant or region, is shown again when named in the API's notCredentials)`,
      { tool: tool.name, credentials: names },
    );
  }

  async #meta(name: string, args: Record<string, unknown>, options: { signal?: AbortSignal }): Promise<ToolResult> {
    const filtered = this.#manager.getFilteredTools();
    if (name === 'list-api-endpoints') return json(listEndpoints(filtered, args, this.#prefix));
    // Arguments it does not take are refused before the lookup, which could hide them.
    const question = name === 'get-api-endpoint-schema' ? schemaQuestion(args) : undefined;
    const id = requireToolId(args);
    let tool: EndpointTool | undefined;
    for (const form of toolIdForms(id, this.#prefix)) if ((tool = this.#manager.getToolById(form, true))) break;
    if (!tool) return errorResult(new McpvisorError('NOT_FOUND', unknownEndpointMessage(filtered, id, this.#prefix)));
    if (question) {
      const { spec, entry } = await this.#operationOf(tool);
      return schemaAnswer(tool, entry, spec, this.#prefix, question, this.#baseQuery);
    }
    // A model often puts the endpoint's arguments beside toolId: say where they go, rather than
    // "'owner' is required" for an argument it did give.
    const stray = Object.keys(args).filter((key) => key !== 'toolId' && key !== 'parameters');
    if (stray.length > 0) {
      throw new McpvisorError('BAD_INPUT', `invoke-api-endpoint takes the endpoint's arguments inside 'parameters' ({"toolId": "…", "parameters": {…}}); these were beside it: ${stray.slice(0, 10).join(', ')}`);
    }
    const parameters = args.parameters ?? {};
    if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters)) throw new McpvisorError('BAD_INPUT', "'parameters' must be an object");
    return this.#invoke(tool, parameters as Record<string, unknown>, options);
  }

  /**
   * The tool's operation in the full description, loaded on the first call and kept. Decision: a
   * description changed on disk since the start is read as it is now; an operation gone from it
   * is NOT_FOUND (restarting the server reloads the tools). A failed load is retried next time;
   * one with external documents that could not be loaded is kept, as at the start, and they are
   * logged (why is for the log, not for the answer).
   */
  async #operationOf(tool: EndpointTool): Promise<{ spec: LoadedSpec; entry: OperationEntry }> {
    if (!this.#document) {
      const started = performance.now();
      this.#document = this.#reload().then((spec) => {
        const entries = new Map<string, OperationEntry>();
        const skipped = new Map<string, string>();
        // The first of a tool ID wins, as when the tools were built.
        for (const entry of collectOperations(spec, (where, reason) => skipped.set(where, reason))) if (!entries.has(entry.toolId)) entries.set(entry.toolId, entry);
        for (const doc of spec.unloaded?.values() ?? []) {
          this.#log.warn(`get-api-endpoint-schema: external document ${doc.shown}, referenced from ${doc.from}, could not be loaded: ${doc.reason}`, { document: doc.shown, from: doc.from, code: doc.code, reason: doc.reason });
        }
        this.#log.debug('description loaded for get-api-endpoint-schema', { source: spec.source, ms: Math.round(performance.now() - started) });
        return { spec, entries, skipped };
      });
    }
    let doc: DocumentIndex;
    try {
      doc = await this.#document;
    } catch (error) {
      this.#document = undefined;
      throw error;
    }
    const entry = doc.entries.get(tool.toolId);
    const skipped = doc.skipped.get(`${tool.method} ${tool.path}`) ?? doc.skipped.get(tool.path);
    if (!entry && skipped !== undefined) {
      this.#log.warn(`get-api-endpoint-schema: ${tool.method} ${tool.path} cannot be read from the description now: ${skipped}`, { toolId: tool.toolId, reason: skipped });
      throw new McpvisorError('NOT_FOUND', `${tool.method} ${tool.path} cannot be read from the OpenAPI description ${doc.spec.source} now (the server's log says why); its tool may still be called`);
    }
    if (!entry) throw new McpvisorError('NOT_FOUND', `${tool.method} ${tool.path} is no longer in the OpenAPI description ${doc.spec.source}: it changed after the server started; restart the server to reload it`);
    return { spec: doc.spec, entry };
  }
}

function prefixOf(options: ApiServiceOptions): string {
  return options.namespace ? `${options.namespace}-` : '';
}

/** Compact, as get-api-endpoint-schema's: indentation was a sixth of a page a model reads. */
function json(value: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

/**
 * The base URL's own query (`?api-version=2024-01-01`), names decoded, as compileApi's
 * `baseQuery`; '' without one (or an unparsable URL, which the client refuses later).
 */
function baseQueryOf(apiBaseUrl: string): string {
  try {
    return new URL(apiBaseUrl).search.slice(1);
  } catch {
    return '';
  }
}
