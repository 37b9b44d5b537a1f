import { createHash } from 'node:crypto';
import { McpvisorError, type ErrorCode } from '../../protocol/errors';
import { errorResult } from '../../protocol/results';
import type { ToolResult } from '../../protocol/tool';
import type { ImageData } from './binary-summary';
import type { FetchResult, WebContent } from './content';
import type { FetchErrorCode } from './http-fetch';
import { capMetadata, type PageMetadata } from './metadata';

/**
 * One window of a fetched page as `fetch_web_content` answers it. Pure (no undici, no DOM): the
 * supervisor formats windows of the pages it keeps (supervisor/toolsets/web-paging.ts) with it too.
 */

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
 * Which version of the page a window was cut from (`structuredContent.snapshot`): windows with the
 * same `id` join up. `id` is a hash of the Markdown; `cached` says the window came from the copy
 * kept after an earlier call (no request was made); `changed` says whether the page differs from
 * the version the caller's earlier windows came from, when that is known.
 */
export interface SnapshotInfo {
  id: string;
  /** ISO 8601: when this version was fetched. */
  fetchedAt: string;
  cached: boolean;
  changed?: boolean;
}

/** The error result of a failed fetch. */
export function fetchErrorResult(result: FetchResult): ToolResult {
  const code = CODES[result.code ?? 'NETWORK_ERROR'];
  return errorResult(new McpvisorError(code, result.error ?? 'fetch failed', { data: { fetchError: result.code, status: result.status } }));
}

/**
 * Text for people: a metadata header, then the content window. When content remains, the last
 * line says how much and which `start_index` gets the next part. `structuredContent` carries the
 * same figures for programs. Indexes count UTF-16 code units (JavaScript string indexes); a window
 * never splits a surrogate pair (see wholeCharacters), so it may be one unit shorter or longer.
 */
export function formatFetchResult(result: FetchResult, requestedStart: number, maxLength: number, snapshot?: SnapshotInfo): ToolResult {
  if (!result.success || !result.data) return fetchErrorResult(result);
  return formatWindow(result.data, requestedStart, maxLength, snapshot);
}

/**
 * One window of `page`; see formatFetchResult. A start past the end is BAD_INPUT. The first
 * window (start 0) of a page with an `image` carries it as an MCP image block after the text;
 * structuredContent does not repeat its bytes.
 */
export function formatWindow(page: WebContent, requestedStart: number, maxLength: number, snapshot?: SnapshotInfo): ToolResult {
  const { content } = page;
  // Capped where it is read too (html-to-markdown); again here for any FetchResult a caller builds.
  const metadata = capMetadata(page.metadata ?? {});
  const total = content.length;
  if (requestedStart > 0 && requestedStart >= total) {
    return errorResult(new McpvisorError('BAD_INPUT', `start_index ${requestedStart} is past the end of the content (${total} characters)`));
  }
  const { start: startIndex, end } = wholeCharacters(content, requestedStart, maxLength);
  const part = content.slice(startIndex, end);
  const header = [
    metadata.title ? `Title: ${metadata.title}` : undefined,
    metadata.url ? `URL: ${metadata.url}` : undefined,
    metadata.contentType ? `Type: ${metadata.contentType}` : undefined,
    metadata.description ? `Description: ${metadata.description}` : undefined,
    metadata.author ? `Author: ${metadata.author}` : undefined,
    metadata.publishDate ? `Published: ${metadata.publishDate}` : undefined,
  ].filter(Boolean).join('\n');
  const truncated = end < total;
  // A later window cut from another version than the caller's earlier ones: said, never spliced silently.
  const changedNote =
    snapshot?.changed && startIndex > 0
      ? `\n\n[The page changed since its earlier parts were read: it was fetched again and this part comes from the new version (${total} characters), so it may not join the parts before. Read it again from start_index=0 to get the new version whole.]`
      : '';
  const note = truncated
    ? `\n\n[Content truncated: characters ${startIndex}-${end} of ${total}. Call fetch_web_content again with start_index=${end} to read more.]`
    : startIndex > 0 ? `\n\n[Characters ${startIndex}-${end} of ${total}; end of content.]` : '';
  const text = { type: 'text' as const, text: `${header}${header ? '\n\n---\n\n' : ''}${part}${changedNote}${note}` };
  // The image after its summary, in the first window only: later windows are more of the text.
  const image = page.image && startIndex === 0 ? [{ type: 'image' as const, data: page.image.data, mimeType: page.image.mimeType }] : [];
  return {
    content: [text, ...image],
    structuredContent: {
      metadata,
      content: part,
      startIndex,
      endIndex: end,
      totalLength: total,
      truncated,
      ...(truncated ? { nextStartIndex: end } : {}),
      ...(snapshot ? { snapshot: { ...snapshot } } : {}),
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

/**
 * The argument the supervisor's pager (supervisor/toolsets/web-paging.ts) adds to a call to ask
 * the fetch thread for the whole page, to keep. No client can send it: the tool's input schema
 * refuses unknown arguments before a call is routed.
 */
export const PAGE_REQUEST_ARG = '__mcpvisorPage';

export interface PageRequest {
  /** The most a page may take to be sent whole (pageBytes); a larger one is answered as a window. */
  maxEntryBytes: number;
  /** The snapshot id of the caller's earlier windows, to say whether the page changed. */
  previousId?: string;
}

/** A page sent whole for the pager to keep: `structuredContent.page` of the thread's answer. */
export interface KeptPage {
  content: string;
  metadata: PageMetadata;
  id: string;
  /** ISO 8601. */
  fetchedAt: string;
  /** What the pager keeps: pageBytes, the image aside (the pager does not keep it). */
  bytes: number;
  /**
   * The page's image, for the first window the pager cuts from this answer. Not kept with the
   * page: only a first window shows it, and a first window always fetches again.
   */
  image?: ImageData;
}

/** Bytes a kept page takes, counted high: two per UTF-16 code unit (V8 keeps Latin-1 strings in one). */
export function pageBytes(content: string, metadata: PageMetadata): number {
  return 2 * (content.length + JSON.stringify(metadata).length) + 256;
}

/** A page version's id: 16 hex digits of the SHA-256 of its Markdown. */
export function snapshotId(content: string): string {
  return createHash('sha256').update(content).digest('hex').slice(0, 16);
}
