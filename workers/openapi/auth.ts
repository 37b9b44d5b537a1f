/**
 * Upstream authentication of spec 000: static headers or an `IAuthProvider`. Header values never
 * reach a log line: callers log header names only.
 */

/** Dynamic authentication. */
export interface IAuthProvider {
  /** Called before every upstream request; the headers are added to it. */
  getAuthHeaders(): Promise<Record<string, string>>;
  /**
   * Called when the upstream answers 401 or 403. Resolve true to retry the request once with fresh
   * headers, false to report the error. A thrown error's message reaches the user.
   */
  handleAuthError(error: AuthErrorInfo): Promise<boolean>;
}

/** What `handleAuthError` learns about the failed request. */
export interface AuthErrorInfo {
  status: number;
  statusText?: string;
  /** A bounded excerpt of the response body. */
  body?: string;
  method: string;
  url: string;
  response: { status: number; headers: Record<string, string> };
}

/** The built-in provider for static headers; `handleAuthError` never asks for a retry. */
export class StaticAuthProvider implements IAuthProvider {
  readonly #headers: Record<string, string>;

  constructor(headers: Record<string, string> = {}) {
    this.#headers = { ...headers };
  }

  async getAuthHeaders(): Promise<Record<string, string>> {
    return { ...this.#headers };
  }

  async handleAuthError(): Promise<boolean> {
    return false;
  }
}

/**
 * True when an error is authentication-related: an object with `status` (or `response.status`,
 * axios style, or `statusCode`) of 401 or 403.
 */
export function isAuthError(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const e = error as { status?: unknown; statusCode?: unknown; response?: { status?: unknown }; data?: { status?: unknown; auth?: unknown } };
  // `data`: our own McpvisorError for a failed retry or a thrown handleAuthError (api-client.ts).
  if (e.data?.auth === true) return true;
  const status = e.status ?? e.statusCode ?? e.response?.status ?? e.data?.status;
  return status === 401 || status === 403;
}

/** Whether a value looks like an IAuthProvider. */
export function isAuthProvider(value: unknown): value is IAuthProvider {
  return (
    !!value &&
    typeof (value as IAuthProvider).getAuthHeaders === 'function' &&
    typeof (value as IAuthProvider).handleAuthError === 'function'
  );
}
