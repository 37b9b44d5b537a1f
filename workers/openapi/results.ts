import { McpvisorError } from '../../protocol/errors';
import { errorResult } from '../../protocol/results';
import type { ToolResult } from '../../protocol/tool';
import type { ApiResponse } from './api-client';

/** Characters of an error body quoted in an error result. */
export const ERROR_EXCERPT_CHARS = 2_000;
/** Images up to this size are returned as image content; bigger ones are summarised. */
const MAX_IMAGE_BYTES = 1024 * 1024;

/**
 * An upstream answer as a tool result. 2xx JSON: pretty-printed text plus `structuredContent`
 * (an object as is; anything else under `result`). Text types: the text. Images up to 1 MB: image
 * content. Other binary: a one-line summary. Empty: `HTTP <status>`. A cut body says so and has no
 * structuredContent. Non-2xx: an `isError` result with code UPSTREAM_ERROR, the status and at
 * most 2,000 characters of the body; 401/403 say "authentication error".
 */
export function responseToResult(response: ApiResponse): ToolResult {
  const type = (response.headers['content-type'] ?? '').toLowerCase();
  const cut = response.truncated ? `\n[response cut at ${response.body.length} bytes]` : '';
  if (response.status < 200 || response.status >= 300) {
    const text = response.body.toString('utf8');
    const excerpt = text.length > ERROR_EXCERPT_CHARS ? `${text.slice(0, ERROR_EXCERPT_CHARS)}…` : text;
    const auth = response.status === 401 || response.status === 403 ? 'authentication error: ' : '';
    return errorResult(
      new McpvisorError('UPSTREAM_ERROR', `${auth}HTTP ${response.status}${excerpt ? `: ${excerpt}` : ''}`, { data: { status: response.status } }),
    );
  }
  if (response.body.length === 0) return { content: [{ type: 'text', text: `HTTP ${response.status}` }] };
  if (/json/.test(type) || (type === '' && looksLikeJson(response.body))) {
    const text = response.body.toString('utf8');
    if (!response.truncated) {
      try {
        const value: unknown = JSON.parse(text);
        const structured = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { result: value };
        return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: structured };
      } catch {
        // Not JSON after all: return it as text.
      }
    }
    return { content: [{ type: 'text', text: text + cut }] };
  }
  if (type.startsWith('text/') || /xml|yaml|javascript|csv|x-www-form-urlencoded/.test(type)) {
    return { content: [{ type: 'text', text: response.body.toString('utf8') + cut }] };
  }
  if (type.startsWith('image/') && !response.truncated && response.body.length <= MAX_IMAGE_BYTES) {
    return { content: [{ type: 'image', data: response.body.toString('base64'), mimeType: type.split(';')[0] }] };
  }
  return { content: [{ type: 'text', text: `binary response: ${type || 'unknown type'}, ${response.body.length} bytes${response.truncated ? ' (cut)' : ''}` }] };
}

function looksLikeJson(body: Buffer): boolean {
  const first = body.subarray(0, 64).toString('utf8').trimStart()[0];
  return first === '{' || first === '[';
}
