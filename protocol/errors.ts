/**
 * Stable error codes shared by the supervisor and every worker. Callers match on `code`, never on
 * the message (undici's lesson). Errors cross process and thread boundaries as plain
 * `{ code, message, data }` objects, because structured clone drops custom fields of an Error.
 */
export const ERROR_CODES = [
  'BAD_INPUT', // arguments fail the tool's schema or a rule of the tool
  'UNKNOWN_TOOL', // no tool of that name in the catalogue
  'TIMEOUT', // the call outlived its deadline and was stopped
  'CANCELLED', // the client cancelled the call or dropped its request
  'BUSY', // the pool's queue is full; try again later
  'WORKER_CRASHED', // the worker died while running the call
  'POOL_UNAVAILABLE', // the pool is degraded, failed or stopping and has no live worker
  'SHUTTING_DOWN', // the server is draining and takes no new calls
  'UPSTREAM_ERROR', // the remote service answered with an error
  'NETWORK_ERROR', // the remote service could not be reached
  'BLOCKED', // refused by a safety rule (blocked pattern, SSRF guard, sandbox)
  'NOT_FOUND', // a named file, path or resource does not exist
  'OUTPUT_TRUNCATED', // a result was cut at its cap (informational), or refused whole over pools.maxResultBytes (isError)
  'BROWSER_LAUNCH_TIMEOUT', // the search browser did not start within its launch timeout; it was killed
  'BROWSER_PAGE_TIMEOUT', // the search browser opened no page in time, even once relaunched
  'BROWSER_LAUNCH_FAILED', // the search browser could not start: no executable, or it exited or failed while starting
  'INTERNAL', // a bug of ours; the message says what happened
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** The wire form of an error: safe to send over IPC and to put in a tool result. */
export interface ErrorInfo {
  code: ErrorCode;
  message: string;
  data?: unknown;
}

/** Base class of every error we raise on purpose; `code` is stable, `message` is for people. */
export class McpvisorError extends Error {
  readonly code: ErrorCode;
  readonly data?: unknown;

  constructor(code: ErrorCode, message: string, options?: { data?: unknown; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'McpvisorError';
    this.code = code;
    this.data = options?.data;
  }

  toInfo(): ErrorInfo {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }

  static fromInfo(info: ErrorInfo): McpvisorError {
    return new McpvisorError(info.code, info.message, { data: info.data });
  }
}

/** `value` as JSON, cut at 200 characters; its tag when JSON cannot hold it. */
function shortJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    // A cycle or a BigInt: fall through to the tag.
  }
  text ??= Object.prototype.toString.call(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

/** Turns anything thrown into wire form; unknown throwables become INTERNAL with their message. */
export function toErrorInfo(error: unknown): ErrorInfo {
  if (error instanceof McpvisorError) return error.toInfo();
  try {
    if (error && typeof error === 'object') {
      const { code, message } = error as { code?: unknown; message?: unknown };
      if (isErrorCode(code) && typeof message === 'string') return { code, message };
      if (typeof message === 'string') return { code: 'INTERNAL', message };
      // A custom tool's `throw { reason: … }` said "[object Object]".
      if (!(error instanceof Error)) return { code: 'INTERNAL', message: `an object was thrown, not an Error: ${shortJson(error)}` };
    }
    // `throw undefined` (a rejection without a reason) said "undefined", as if that were the message.
    if (error === undefined || error === null) return { code: 'INTERNAL', message: `${String(error)} was thrown (a rejection without a reason?), not an Error with a message` };
    return { code: 'INTERNAL', message: String(error) };
  } catch {
    // Nothing readable was thrown (Object.create(null), a getter that throws): reading it threw
    // from the worker's catch, which ended the call as a crash of its worker.
    return { code: 'INTERNAL', message: `a value without a readable message was thrown (${Object.prototype.toString.call(error)})` };
  }
}
