import { McpvisorError } from '../../protocol/errors';
import type { ToolDescriptor, ToolResult } from '../../protocol/tool';
import type { WorkerLogger } from '../../protocol/worker-runtime';
import { validateConfig, type OpenApiConfig, type OpenApiConfigInput } from './config';
import { ApiToolService, type ServerStats } from './service';

/**
 * spec 000's service for library users. Decision: it runs in the caller's process (no worker,
 * no supervisor), so an `authProvider` object works as given; it does not open a transport
 * itself. Serve it with the `openapi-mcp-server` CLI or `mcpvisor` (which run the same code in
 * an api worker behind the supervisor's stdio/HTTP transports), or call `listTools()` and
 * `callTool()` from your own MCP server.
 */
export class OpenAPIServer {
  readonly config: OpenApiConfig;
  readonly #log?: WorkerLogger;
  #service?: ApiToolService;

  /** Throws what validateConfig throws. */
  constructor(config: OpenApiConfigInput, options: { log?: WorkerLogger } = {}) {
    this.config = validateConfig(config);
    this.#log = options.log;
  }

  /** Loads the description and builds the tools; rejects on load failure (see load-spec.ts). */
  async start(): Promise<void> {
    if (this.#service) return;
    this.#service = await ApiToolService.create(this.config, this.#log);
  }

  async stop(): Promise<void> {
    const service = this.#service;
    this.#service = undefined;
    await service?.close();
  }

  /** ServerStats; throws INTERNAL before start(). */
  getStats(): ServerStats {
    return this.#running().getStats();
  }

  /** True when the API base URL answers at all (any HTTP status). */
  async testConnection(): Promise<boolean> {
    return this.#running().testConnection();
  }

  /** The tools, with the namespace prefix when one is configured. */
  listTools(): ToolDescriptor[] {
    const prefix = this.config.namespace ? `${this.config.namespace}-` : '';
    return this.#running().tools.map((tool) => ({ ...tool, name: `${prefix}${tool.name}` }));
  }

  /** Calls a tool by its listed name; failures are thrown as McpvisorError with a stable code. */
  callTool(name: string, args: Record<string, unknown> = {}, options: { signal?: AbortSignal } = {}): Promise<ToolResult> {
    const prefix = this.config.namespace ? `${this.config.namespace}-` : '';
    const local = prefix && name.startsWith(prefix) ? name.slice(prefix.length) : name;
    return this.#running().handle(local, args, options);
  }

  #running(): ApiToolService {
    if (!this.#service) throw new McpvisorError('INTERNAL', 'the server is not started: call start() first');
    return this.#service;
  }
}
