/** Which of the two answers of Streamable HTTP a request's `Accept` header admits. */
export interface Accepted {
  /** `application/json`: one JSON answer. */
  json: boolean;
  /** `text/event-stream`: an SSE stream. */
  sse: boolean;
}

const SDK_ACCEPT = 'application/json, text/event-stream';
const BOTH: Accepted = Object.freeze({ json: true, sse: true });

/**
 * Reads `Accept` as RFC 9110 has it: media ranges with wildcards (any type, `application/*`,
 * `text/*`), in any case, parameters ignored but `q=0`, which excludes. No header admits both.
 *
 * Decision: MCP has clients list both types, but clients in use are reported to send one (in
 * issues against Claude Code, `application/json`; against the Python SDK, Anthropic's remote-MCP
 * proxy, `text/event-stream`) or any type, and the SDK's 406 left them without a connection; the
 * server can answer each (SessionTransport).
 */
export function acceptedTypes(header: string | string[] | undefined): Accepted {
  // What the SDK client sends on every POST: no parse on the way of each call.
  if (header === SDK_ACCEPT) return BOTH;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value === undefined || value.trim() === '') return BOTH;
  const accepted = { json: false, sse: false };
  for (const range of value.toLowerCase().split(',')) {
    const [type, ...params] = range.split(';').map((part) => part.trim());
    if (params.some((param) => /^q\s*=\s*0(\.0*)?$/.test(param))) continue;
    if (type === '*/*' || type === 'application/*' || type === 'application/json') accepted.json = true;
    if (type === '*/*' || type === 'text/*' || type === 'text/event-stream') accepted.sse = true;
  }
  return accepted;
}
