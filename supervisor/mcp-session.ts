import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { CallToolRequestSchema, ErrorCode, InitializeRequestSchema, isJSONRPCErrorResponse, isJSONRPCNotification, isJSONRPCRequest, isJSONRPCResultResponse, LATEST_PROTOCOL_VERSION, ListToolsRequestSchema, PingRequestSchema, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type ProgressToken, type RequestId, type ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { McpvisorError } from '../protocol/errors';
import { errorCodeOf } from '../protocol/results';
import type { ToolResult } from '../protocol/tool';
import type { Logger } from './logger';
import type { Supervisor } from './supervisor';
import { isPlainMeta } from './wire';
import { progressNotifier } from './progress-notifier';

export interface SessionOptions {
  supervisor: Supervisor;
  logger: Logger;
  /** Calls one session may run at once; more answer BUSY. */
  maxConcurrentCalls: number;
  /** Called when a call is cancelled (client cancel or dropped request), to close its stream. */
  onCallAborted?: (requestId: RequestId) => void;
  /** Called when a call ends, however it ends: activity, for the transport's idle clock. */
  onCallEnded?: () => void;
  /** The session's id as its client knows it (`Mcp-Session-Id`), for log lines; none over stdio. */
  sessionId?: () => string | undefined;
}

/** One MCP session: an SDK `Server` whose handlers route to the supervisor. */
export interface Session {
  server: Server;
  /** Connects the session to its transport (use this, not `server.connect`: it adds the call path). */
  connect(transport: Transport): Promise<void>;
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
 * revision (2024-10-07 through 2025-11-25) and answers everything but plain tools/call requests
 * (see `connect`).
 */
/** Requests the SDK answers, by method, whose params badParams checks first. */
const CHECKED_REQUESTS = new Map<string, { safeParse(message: unknown): { success: true } | { success: false; error: { issues: Array<{ path: PropertyKey[]; message: string }> } } }>([
  ['initialize', InitializeRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['ping', PingRequestSchema],
]);

/**
 * Parses a session's first messages once, as the SDK and badParams parse them, and drops the
 * outcome: zod compiles each schema on its first use (~7 ms together here), on the way of a
 * client's first answer. For a supervisor that waits on its workers' start with nothing else to do.
 */
export function warmUpSessions(): void {
  const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'warm-up', version: '0' } } };
  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
  for (const message of [initialize, list, { jsonrpc: '2.0', method: 'notifications/initialized' }]) {
    // The SDK's Protocol tries these on every message, in this order.
    void (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message) || isJSONRPCRequest(message) || isJSONRPCNotification(message));
  }
  CHECKED_REQUESTS.get('initialize')!.safeParse(initialize);
  CHECKED_REQUESTS.get('tools/list')!.safeParse(list);
}

/** Sessions created in this process, for their keys. */
let sessionsCreated = 0;
/** Calls taken in this process, for their ids in log lines (`c1`, `c2`…). */
let callsTaken = 0;

export function createSession(options: SessionOptions): Session {
  const { supervisor, logger } = options;
  const server = new Server(
    { name: supervisor.config.name, version: supervisor.health().version },
    // listChanged where a left-out pool may join later (supervisor.ts #retryLeftOut).
    { capabilities: { tools: { listChanged: supervisor.toolsMayChange } }, jsonSchemaValidator: sharedValidator },
  );
  // The SDK answers a method it has no handler for "Method not found", naming none: say which,
  // so that a client author sees at once what this server does not serve (resources/list…).
  server.fallbackRequestHandler = async (request) => {
    throw Object.assign(new Error(`Method not found: ${request.method.slice(0, 200)} (this server serves tools only: initialize, ping, tools/list, tools/call)`), { code: ErrorCode.MethodNotFound });
  };
  const running = new Map<RequestId, AbortController>();
  /** Names this session to supervisor-side state kept per session (the web pager's pages). */
  const sessionKey = `s${++sessionsCreated}`;
  /** An initialize request has been taken (lifecycle). */
  let initialized = false;

  const abort = (requestId: RequestId) => {
    const controller = running.get(requestId);
    if (!controller || controller.signal.aborted) return;
    controller.abort();
    options.onCallAborted?.(requestId);
  };

  /**
   * One call; `controller` is registered under `requestId` while it runs. With `progress` (the
   * request's progress token, and how to send a notification about the request), the call says
   * every `pools.progressIntervalMs` that it still runs, and passes on the tool's own reports
   * (progress-notifier.ts).
   */
  async function callTool(
    name: string,
    args: Record<string, unknown> | undefined,
    requestId: RequestId,
    controller: AbortController,
    progress?: { token: ProgressToken; notify: (notification: ServerNotification) => Promise<void> },
  ): Promise<ToolResult> {
    // MCP: ids are never reused in a session. A second call under a running one's id replaced it
    // in `running`: uncounted (the per-session limit let any number through on stdio, whose
    // transport does not refuse such ids as Streamable HTTP's does) and out of reach of a cancel.
    if (running.get(requestId)?.signal.aborted === false) {
      throw Object.assign(new Error(`Invalid Request: request id ${JSON.stringify(requestId)} is already in use in this session`), { code: ErrorCode.InvalidRequest });
    }
    if (running.size >= options.maxConcurrentCalls) {
      return supervisor.refuse(name, new McpvisorError('BUSY', `this session already runs ${options.maxConcurrentCalls} calls; wait for one to finish`));
    }
    running.set(requestId, controller);
    const started = performance.now();
    const callId = `c${++callsTaken}`;
    let outcome = 'ok';
    const notifier = progress
      ? progressNotifier({
          name,
          ...progress,
          intervalMs: supervisor.config.pools.progressIntervalMs,
          onBackwards: (value, lastSent) =>
            logger.warn({ sessionId: options.sessionId?.(), callId, tool: name, progress: value, lastSent }, 'a progress report of the tool was not sent: MCP requires progress to rise, and the client has seen a value at least as high (the heartbeat counts seconds: report above them, or before the first heartbeat)'),
        })
      : undefined;
    try {
      const result = await supervisor.call(name, args, controller.signal, sessionKey, callId, notifier?.onProgress);
      if (result.isError) outcome = errorCodeOf(result) ?? 'error';
      await notifier?.beforeResult();
      return result;
    } catch (error) {
      outcome = error instanceof McpvisorError ? error.code : 'error';
      if (error instanceof McpvisorError && error.code === 'UNKNOWN_TOOL') {
        // A plain error with a JSON-RPC code: McpError would prefix "MCP error -32602:" to the message.
        throw Object.assign(new Error(error.message), { code: ErrorCode.InvalidParams });
      }
      throw error;
    } finally {
      // One line per call, with what joins it to the worker's lines (callId) and to the client's
      // (sessionId, requestId); a client's own id is cut short, it may be any length.
      if (logger.isLevelEnabled('debug')) {
        const shownId = typeof requestId === 'string' && requestId.length > 64 ? `${requestId.slice(0, 61)}...` : requestId;
        logger.debug({ sessionId: options.sessionId?.(), callId, requestId: shownId, tool: name.length > 128 ? `${name.slice(0, 125)}...` : name, ms: Math.round(performance.now() - started), outcome }, 'tool call');
      }
      notifier?.stop();
      if (running.get(requestId) === controller) running.delete(requestId);
      options.onCallEnded?.();
    }
  }

  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    try {
      return supervisor.catalogue.listPage(request.params?.cursor) as never;
    } catch (error) {
      if (!(error instanceof McpvisorError)) throw error;
      // A plain error with a JSON-RPC code (McpError would prefix "MCP error -32602:").
      throw Object.assign(new Error(`Invalid params: cursor: ${error.message}`), { code: ErrorCode.InvalidParams });
    }
  });

  // Registered past Server's own override of setRequestHandler, which parses each tools/call a
  // second time and each result against the SDK's zod schema. Results are checked by the
  // catalogue (result-check.ts, by hand and shallowly), and the SDK client of every integration
  // test parses them strictly. Calls with other `_meta` fields or other extra params come this way.
  Protocol.prototype.setRequestHandler.call(server, CallToolRequestSchema, async (request, extra) => {
    const controller = new AbortController();
    const onAbort = () => abort(extra.requestId);
    extra.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const token = request.params._meta?.progressToken;
      const progress = token === undefined ? undefined : { token, notify: extra.sendNotification };
      return (await callTool(request.params.name, request.params.arguments, extra.requestId, controller, progress)) as never;
    } finally {
      extra.signal.removeEventListener('abort', onAbort);
    }
  });

  server.onerror = (error) => logger.debug({ err: error.message }, 'session transport error');

  /**
   * Plain tools/call requests skip the SDK's Protocol: its per-request work (three zod guards
   * that try each message kind in turn, a zod parse of the request, an AbortController and a
   * closure set per request, three promise turns) was about a sixth of the supervisor's CPU per
   * call in a profile under 20 HTTP sessions; with the transports' zod parse of each message
   * (wire.ts) gone too, the supervisor's CPU per call fell from ~168 to ~115 µs
   * (bench/openapi/throughput.ts, same run). A request qualifies when its params are `name` (a
   * string), optionally `arguments` (an object) and a `_meta` holding a progress token: what the
   * SDK's schema accepts unchanged. Anything else goes to the SDK. The answers are the SDK's: the
   * result, or for a throw the error the SDK would build, and nothing for a cancelled call.
   * `notifications/cancelled` and the transport closing cancel these calls as the SDK cancels its
   * own.
   */
  function fastPath(transport: Transport, message: JSONRPCMessage): boolean {
    if (!('method' in message)) return false;
    if (message.method === 'notifications/cancelled') {
      const requestId = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (requestId !== undefined) abort(requestId);
      return false; // the SDK cancels its own calls
    }
    if (message.method !== 'tools/call' || !('id' in message)) return badParams(transport, message) || lifecycle(transport, message);
    const id = message.id;
    const invalid = invalidCallParams(message.params);
    if (invalid) {
      // The SDK would answer its zod error as an internal error (-32603).
      void transport.send({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${invalid}` } } as JSONRPCMessage).catch(() => undefined);
      return true;
    }
    const params = plainCallParams(message.params as object);
    if (!params) return false;
    const controller = new AbortController();
    const token = (params._meta as { progressToken?: ProgressToken } | undefined)?.progressToken;
    const progress =
      token === undefined
        ? undefined
        : { token, notify: (notification: ServerNotification) => transport.send({ jsonrpc: '2.0', ...notification } as JSONRPCMessage, { relatedRequestId: id }) };
    callTool(params.name, params.arguments, id, controller, progress).then(
      (result) => (controller.signal.aborted ? undefined : transport.send({ jsonrpc: '2.0', id, result } as unknown as JSONRPCMessage)),
      (error: { code?: unknown; message?: string; data?: unknown }) => {
        if (controller.signal.aborted) return undefined;
        // The SDK's error answer (Protocol#_onrequest).
        const code = Number.isSafeInteger(error.code) ? (error.code as number) : ErrorCode.InternalError;
        const body = { code, message: error.message ?? 'Internal error', ...(error.data !== undefined ? { data: error.data } : {}) };
        return transport.send({ jsonrpc: '2.0', id, error: body } as JSONRPCMessage);
      },
    ).catch((error: Error) => server.onerror?.(new Error(`Failed to send response: ${error}`)));
    return true;
  }

  /**
   * Requests the SDK answers whose params do not fit its schema: answered here with -32602 and
   * the first problem, where the SDK answers its zod error as an internal error (-32603) whose
   * message is the whole issue dump. True when answered.
   */
  function badParams(transport: Transport, message: JSONRPCMessage): boolean {
    const schema = 'id' in message && 'method' in message ? CHECKED_REQUESTS.get(message.method) : undefined;
    if (!schema) return false;
    const parsed = schema.safeParse(message);
    if (parsed.success) return false;
    const issue = parsed.error.issues[0];
    const where = issue.path.filter((part) => part !== 'params').join('.');
    const text = `Invalid params: ${where ? `${where}: ` : ''}${issue.message}`;
    void transport.send({ jsonrpc: '2.0', id: (message as { id: RequestId }).id, error: { code: ErrorCode.InvalidParams, message: text } } as JSONRPCMessage).catch(() => undefined);
    return true;
  }

  /**
   * What the SDK's Server leaves out: a second initialize is refused (the HTTP transport refuses
   * it before it gets here; stdio has only this), and the revision the SDK will answer is told to
   * the transport (`setProtocolVersion`), whose batch rule depends on it. True when answered.
   */
  function lifecycle(transport: Transport, message: JSONRPCMessage): boolean {
    if (!('id' in message) || !('method' in message) || message.method !== 'initialize') return false;
    if (initialized) {
      void transport.send({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InvalidRequest, message: 'Invalid Request: the session is already initialized' } } as JSONRPCMessage).catch(() => undefined);
      return true;
    }
    initialized = true;
    const requested = (message.params as { protocolVersion: string }).protocolVersion;
    transport.setProtocolVersion?.(SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION);
    return false;
  }

  return {
    server,
    async connect(transport) {
      await server.connect(transport);
      const sdkMessage = transport.onmessage!;
      const sdkClose = transport.onclose;
      transport.onmessage = (incoming, extra) => {
        const message = withoutTask(incoming);
        if (!fastPath(transport, message)) sdkMessage(message, extra);
      };
      // Told once initialized (MCP: nothing but pings before it); a failed send is the transport's end.
      const stopListening = supervisor.onToolsChanged(() => {
        if (initialized) server.sendToolListChanged().catch(() => undefined);
      });
      let ended = false;
      transport.onclose = () => {
        stopListening();
        for (const controller of running.values()) controller.abort();
        // The one place every transport's session ends (DELETE, a closed stream, expiry, stdin).
        if (!ended) supervisor.sessionEnded(sessionKey);
        ended = true;
        sdkClose?.();
      };
    },
    abortCall: abort,
    get inFlight() {
      return running.size;
    },
  };
}

/**
 * A request without the `task` param of MCP 2025-11-25's tasks. We declare no `tasks` capability,
 * and the revision says a receiver that does not declare it for a request type "MUST process
 * requests of that type normally, ignoring any task-augmentation metadata"; the SDK's Protocol
 * instead answers such a request with an internal error (-32603, "Server does not support task
 * creation"), so the param is dropped before the SDK or the call path sees it.
 */
function withoutTask(message: JSONRPCMessage): JSONRPCMessage {
  if (!('method' in message) || !('id' in message)) return message;
  const params = message.params as Record<string, unknown> | undefined;
  if (params === null || typeof params !== 'object' || !Object.hasOwn(params, 'task')) return message;
  const { task: _ignored, ...rest } = params;
  return { ...message, params: rest } as JSONRPCMessage;
}

/**
 * `{name, arguments?, _meta?}` with the types the SDK's CallToolRequest schema requires (`_meta`
 * with a progress token only, which callTool uses for its progress notifications), else undefined.
 */
function plainCallParams(params: object): { name: string; arguments?: Record<string, unknown>; _meta?: unknown } | undefined {
  // invalidCallParams has checked `name` and `arguments`.
  const { name, arguments: args, _meta: meta } = params as { name: string; arguments?: Record<string, unknown> | null; _meta?: unknown };
  if (meta !== undefined && !isPlainMeta(meta)) return undefined;
  for (const key in params) if (key !== 'name' && key !== 'arguments' && key !== '_meta') return undefined;
  // `arguments: null`, which some clients send for "none", is no arguments.
  return args === null ? { name, _meta: meta } : (params as { name: string; arguments?: Record<string, unknown>; _meta?: unknown });
}

/** Why tools/call params are unusable (no string `name`, `arguments` not an object), or undefined. */
function invalidCallParams(params: unknown): string | undefined {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return 'tools/call needs params {name, arguments}';
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string') return "'name' must be a string, the tool's name";
  if (args !== undefined && args !== null && (typeof args !== 'object' || Array.isArray(args))) return "'arguments' must be an object";
  return undefined;
}
