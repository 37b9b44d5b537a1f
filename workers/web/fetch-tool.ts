import { McpvisorError, type ErrorCode } from '../../protocol/errors';
import { errorResult } from '../../protocol/results';
import type { ToolDescriptor, ToolResult } from '../../protocol/tool';
import { fetchWebContent, type FetchResult } from './content';
import type { FetchErrorCode } from './http-fetch';
import { capMetadata } from './metadata';

/** The fetch settings a worker needs (config.web.fetch). */
export interface FetchToolConfig {
  timeoutMs: number;
  maxBodyBytes: number;
  maxRedirects: number;
  allowPrivateNetwork: boolean;
  /** Characters returned per call (spec 001: 10,000). */
  maxOutputChars: number;
}

export const FETCH_TOOL: ToolDescriptor = {
  name: 'fetch_web_content',
  title: 'Fetch web content',
  description:
    'Fetch a web page and return its main content as Markdown, with metadata (title, description, URL, author, publish date). ' +
    'Long content is truncated to 10,000 characters; call again with start_index to read further.',
  inputSchema: {
    type: 'object',
    properties: {
      url: { type: 'string', description: 'The http(s) URL to fetch' },
      start_index: { type: 'integer', minimum: 0, description: 'Character offset of the content to start at (default 0)' },
      max_length: { type: 'integer', minimum: 1, maximum: 100000, description: 'Characters to return (default 10000)' },
    },
    required: ['url'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, openWorldHint: true },
};

/** How a fetch failure reaches the client: its stable code. */
const CODES: Record<FetchErrorCode, ErrorCode> = {
  INVALID_URL: 'BAD_INPUT',
  BLOCKED: 'BLOCKED',
  DNS_FAILURE: 'NETWORK_ERROR',
  CONNECTION_REFUSED: 'NETWORK_ERROR',
  // The same code as a call cut at its deadline: callers retry both alike, and a slow page is not a broken network.
  TIMEOUT: 'TIMEOUT',
  NETWORK_ERROR: 'NETWORK_ERROR',
  HTTP_ERROR: 'UPSTREAM_ERROR',
  TOO_LARGE: 'UPSTREAM_ERROR',
  TOO_MANY_REDIRECTS: 'UPSTREAM_ERROR',
  UNSUPPORTED_TYPE: 'UPSTREAM_ERROR',
  // Like the two above, a property of the page the site sent, not of the network.
  CONVERSION_FAILED: 'UPSTREAM_ERROR',
  CANCELLED: 'CANCELLED',
  // Library options only: the MCP tool passes no timeout or headers of the caller's.
  INVALID_OPTIONS: 'BAD_INPUT',
};

/**
 * Runs `fetch_web_content`. The fetch timeout is the configured one, cut to the call's deadline
 * less 250 ms so the answer is a clear fetch timeout rather than the pool's TIMEOUT.
 */
export async function runFetchTool(args: Record<string, unknown>, config: FetchToolConfig, context: { signal: AbortSignal; deadlineMs: number }): Promise<ToolResult> {
  const url = args.url;
  if (typeof url !== 'string' || url.trim() === '') throw new McpvisorError('BAD_INPUT', 'url must be a non-empty string');
  const startIndex = optionalInt(args.start_index, 'start_index', 0) ?? 0;
  const maxLength = optionalInt(args.max_length, 'max_length', 1) ?? config.maxOutputChars;
  const result = await fetchWebContent(url, {
    timeoutMs: Math.max(100, Math.min(config.timeoutMs, context.deadlineMs - 250)),
    maxBodyBytes: config.maxBodyBytes,
    maxRedirects: config.maxRedirects,
    allowPrivateNetwork: config.allowPrivateNetwork,
    signal: context.signal,
  });
  return formatFetchResult(result, startIndex, maxLength);
}

/**
 * Text for people: a metadata header, then the content window. When content remains, the last
 * line says how much and which `start_index` gets the next part. `structuredContent` carries the
 * same figures for programs. Indexes count UTF-16 code units (JavaScript string indexes); a window
 * never splits a surrogate pair (see wholeCharacters), so it may be one unit shorter or longer.
 */
export function formatFetchResult(result: FetchResult, requestedStart: number, maxLength: number): ToolResult {
  if (!result.success || !result.data) {
    const code = CODES[result.code ?? 'NETWORK_ERROR'];
    return errorResult(new McpvisorError(code, result.error ?? 'fetch failed', { data: { fetchError: result.code, status: result.status } }));
  }
  const { content } = result.data;
  // Capped where it is read too (html-to-markdown); again here for any FetchResult a caller builds.
  const metadata = capMetadata(result.data.metadata ?? {});
  const total = content.length;
  if (requestedStart > 0 && requestedStart >= total) {
    return errorResult(new McpvisorError('BAD_INPUT', `start_index ${requestedStart} is past the end of the content (${total} characters)`));
  }
  const { start: startIndex, end } = wholeCharacters(content, requestedStart, maxLength);
  const part = content.slice(startIndex, end);
  const header = [
    metadata.title ? `Title: ${metadata.title}` : undefined,
    metadata.url ? `URL: ${metadata.url}` : undefined,
    metadata.description ? `Description: ${metadata.description}` : undefined,
    metadata.author ? `Author: ${metadata.author}` : undefined,
    metadata.publishDate ? `Published: ${metadata.publishDate}` : undefined,
  ].filter(Boolean).join('\n');
  const truncated = end < total;
  const note = truncated
    ? `\n\n[Content truncated: characters ${startIndex}-${end} of ${total}. Call fetch_web_content again with start_index=${end} to read more.]`
    : startIndex > 0 ? `\n\n[Characters ${startIndex}-${end} of ${total}; end of content.]` : '';
  return {
    content: [{ type: 'text', text: `${header}${header ? '\n\n---\n\n' : ''}${part}${note}` }],
    structuredContent: {
      metadata,
      content: part,
      startIndex,
      endIndex: end,
      totalLength: total,
      truncated,
      ...(truncated ? { nextStartIndex: end } : {}),
    },
  };
}

/**
 * The window [start, end) moved off the middle of a surrogate pair, where half an emoji would be
 * an invalid character in the JSON sent. The end moves back before the pair, so the next part
 * (start_index = end) begins with it whole; a start inside a pair moves back to the pair. Decision:
 * a window of one code unit that would hold only half a pair takes the whole pair instead, so
 * reading on always moves forward.
 */
function wholeCharacters(content: string, start: number, maxLength: number): { start: number; end: number } {
  const inPair = (index: number) => index > 0 && index < content.length && isHigh(content.charCodeAt(index - 1)) && isLow(content.charCodeAt(index));
  const from = inPair(start) ? start - 1 : start;
  let end = Math.min(content.length, from + maxLength);
  if (inPair(end)) end = end - 1 > from ? end - 1 : end + 1;
  return { start: from, end };
}

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

function optionalInt(value: unknown, name: string, min: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw new McpvisorError('BAD_INPUT', `${name} must be an integer >= ${min}`);
  return value;
}
