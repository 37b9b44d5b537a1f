import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { McpvisorError } from '../protocol/errors';
import { errorResult } from '../protocol/results';
import type { Logger } from './logger';
import type { Supervisor } from './supervisor';

export interface SessionOptions {
  supervisor: Supervisor;
  logger: Logger;
  /** Calls one session may run at once; more answer BUSY. */
  maxConcurrentCalls: number;
  /** Called when a call's signal aborts (client cancel or dropped request), to close its stream. */
  onCallAborted?: (requestId: RequestId) => void;
}

/** One MCP session: an SDK `Server` whose handlers route to the supervisor. */
export interface Session {
  server: Server;
  /** Cancels a running call of this session, as a dropped HTTP request does. */
  abortCall(requestId: RequestId): void;
  readonly inFlight: number;
}

/**
 * One JSON Schema validator for every session, built on first use: the SDK otherwise builds an
 * Ajv instance per Server (about 20 KB of each idle session, and 15 ms of startup), and uses it
 * only for elicitation, which we never send.
 */
const sharedValidator: jsonSchemaValidator = {
  getValidator(schema) {
    ajvValidator ??= new (require('@modelcontextprotocol/sdk/validation/ajv-provider.js') as typeof import('@modelcontextprotocol/sdk/validation/ajv-provider.js')).AjvJsonSchemaValidator();
    return ajvValidator.getValidator(schema);
  },
};
let ajvValidator: jsonSchemaValidator | undefined;

/**
 * Creates the SDK server of one session. Tool failures are results (`isError: true`); an unknown
 * tool is a JSON-RPC error (-32602), as the MCP specification asks. The SDK negotiates the protocol
 * revision (2024-11-05 through 2025-11-25).
 */
export function createSession(options: SessionOptions): Session {
  const { supervisor, logger } = options;
  const server = new Server(
    { name: supervisor.config.name, version: supervisor.health().version },
    { capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: sharedValidator },
  );
  const running = new Map<RequestId, AbortController>();

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: supervisor.catalogue.list() }));

  // Registered past Server's own override of setRequestHandler, which parses each tools/call a
  // second time and each result against the SDK's zod schema: a tenth of the supervisor's CPU per
  // call. The request is still parsed once (Protocol); results are built by our own workers
  // (protocol/results.ts), and the SDK client of every integration test parses them strictly.
  Protocol.prototype.setRequestHandler.call(server, CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    if (running.size >= options.maxConcurrentCalls) {
      return errorResult(new McpvisorError('BUSY', `this session already runs ${options.maxConcurrentCalls} calls; wait for one to finish`), name) as never;
    }
    const controller = new AbortController();
    const onAbort = () => {
      controller.abort();
    };
    extra.signal.addEventListener('abort', onAbort, { once: true });
    controller.signal.addEventListener('abort', () => options.onCallAborted?.(extra.requestId), { once: true });
    running.set(extra.requestId, controller);
    const started = Date.now();
    try {
      const result = await supervisor.call(name, request.params.arguments, controller.signal);
      logger.debug({ tool: name, ms: Date.now() - started, isError: result.isError === true }, 'tool call');
      return result as never;
    } catch (error) {
      if (error instanceof McpvisorError && error.code === 'UNKNOWN_TOOL') {
        // A plain error with a JSON-RPC code: McpError would prefix "MCP error -32602:" to the message.
        throw Object.assign(new Error(error.message), { code: ErrorCode.InvalidParams });
      }
      throw error;
    } finally {
      extra.signal.removeEventListener('abort', onAbort);
      running.delete(extra.requestId);
    }
  });

  server.onerror = (error) => logger.debug({ err: error.message }, 'session transport error');

  return {
    server,
    abortCall(requestId) {
      running.get(requestId)?.abort();
    },
    get inFlight() {
      return running.size;
    },
  };
}
