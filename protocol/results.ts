import { toErrorInfo, type ErrorInfo } from './errors';
import type { ToolResult } from './tool';

/** `_meta` key a worker may set on a result to report the upstream HTTP status it got (metrics). */
export const UPSTREAM_STATUS_META_KEY = 'mcpvisor/upstreamStatus';

/** The `_meta` key under which an error result carries its stable code. */
export const ERROR_META_KEY = 'mcpvisor/error';

/**
 * The one place an error becomes what a client sees: a tool result with `isError: true`, text a
 * person understands (`CODE: message`), and the code under `_meta` for programs.
 */
export function errorResult(error: unknown, toolName?: string): ToolResult {
  const info: ErrorInfo = toErrorInfo(error);
  const where = toolName ? ` (tool ${toolName})` : '';
  return {
    content: [{ type: 'text', text: `${info.code}${where}: ${info.message}` }],
    isError: true,
    _meta: { [ERROR_META_KEY]: info.data === undefined ? { code: info.code } : { code: info.code, data: info.data } },
  };
}

/** Reads the stable code back from an error result, e.g. in tests and clients. */
export function errorCodeOf(result: { _meta?: Record<string, unknown> }): string | undefined {
  const meta = result._meta?.[ERROR_META_KEY] as { code?: string } | undefined;
  return meta?.code;
}

