import { McpvisorError } from '../../protocol/errors';
import type { ToolDescriptor, ToolResult } from '../../protocol/tool';
import type { WorkerLogger } from '../../protocol/worker-runtime';
import { DEFAULT_CONFIG, validateConfig, type OpenApiConfig, type OpenApiConfigInput } from './config';
import { ApiToolService, type ServerStats } from './service';
import { ApiClient } from './api-client';
import type { Transport } from '../../protocol/sdk-server';

/**
 * spec 000's service for library users. Decision: it runs in the caller's process (no worker,
 * no supervisor), so an `authProvider` object works as given. `start(transport)` serves it on
 * an MCP SDK transport the caller made (`new StdioServerTransport()`, a Streamable HTTP one, an
 * in-memory pair), as the reference's `start(transport)` does; `start()` only loads, for
 * callers of `listTools()` and `callTool()`. The config's transport fields (`transportType`,
 * `httpPort`…) are the CLI's: the supervisor's transports, with its sessions, limits and
 * guards, serve the `openapi-mcp-server` CLI and `mcpvisor`.
 */
const TRANSPORT_FIELDS = ['transportType', 'httpPort', 'httpHost', 'endpointPath'] as const;

export class OpenAPIServer {
  readonly config: OpenApiConfig;
  readonly #log?: WorkerLogger;
  #service?: ApiToolService;
  /** The one load of the description, shared by concurrent start() calls. */
  #loading?: Promise<ApiToolService>;
  #closeTransport?: () => Promise<void>;
  /** A transport is served or being connected. */
  #serving = false;
  /** Bumped by stop(): a start() that sees it change gave up. */
  #generation = 0;

  /** The transport fields set to other than their defaults (`transportType: 'http'`, `httpPort`…), which start() cannot honour by itself. */
  readonly #transportFields: string[];

  /** Throws what validateConfig throws. */
  constructor(config: OpenApiConfigInput, options: { log?: WorkerLogger } = {}) {
    this.config = validateConfig(config);
    this.#log = options.log;
    // Defaults (DEFAULT_CONFIG spread in) ask for nothing: only what differs is a wish start() cannot meet.
    this.#transportFields = TRANSPORT_FIELDS.filter((field) => this.config[field] !== DEFAULT_CONFIG[field]);
  }

  /**
   * Loads the description and builds the tools (once, however many calls wait for it), then
   * serves them on `transport` when one is given. Without one it only loads, and rejects with
   * BAD_INPUT when the config sets a transport field to other than its default. Rejects on load failure (see load-spec.ts),
   * with BAD_INPUT when a transport is already served, and with SHUTTING_DOWN when stop() came
   * first (what it had opened is closed).
   */
  async start(transport?: Transport): Promise<void> {
    if (!transport && this.#transportFields.length > 0) {
      // Spec 000 says start() starts the transport; serving it silently not at all was worse.
      throw new McpvisorError(
        'BAD_INPUT',
        `start() serves no transport by itself, and the config sets ${this.#transportFields.join(', ')}: pass the transport to serve (start(new StdioServerTransport()), or a Streamable HTTP one), or run the openapi-mcp-server CLI, which serves ${this.config.transportType} on its own`,
      );
    }
    if (transport) {
      if (this.#serving) throw new McpvisorError('BAD_INPUT', 'the server is already serving a transport: stop() it first');
      this.#serving = true;
    }
    const generation = this.#generation;
    try {
      const loading = (this.#loading ??= ApiToolService.create(this.config, this.#log));
      let service: ApiToolService;
      try {
        service = await loading;
      } catch (error) {
        if (this.#loading === loading) this.#loading = undefined; // a later start() tries again
        throw error;
      }
      if (generation !== this.#generation) throw new McpvisorError('SHUTTING_DOWN', 'stop() was called while the server was starting');
      this.#service = service;
      if (!transport) return;
      // Required here: the SDK's server stays out of the api worker, which loads this folder too.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { serveTools } = require('../../protocol/sdk-server') as typeof import('../../protocol/sdk-server');
      const close = await serveTools(
        { name: this.config.name, version: this.config.version, listTools: () => this.listTools(), callTool: (name, args, options) => this.callTool(name, args, options) },
        transport,
      );
      if (generation !== this.#generation) {
        await close();
        throw new McpvisorError('SHUTTING_DOWN', 'stop() was called while the server was starting');
      }
      this.#closeTransport = close;
    } catch (error) {
      if (transport && generation === this.#generation) this.#serving = false;
      throw error;
    }
  }

  /** Closes the transport, if any, and releases the API client (also one still loading). */
  async stop(): Promise<void> {
    this.#generation++;
    const loading = this.#loading;
    const close = this.#closeTransport;
    this.#loading = undefined;
    this.#service = undefined;
    this.#closeTransport = undefined;
    this.#serving = false;
    await close?.();
    const service = await loading?.catch(() => undefined);
    await service?.close();
  }

  /** ServerStats; throws INTERNAL before start(). */
  getStats(): ServerStats {
    return this.#running().getStats();
  }

  /**
   * True when the API base URL answers at all (any HTTP status), false when it does not (refused,
   * DNS, timeout). Also before start(): checking the API before loading its description is what a
   * caller does first, and it needs no description (before, it threw INTERNAL "not started").
   */
  async testConnection(): Promise<boolean> {
    if (this.#service) return this.#service.testConnection();
    const { apiBaseUrl, authProvider, headers, requestTimeoutMs, maxRedirects } = this.config;
    const client = new ApiClient(apiBaseUrl, authProvider, headers, { requestTimeoutMs, maxRedirects, connections: 1 });
    try {
      return await client.testConnection();
    } finally {
      await client.close();
    }
  }

  /** The tools, with the namespace prefix when one is configured. */
  listTools(): ToolDescriptor[] {
    const prefix = this.config.namespace ? `${this.config.namespace}-` : '';
    return this.#running().tools.map((tool) => ({ ...tool, name: `${prefix}${tool.name}` }));
  }

  /**
   * Calls a tool by its listed name; failures reject with McpvisorError with a stable code, also
   * INTERNAL before start() (thrown at once, `callTool(…).catch(…)` threw past its handler).
   */
  async callTool(name: string, args: Record<string, unknown> = {}, options: { signal?: AbortSignal } = {}): Promise<ToolResult> {
    const prefix = this.config.namespace ? `${this.config.namespace}-` : '';
    const local = prefix && name.startsWith(prefix) ? name.slice(prefix.length) : name;
    return this.#running().handle(local, args, options);
  }

  #running(): ApiToolService {
    if (!this.#service) throw new McpvisorError('INTERNAL', 'the server is not started: call start() first');
    return this.#service;
  }
}
