import { FetchError, httpFetch, type FetchErrorCode, type HttpFetchOptions } from './http-fetch';
import { summariseBinary, type ImageData } from './binary-summary';
import { feedToMarkdown, isFeed } from './feed';
import { htmlToMarkdown } from './html-to-markdown';
import { PDF_MAX_CHARS, pdfText } from './pdf-text';
import type { PageMetadata } from './metadata';

/** Spec 001 WebContent. */
export interface WebContent {
  content: string;
  metadata?: PageMetadata;
  /** Ours: a PNG, JPEG, GIF or WebP small enough to give as an MCP image block after the first window's text. */
  image?: ImageData;
}

/** Spec 001 FetchResult, plus `code` and `status` (ours) so programs need not parse `error`. */
export interface FetchResult {
  success: boolean;
  data?: WebContent;
  error?: string;
  code?: FetchErrorCode;
  status?: number;
}

/** Spec 001 FetchOptions: per-fetch timeout (ms) and extra request headers. */
export interface FetchOptions {
  timeout?: number;
  headers?: Record<string, string>;
}

/**
 * The whole fetch pipeline, without rate limiting: fetch, then by what the body is (see bodyKind):
 * HTML to Markdown; JSON pretty-printed; RSS and Atom feeds as a list of items; other text (plain,
 * Markdown, CSV, XML, SVG) as it is; binary bodies (images, PDFs, archives) summarised. Every
 * kind but HTML names its media type in `metadata.contentType`; a small PNG, JPEG, GIF or WebP
 * comes in `data.image` too (binary-summary.ts). Never throws: every failure is
 * `{ success: false, error, code }`.
 */
export async function fetchWebContent(url: string, options: HttpFetchOptions = {}): Promise<FetchResult> {
  try {
    const response = await httpFetch(url, options);
    if (response.binary) {
      const summary = summariseBinary(response.binary, response.contentType, response.bytes);
      const content = summary.contentType === 'application/pdf' && !response.binary.cut ? await withPdfText(summary.facts, response.binary.body, options.signal) : summary.text;
      const metadata = { ...(summary.title ? { title: summary.title } : {}), url: response.url, contentType: summary.contentType };
      return { success: true, data: { content, metadata, ...(summary.image ? { image: summary.image } : {}) } };
    }
    const type = mediaType(response.contentType);
    const kind = bodyKind(type, response.text);
    if (kind === 'html') {
      let converted: ReturnType<typeof htmlToMarkdown>;
      try {
        converted = htmlToMarkdown(response.text, response.url);
      } catch (error) {
        // The network did its part: a page the converter chokes on is not a NETWORK_ERROR.
        return { success: false, error: `${response.url} was fetched but could not be converted to Markdown: ${(error as Error)?.message ?? String(error)}`, code: 'CONVERSION_FAILED' };
      }
      const none = response.text.trim() === '' ? emptyNote(response.status, type, response.text) : converted.markdown.trim() === '' ? noTextNote(response.text.length) : undefined;
      return { success: true, data: { content: none ?? converted.markdown, metadata: converted.metadata } };
    }
    if (kind === 'feed') {
      const feed = feedToMarkdown(response.text, response.url);
      if (feed) return { success: true, data: { content: feed.markdown, metadata: { ...feed.metadata, contentType: type || 'application/xml' } } };
    }
    const metadata = { url: response.url, contentType: kind === 'json' && !/json/.test(type) ? 'application/json' : type || 'text/plain' };
    if (response.text.trim() === '') return { success: true, data: { content: emptyNote(response.status, type, response.text), metadata } };
    if (kind === 'json') return { success: true, data: { content: prettyJson(response.text), metadata } };
    return { success: true, data: { content: response.text, metadata } };
  } catch (error) {
    if (error instanceof FetchError) return { success: false, error: error.message, code: error.code, ...(error.status ? { status: error.status } : {}) };
    return { success: false, error: `fetch failed: ${(error as Error)?.message ?? String(error)}`, code: 'NETWORK_ERROR' };
  }
}

/**
 * The content of an answer with nothing in it, said rather than left empty: an empty window read
 * like a failed fetch, or like content still to come. Decision (spec 001 is silent): a success,
 * since the site did answer.
 */
function emptyNote(status: number, type: string, text: string): string {
  const typed = type ? `, ${type}` : ', no Content-Type';
  return text === '' ? `[No content: HTTP ${status} with an empty body${typed}.]` : `[No content: HTTP ${status}, a body of only whitespace (${text.length} characters${typed}).]`;
}

/** An HTML page whose conversion holds no text: a script-rendered application's shell, most often. */
function noTextNote(chars: number): string {
  return `[No text: the page's HTML (${chars} characters) holds none outside scripts, styles, forms and navigation. Its content may be filled in by JavaScript, which this tool does not run.]`;
}

/** A PDF's summary line, then its text (pdf-text.ts), or why there is none. */
async function withPdfText(facts: string, body: Buffer, signal: AbortSignal | undefined): Promise<string> {
  const read = await pdfText(body, signal);
  if (!read.ok) return `[${facts}. Its text is not extracted (${read.reason}): only this summary is returned.]`;
  if (read.text === '') return `[${facts}. It holds no text: its pages may be scanned images, and this tool does no OCR.]`;
  const cut = read.cut ? ` (pages 1-${read.pagesRead} of ${read.pages}${read.text.length >= PDF_MAX_CHARS ? `, the first ${PDF_MAX_CHARS.toLocaleString('en-US')} characters` : ''})` : '';
  return `[${facts}. Its text follows${cut}, as pdf.js reads it: without layout, images or tables.]\n\n${read.text}`;
}

/** `text/html` of `Text/HTML; charset=utf-8`; '' for none. */
function mediaType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase().slice(0, 100);
}

/**
 * What a text body is read as. The label decides, but for what browsers and sites get wrong:
 * - JSON under an HTML label or none (`{…}` or `[…]` that parses) is JSON: through the HTML
 *   converter, `[` and `_` came out escaped (`\\[`) and the lines run together;
 * - a body under an HTML label or none whose root element is `<rss>`, `<feed>` or `<rdf:RDF>` is
 *   a feed (servers that label every file text/html serve feeds so; no HTML page has such a root);
 * - an untyped body that starts with `<` is HTML;
 * - any XML type (`text/xml`, `application/rss+xml`…) whose root is `<rss>`, `<feed>` or
 *   `<rdf:RDF>` is a feed.
 * Decision: text/plain is text even when it holds HTML or JSON (source files are served so).
 */
function bodyKind(type: string, text: string): 'html' | 'json' | 'feed' | 'text' {
  if (type === '' || /html/.test(type)) {
    if (looksLikeJson(text)) return 'json';
    if (isFeed(text)) return 'feed';
    if (/html/.test(type) || /^\s*</.test(text)) return 'html';
    return 'text';
  }
  if (/json/.test(type)) return 'json';
  if (/xml/.test(type) && !/svg/.test(type) && isFeed(text)) return 'feed';
  return 'text';
}

/** Whether `text` is a JSON object or array (checked by parsing it when it starts like one). */
function looksLikeJson(text: string): boolean {
  if (!/^\s*[[{]/.test(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * JSON indented by two spaces, when that at most quadruples it; otherwise, and when it is not
 * valid JSON, the text as it came. Indentation grows with depth on every line: 20 KB of arrays
 * nested 10,000 deep became 200,000,000 characters (a second and hundreds of MB of a fetch
 * thread's heap, for content paged 10,000 characters a call).
 */
function prettyJson(text: string): string {
  try {
    const value: unknown = JSON.parse(text);
    return indentationChars(value, 3 * text.length) <= 3 * text.length ? JSON.stringify(value, null, 2) : text;
  } catch {
    return text;
  }
}

/**
 * About the characters `JSON.stringify(value, null, 2)` adds to `value`'s compact form, counted
 * without building it (with a stack: no recursion), stopping once past `limit`.
 */
function indentationChars(value: unknown, limit: number): number {
  let added = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0 && added <= limit) {
    const { value: node, depth } = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    const members = Array.isArray(node) ? (node as unknown[]) : Object.values(node);
    if (members.length === 0) continue;
    // Each member on a line of its own, one level in (objects: a space after each colon); the
    // closing bracket on a line at this level.
    added += members.length * (2 + 2 * depth + (Array.isArray(node) ? 1 : 2)) + 1 + 2 * depth;
    for (const member of members) stack.push({ value: member, depth: depth + 1 });
  }
  return added;
}
