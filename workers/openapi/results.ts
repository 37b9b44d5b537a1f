import { McpvisorError } from '../../protocol/errors';
import { errorResult } from '../../protocol/results';
import type { ToolResult } from '../../protocol/tool';
import type { ApiResponse } from './api-client';
import { htmlText, isHtml } from './html-text';
import { bomCharset, charsetOf, decodeIn, isUtf8Body, isUtf8Label } from '../common/charset';
import { indentJson } from './json-text';
import { isRateLimited, withHeaders } from './response-headers';

/** Characters of an error body quoted in an error result. */
export const ERROR_EXCERPT_CHARS = 2_000;
/** Images up to this size are returned as image content; bigger ones are summarised. */
const MAX_IMAGE_BYTES = 1024 * 1024;

/**
 * An upstream answer as a tool result. 2xx JSON: pretty-printed text plus `structuredContent`
 * (an object as is; anything else under `result`); numbers as written, and no structuredContent
 * when parsing would change one (an integer past 2^53); the body as it came when only the
 * indented copy is over `maxResultBytes`; a body labelled JSON that does not parse, its text
 * and a note saying so. Text types: the text. A text or JSON body holding NUL characters: a
 * one-line summary, as binary. A body sent as application/octet-stream that is UTF-8 text: as
 * an untyped one (JSON or text); a text/plain or text/html body that is whole JSON: as JSON. PNG, JPEG, GIF and WebP images up to 1 MB (by
 * their bytes): image content. Other binary: a one-line summary. Empty: `HTTP <status>`. A cut body says so and has no
 * structuredContent. A 3xx not followed: its status and Location. 4xx/5xx: an `isError` result
 * with code UPSTREAM_ERROR, the status and at most 2,000 characters of the body (of an HTML
 * page, of its text); 401/403 say "authentication error", or "rate limited" when the answer says
 * so (isRateLimited). Headers that matter come in a second
 * block (response-headers.ts), with those the operation declares (`declaredHeaders`, lower case).
 */
export function responseToResult(response: ApiResponse, maxResultBytes = DEFAULT_MAX_RESULT_BYTES, declaredHeaders?: readonly string[]): ToolResult {
  return withHeaders(bounded(toResult(response, maxResultBytes), maxResultBytes, response.truncated ? response.body.length : undefined), response, declaredHeaders);
}

/** Default of `maxResultBytes`: what one result may carry (text and structuredContent together). */
export const DEFAULT_MAX_RESULT_BYTES = 2 * 1024 * 1024;

/**
 * A result that fits in `maxBytes`, counted as it is written on the wire (JSON-escaped UTF-8).
 * Why: an MCP message is one line on stdio, and the SDK's stdio client drops the connection on one
 * over 10 MiB; a 5 MiB JSON body, sent as text and again as structuredContent, ended the session.
 * Over the cap, structuredContent goes first (the text holds the same data), then the text is
 * cut, saying so; an image too large is summarised.
 */
function bounded(result: ToolResult, maxBytes: number, responseCut?: number): ToolResult {
  const first = result.content[0];
  if (result.content.length !== 1 || first === undefined) return result;
  if (first.type === 'image') {
    if (first.data.length <= maxBytes) return result;
    const size = Buffer.byteLength(first.data, 'base64');
    return { ...result, content: [{ type: 'text', text: `image response: ${first.mimeType}, ${size} bytes, over maxResultBytes (${maxBytes}) as base64` }] };
  }
  if (first.type !== 'text') return result;
  const text = first.text;
  // JSON writes a UTF-16 unit as at most 6 bytes, and compact JSON is never longer than pretty.
  if (text.length * 6 * (result.structuredContent === undefined ? 1 : 2) <= maxBytes) return result;
  const bytes = wireBytes(text);
  if (result.structuredContent !== undefined && bytes <= maxBytes && bytes + wireBytes(JSON.stringify(result.structuredContent)) <= maxBytes) return result;
  const { structuredContent: _dropped, ...rest } = result;
  if (bytes <= maxBytes) return rest;
  const received = responseCut === undefined ? '' : ` (the response itself was cut at ${responseCut} bytes, maxResponseBytes)`;
  const note = `\n[result cut at ${maxBytes} of ${bytes} bytes${received}: ask for less, with the API's paging or filter parameters if it has them]`;
  const budget = maxBytes - wireBytes(note);
  // Escapes make the written size grow faster than the text: shrink until the head fits.
  let head = utf8Head(text, budget);
  for (let size = wireBytes(head); size > budget; size = wireBytes(head)) head = utf8Head(head, Math.floor((Buffer.byteLength(head) * budget) / size) - 8);
  return { ...rest, content: [{ type: 'text', text: head + note }] };
}

/** `value` as JSON indented by two spaces; undefined when it is nested too deep to write. */
function indent(value: unknown): string | undefined {
  try {
    return JSON.stringify(value, null, 2);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

/**
 * Whether `text` holds `length` digits in a row. A loop, not `/\d{16}/`: every digit run shorter
 * than that is a backtrack, and past 50,000 of them V8 hands a regexp to its linear engine
 * (regexp-backtrack-limit.ts), which read an 8 MB body of numbers in 3-5 s instead of 0.1 s.
 */
export function hasDigitRun(text: string, length: number): boolean {
  let run = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code >= 48 && code <= 57) {
      if (++run >= length) return true;
    } else run = 0;
  }
  return false;
}

/** Whether `text` as a JSON string on the wire takes at most `maxBytes` (a UTF-16 unit is at most 6 bytes). */
function fits(text: string, maxBytes: number): boolean {
  // Each UTF-16 unit is at least one byte: a longer text need not be measured (a copy of 8 MB).
  return text.length * 6 <= maxBytes || (text.length <= maxBytes && wireBytes(text) <= maxBytes);
}

/** Characters past which wireBytes counts instead of writing the JSON string out. */
const COUNTED_WIRE_CHARS = 64 * 1024;

/**
 * Bytes of `text` as a JSON string on the wire, quotes left out. A long text is counted, not
 * written out: 10 MB of control characters (a decompression bomb of NULs under text/plain) is
 * 60 MB as JSON, and sixteen such results at once took the worker past its memory and its calls
 * past their deadline.
 */
function wireBytes(text: string): number {
  if (text.length <= COUNTED_WIRE_CHARS) return Buffer.byteLength(JSON.stringify(text)) - 2;
  let bytes = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code < 0x20) bytes += code === 8 || code === 9 || code === 10 || code === 12 || code === 13 ? 2 : 6;
    else if (code === 0x22 || code === 0x5c) bytes += 2;
    else if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && at + 1 < text.length && (text.charCodeAt(at + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      at++;
    } else if (code >= 0xd800 && code <= 0xdfff) bytes += 6; // a lone surrogate is written \udXXX
    else bytes += 3;
  }
  return bytes;
}

/** The longest start of `text` of at most `bytes` bytes of UTF-8, never a character cut in two. */
function utf8Head(text: string, bytes: number): string {
  return Buffer.from(text).subarray(0, Math.max(0, bytes)).toString('utf8').replace(/\uFFFD$/, '');
}

function toResult(response: ApiResponse, maxBytes: number): ToolResult {
  const type = (response.headers['content-type'] ?? '').toLowerCase();
  const cut = response.truncated ? `\n[response cut at ${response.body.length} bytes]` : '';
  if (response.status >= 300 && response.status < 400) return redirectResult(response);
  if (response.status < 200 || response.status >= 300) {
    const raw = decode(response.body, type, response.truncated).text;
    // A proxy's or framework's error page: its words, not its markup.
    const html = isHtml(type, raw);
    const text = html ? htmlText(raw) : raw;
    const excerpt = text.length > ERROR_EXCERPT_CHARS ? `${text.slice(0, ERROR_EXCERPT_CHARS)}…` : text;
    // A 403 for too many calls is no refused credential: "authentication error" sent the model to its token.
    const refused = response.status === 401 || response.status === 403;
    const auth = !refused ? '' : isRateLimited(response.headers, text) ? 'rate limited: ' : 'authentication error: ';
    return errorResult(
      new McpvisorError('UPSTREAM_ERROR', `${auth}HTTP ${response.status}${html ? ' (an HTML page, as text)' : ''}${excerpt ? `: ${excerpt}` : ''}`, { data: { status: response.status } }),
    );
  }
  if (response.body.length === 0) return { content: [{ type: 'text', text: `HTTP ${response.status}` }] };
  // JSON or text sent as "some bytes" (S3 objects, servers without a type for it) was only
  // summarised: read as an untyped body, which is shown when it is UTF-8 text.
  if (OCTET_STREAM.test(type) && looksLikeText(response.body)) return toResult({ ...response, headers: { ...response.headers, 'content-type': '' } }, maxBytes);
  // JSON labelled text/plain or text/html (frameworks' defaults) came without structuredContent.
  if (/^text\/(plain|html)\b/.test(type) && !response.truncated && looksLikeJson(response.body) && parses(decode(response.body, type).text)) {
    return toResult({ ...response, headers: { ...response.headers, 'content-type': type.replace(/^text\/(plain|html)/, 'application/json') } }, maxBytes);
  }
  if (JSON_LINES.test(type)) {
    const decoded = decode(response.body, type, response.truncated);
    if (decoded.text.includes('\u0000')) return notText(response, type);
    return { content: [{ type: 'text', text: decoded.text + decoded.note + (response.truncated ? '' : badRecord(decoded.text, type.includes('json-seq'))) + cut }] };
  }
  if (/json/.test(type) || (type === '' && looksLikeJson(response.body))) {
    // A byte order mark may start JSON text (RFC 8259 8.1): read past it.
    const decoded = decode(response.body, withJsonCharset(type, response.body), response.truncated);
    if (decoded.text.includes('\u0000')) return notText(response, type);
    const text = decoded.text.replace(/^\uFEFF/, '');
    const note = decoded.note;
    if (!response.truncated) {
      try {
        const value: unknown = JSON.parse(text);
        // Digits enough for a number JSON.parse cannot hold: indent the text itself, and leave
        // structuredContent out if it would carry another number. Indented past the budget
        // (deep nesting): the body as it came, and no structuredContent, which may differ.
        const exact = hasDigitRun(text, 16) ? indentJson(text, maxBytes) ?? { text: text.trim(), lossy: true } : undefined;
        const indented = exact?.text ?? indent(value);
        // Valid JSON nested deeper than JSON.stringify recurses (thousands of levels) was labelled
        // "not valid JSON": shown as it came, without structuredContent, which could not be sent.
        if (indented === undefined) return { content: [{ type: 'text', text: text.trim() + note }] };
        // Indenting can take a body that fits over the budget: then the body as it came.
        const shown = indented.length > text.length && !fits(indented, maxBytes) && fits(text, maxBytes) ? text.trim() : indented;
        if (exact?.lossy) return { content: [{ type: 'text', text: shown + note }] };
        const structured = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { result: value };
        return { content: [{ type: 'text', text: shown + note }], structuredContent: structured };
      } catch (error) {
        // Not JSON after all: the text; labelled JSON, saying so, so that a broken body does not
        // read as a text answer.
        const why = error instanceof Error ? error.message.slice(0, 120) : String(error);
        if (type !== '') return { content: [{ type: 'text', text: `${text}${note}\n[not valid JSON although the response says ${type.split(';')[0]}: ${why}]` }] };
      }
    }
    return { content: [{ type: 'text', text: text + note + cut }] };
  }
  if (isTextType(type) || (type === '' && looksLikeText(response.body))) {
    const decoded = decode(response.body, type, response.truncated);
    if (decoded.text.includes('\u0000')) return notText(response, type);
    return { content: [{ type: 'text', text: decoded.text + decoded.note + cut }] };
  }
  const image = type.startsWith('image/') ? modelImageType(response.body) : undefined;
  if (image !== undefined && !response.truncated && response.body.length <= MAX_IMAGE_BYTES) {
    return { content: [{ type: 'image', data: response.body.toString('base64'), mimeType: image }] };
  }
  const unlike = type.startsWith('image/') && image === undefined && !response.truncated ? ` (not a PNG, JPEG, GIF or WebP image by its first bytes)` : '';
  return { content: [{ type: 'text', text: `binary response: ${type || 'unknown type'}, ${response.body.length} bytes${response.truncated ? ' (cut)' : ''}${unlike}` }] };
}

/**
 * A 2xx body typed as text or JSON that holds NUL characters once decoded: binary under the
 * wrong label (an archive sent as text/plain), or a decompression bomb of zeros. Summarised as
 * binary: shown, each NUL was six characters of `\u0000` for the model to read.
 */
function notText(response: ApiResponse, type: string): ToolResult {
  return { content: [{ type: 'text', text: `binary response: ${type}, ${response.body.length} bytes${response.truncated ? ' (cut)' : ''} (it holds NUL characters: not text, whatever its type says)` }] };
}

/**
 * Whether responseToResult may show the body as text: any but a 2xx answer of an image or other
 * binary type, which it sends as an image or summarises (type and size). An untyped or
 * octet-stream body counts, whatever it holds: telling would cost a UTF-8 check of it.
 */
export function bodyShownAsText(response: ApiResponse): boolean {
  if (response.status < 200 || response.status >= 300) return true;
  const type = (response.headers['content-type'] ?? '').toLowerCase();
  return type === '' || /json/.test(type) || isTextType(type) || OCTET_STREAM.test(type);
}

/** The types that say only "bytes": their body may be text all the same. */
const OCTET_STREAM = /^(application|binary)\/octet-stream\b/;

/**
 * A JSON value per line (NDJSON, JSON Lines) or per record (RFC 7464 JSON text sequences): text
 * as it came. Why: read as one JSON document, every such body was "not valid JSON", which told
 * the model the API's answer was broken.
 */
const JSON_LINES = /^application\/(x-ndjson|ndjson|jsonl|x-jsonlines|jsonlines|json-seq)\b/;

/**
 * `\n[line 3 is not valid JSON: …]` for the first line (of a JSON text sequence, `record`: one
 * may span lines) that does not parse; '' when all do.
 */
function badRecord(text: string, sequence: boolean): string {
  const records = sequence ? text.split('\u001e') : text.split(/\r?\n/);
  for (let at = 0; at < records.length; at++) {
    if (records[at].trim() === '') continue;
    try {
      JSON.parse(records[at]);
    } catch (error) {
      return `\n[${sequence ? 'record' : 'line'} ${sequence ? at : at + 1} is not valid JSON: ${(error as Error).message.slice(0, 120)}]`;
    }
  }
  return '';
}

function isTextType(type: string): boolean {
  return type.startsWith('text/') || /xml|yaml|javascript|csv|x-www-form-urlencoded/.test(type);
}

/**
 * The image type `body` is by its magic number, of those model APIs take (PNG, JPEG, GIF, WebP);
 * undefined for any other bytes. Why: a host forwards image content to its model, and a TIFF, an
 * icon or bytes that are no image under `image/png` made the whole model request fail. The type
 * the bytes are wins over the one the response gives (`image/jpg`, a PNG sent as JPEG).
 */
function modelImageType(body: Buffer): string | undefined {
  if (body.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (body.length >= 3 && body[0] === 0xff && body[1] === 0xd8 && body[2] === 0xff) return 'image/jpeg';
  const head = body.subarray(0, 12).toString('latin1');
  if (head.startsWith('GIF87a') || head.startsWith('GIF89a')) return 'image/gif';
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WEBP') return 'image/webp';
  return undefined;
}

/**
 * A 3xx the client did not follow (one to another origin, or 304 Not Modified): not an error.
 * A redirect's Location is often the answer (GitHub's archive downloads answer only a 302 to
 * another host), so it is named in the text, absolute, besides the headers block.
 */
function redirectResult(response: ApiResponse): ToolResult {
  // Only a redirect outside the base URL reaches here with a Location (others are followed), never a 304.
  const location = response.status === 304 ? undefined : response.headers.location;
  if (location === undefined) {
    const text = decode(response.body, (response.headers['content-type'] ?? '').toLowerCase()).text;
    return { content: [{ type: 'text', text: `HTTP ${response.status}${text ? `\n${text.slice(0, ERROR_EXCERPT_CHARS)}` : ''}` }] };
  }
  let target = location;
  let where = 'another origin';
  try {
    const next = new URL(location, response.url);
    target = next.href;
    if (next.origin === new URL(response.url).origin) where = "outside the API's base URL";
  } catch {
    // Not a URL: shown as it came.
  }
  return { content: [{ type: 'text', text: `HTTP ${response.status}: redirect to ${target} (${where}: not followed, so the API's credentials are not sent there)` }] };
}

/**
 * The body as text: in the encoding its byte order mark names, else in the charset its content
 * type names (`charset=iso-8859-1`, `shift_jis`…; workers/common/charset.ts), else UTF-8. `note`
 * is empty, or says in a line of its own why the text may not be what was sent: a charset no
 * decoder knows (decoded as UTF-8), or bytes that are not UTF-8 (shown as U+FFFD). Why: a body
 * in another encoding came back with U+FFFD for its accented letters (a UTF-16 body with a BOM
 * but no charset, all of it) and nothing said so.
 */
function decode(body: Buffer, type: string, cut = false): { text: string; note: string } {
  const label = charsetOf(type);
  const charset = bomCharset(body) ?? label;
  if (charset !== undefined && !isUtf8Label(charset)) {
    const text = decodeIn(body, charset);
    if (text !== undefined) return { text, note: '' };
  }
  const text = body.toString('utf8');
  if (isUtf8Body(body, cut)) return { text, note: '' };
  const named = label === undefined ? 'names no charset' : isUtf8Label(label) ? `says charset=${label}` : `names charset ${label}, which no decoder here knows,`;
  return { text, note: `\n[the response ${named} and is not valid UTF-8: its invalid bytes are shown as U+FFFD]` };
}

/** An untyped body that is UTF-8 without control characters other than tab and line breaks. */
function looksLikeText(body: Buffer): boolean {
  try {
    // `stream`: a character cut at 64 KiB is not an error.
    const head = new TextDecoder('utf-8', { fatal: true }).decode(body.subarray(0, 64 * 1024), { stream: true });
    return !/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/.test(head);
  } catch {
    return false; // not UTF-8: binary
  }
}

/**
 * `type` with `charset=utf-16le` or `utf-16be` for JSON that names no charset and has no byte
 * order mark but is UTF-16 by its first bytes, as RFC 4627 3 tells them (`{\0"\0` is UTF-16LE):
 * read as UTF-8, its NULs made it binary.
 */
function withJsonCharset(type: string, body: Buffer): string {
  if (charsetOf(type) !== undefined || bomCharset(body) !== undefined || body.length < 4) return type;
  const [a, b, c, d] = body;
  const charset = a === 0 && b !== 0 && c === 0 && d !== 0 ? 'utf-16be' : a !== 0 && b === 0 && c !== 0 && d === 0 ? 'utf-16le' : undefined;
  return charset === undefined ? type : `${type}; charset=${charset}`;
}

function parses(text: string): boolean {
  try {
    JSON.parse(text.replace(/^\uFEFF/, ''));
    return true;
  } catch {
    return false;
  }
}

function looksLikeJson(body: Buffer): boolean {
  const first = body.subarray(0, 64).toString('utf8').trimStart()[0];
  return first === '{' || first === '[';
}
