import { McpvisorError } from '../../protocol/errors';
import type { ToolDescriptor, ToolResult } from '../../protocol/tool';
import type { WorkerLogger } from '../../protocol/worker-runtime';
import { validateConfig, type OpenApiConfig, type OpenApiConfigInput } from './config';
import { ApiToolService, type ServerStats } from './service';
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
export class OpenAPIServer {
  readonly config: OpenApiConfig;
  readonly #log?: WorkerLogger;
  #service?: ApiToolService;
  #closeTransport?: () => Promise<void>;

  /** Throws what validateConfig throws. */
  constructor(config: OpenApiConfigInput, options: { log?: WorkerLogger } = {}) {
    this.config = validateConfig(config);
    this.#log = options.log;
  }

  /**
   * Loads the description and builds the tools, then serves them on `transport` when one is
   * given; rejects on load failure (see load-spec.ts) and when already serving a transport.
   */
  async start(transport?: Transport): Promise<void> {
    if (transport && this.#closeTransport) throw new McpvisorError('BAD_INPUT', 'the server is already serving a transport: stop() it first');
    this.#service ??= await ApiToolService.create(this.config, this.#log);
    if (!transport) return;
    // Required here: the SDK's server stays out of the api worker, which loads this folder too.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { serveTools } = require('../../protocol/sdk-server') as typeof import('../../protocol/sdk-server');
    this.#closeTransport = await serveTools(
      { name: this.config.name, version: this.config.version, listTools: () => this.listTools(), callTool: (name, args, options) => this.callTool(name, args, options) },
      transport,
    );
  }

  /** Closes the transport, if any, and releases the API client. */
  async stop(): Promise<void> {
    const service = this.#service;
    const close = this.#closeTransport;
    this.#service = undefined;
    this.#closeTransport = undefined;
    await close?.();
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
