import { McpvisorError } from '../../protocol/errors';
import type { ToolDescriptor, ToolResult } from '../../protocol/tool';
import { fetchWebContent } from './content';
import { fetchErrorResult, formatFetchResult, pageBytes, PAGE_REQUEST_ARG, snapshotId, type KeptPage, type PageRequest } from './fetch-window';

export { formatFetchResult } from './fetch-window';

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
    'Other URLs: JSON comes indented, RSS/Atom feeds as a list of items, text as it is, a PDF as its text, other binary files as a summary (type, size). ' +
    'An image gets a summary (type, size, pixel size); a PNG, JPEG, GIF or WebP of up to 1 MiB also comes as image content after it (first call only, not with start_index). ' +
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

/**
 * Runs `fetch_web_content`. The fetch timeout is the configured one, cut to the call's deadline
 * less 250 ms so the answer is a clear fetch timeout rather than the pool's TIMEOUT. With the
 * pager's PAGE_REQUEST_ARG, a page that fits its `maxEntryBytes` is answered whole (KeptPage in
 * `structuredContent.page`) for the supervisor to keep; a larger one as the asked window with its
 * snapshot id, so that the pager still tells a changed page from the same one.
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
  const request = args[PAGE_REQUEST_ARG] as PageRequest | undefined;
  if (request === undefined) return formatFetchResult(result, startIndex, maxLength);
  if (!result.success || !result.data) return fetchErrorResult(result);
  const { content } = result.data;
  const metadata = result.data.metadata ?? {};
  const id = snapshotId(content);
  const fetchedAt = new Date().toISOString();
  const bytes = pageBytes(content, metadata);
  if (bytes <= request.maxEntryBytes) {
    const page: KeptPage = { content, metadata, id, fetchedAt, bytes, ...(result.data.image ? { image: result.data.image } : {}) };
    return { content: [{ type: 'text', text: `the whole page, ${content.length} characters, for the supervisor to keep` }], structuredContent: { page } };
  }
  const changed = request.previousId === undefined ? undefined : request.previousId !== id;
  return formatFetchResult(result, startIndex, maxLength, { id, fetchedAt, cached: false, ...(changed === undefined ? {} : { changed }) });
}

function optionalInt(value: unknown, name: string, min: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw new McpvisorError('BAD_INPUT', `${name} must be an integer >= ${min}`);
  return value;
}
