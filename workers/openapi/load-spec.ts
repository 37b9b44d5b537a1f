import { stat } from 'node:fs/promises';
import path from 'node:path';
import { isIP } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Dispatcher } from 'undici';
import { undici, yaml } from './lazy';
import { McpvisorError, type ErrorCode } from '../../protocol/errors';
import { extraCaConnect } from '../../protocol/extra-ca-certs';
import { networkReason } from './network-reason';
import { authAdvice, requestDocument, type SpecAuth } from './spec-auth';
import { MAX_SPEC_BYTES } from './spec-limits';
import { externalRefs, shownUri, type Json, type JsonObject, type RefContext, type UnloadedDocument } from './refs';
import { describeOpenError } from '../../protocol/access-denied';
import { FileRefusedError, readRegularFile } from '../../protocol/regular-file';
import { BLOCKED_ADDRESS_CODE, BlockedAddressError, guardedLookup, isBlockedAddress } from '../common/address-guard';

export type SpecInputMethod = 'url' | 'file' | 'stdin' | 'inline';

export interface LoadSpecOptions {
  /** Path, URL or inline content. */
  openApiSpec?: string;
  /** What inline content is called in messages; default `inline content`. */
  specSource?: string;
  /** Default `url`; a `url` value that is not http(s) is read as a file path. */
  specInputMethod?: SpecInputMethod;
  /** Budget of each download, ms; default 30,000. */
  timeoutMs?: number;
  /** Biggest description read, bytes; default 200 MB. */
  maxBytes?: number;
  /** Most bytes of external documents one description may reference, all together; default maxBytes. */
  maxExternalBytes?: number;
  /** Where `stdin` reads from; default process.stdin. */
  stdin?: NodeJS.ReadableStream;
  /** The API's credentials, sent to documents on its base URL's origin only (spec-auth.ts). */
  auth?: SpecAuth;
  signal?: AbortSignal;
}

export interface LoadedSpec extends RefContext {
  /** `3.0.3`, `3.1.0` or `2.0`. */
  version: string;
  isSwagger2: boolean;
  /** Where the description came from, for messages. */
  source: string;
}

/**
 * Reads, parses and checks a description, then fetches the external documents its `$ref`s name
 * (files and URLs relative to it, recursively, at most 100 of them and maxExternalBytes in all:
 * BAD_INPUT past either). One that cannot be read is no error: it is in `unloaded`, with why (see
 * fetchExternal). Errors of the description itself, each naming the source: NOT_FOUND `OpenAPI spec file not
 * found: <path>`; NETWORK_ERROR `failed to load the OpenAPI spec from <url>: <reason>`; BAD_INPUT `invalid OpenAPI specification format in <source>: …` (not JSON
 * or YAML, or not an object), BAD_INPUT `invalid OpenAPI specification in <source>: missing
 * required field 'paths'` (and the same for a missing `openapi`/`swagger` version).
 * Decision (spec: "not shown"): without `openApiSpec` (and not stdin) this throws BAD_INPUT listing
 * the ways to give one, as the reference does.
 */
export async function loadSpec(options: LoadSpecOptions): Promise<LoadedSpec> {
  return parseSpecText(await readSpecText(options), options);
}

/** Where a description is read from, decided without reading it. */
export type SpecLocation =
  | { kind: 'file'; file: string; shown: string }
  | { kind: 'url'; url: string }
  | { kind: 'inline'; text: string }
  | { kind: 'stdin' };

/** A description's text before parsing, with what messages and relative `$ref`s need. */
export interface SpecText {
  text: string;
  source: string;
  rootUri?: string;
}

/** The location `options` names; throws BAD_INPUT when none is given (see loadSpec). */
export function specLocation(options: LoadSpecOptions): SpecLocation {
  const method = options.specInputMethod ?? 'url';
  const spec = options.openApiSpec;
  if (method === 'stdin') return { kind: 'stdin' };
  if (spec === undefined || spec.trim() === '') {
    throw new McpvisorError(
      'BAD_INPUT',
      'no OpenAPI description given: use --openapi-spec <path or URL> (or OPENAPI_SPEC_PATH), --spec-input-method stdin, or openApiSpec with specInputMethod inline in the configuration',
    );
  }
  if (method === 'inline') return { kind: 'inline', text: spec };
  if (method === 'url' && /^https?:\/\//i.test(spec)) return { kind: 'url', url: spec };
  return { kind: 'file', file: path.resolve(spec), shown: spec };
}

/** Reads the text of a description (the first half of loadSpec, with its errors). */
export async function readSpecText(options: LoadSpecOptions): Promise<SpecText> {
  const where = specLocation(options);
  switch (where.kind) {
    case 'inline':
      return { text: where.text, source: options.specSource ?? 'inline content' };
    case 'stdin':
      return { text: await readStream(options.stdin ?? process.stdin, options.maxBytes ?? MAX_SPEC_BYTES), source: 'standard input' };
    case 'url':
      return { text: await readUrl(where.url, options), source: where.url, rootUri: where.url };
    case 'file':
      return { text: await readSpecFile(where.file, where.shown, options.maxBytes ?? MAX_SPEC_BYTES), source: where.shown, rootUri: pathToFileURL(where.file).href };
  }
}

/** Parses and checks text read by readSpecText, then fetches its external documents (the second half of loadSpec). */
export async function parseSpecText(read: SpecText, options: LoadSpecOptions = {}): Promise<LoadedSpec> {
  const { text, source, rootUri } = read;
  const root = parseDocument(text, source);
  const version = checkDocument(root, source);
  const external = new Map<string, Json>();
  const unloaded = new Map<string, UnloadedDocument>();
  // Walking a 13 MB document for external refs costs more than this scan of its text.
  if (/\$ref["']?\s*:\s*["']?(?!#)[^\s"']/.test(text)) {
    const dispatcher = rootUri !== undefined && /^https?:/i.test(rootUri) ? guardedFor(rootUri) : undefined;
    try {
      await fetchExternal(root, rootUri, { external, unloaded }, options, source, dispatcher);
    } finally {
      await dispatcher?.close();
    }
  }
  return { root, rootUri, external, ...(unloaded.size > 0 ? { unloaded } : {}), version, isSwagger2: version.startsWith('2'), source };
}

/** JSON when it looks like JSON (fast path), else YAML; BAD_INPUT naming `source` otherwise. */
export function parseDocument(text: string, source: string): JsonObject {
  let data: unknown;
  // trimStart removes a UTF-8 byte order mark too, which JSON.parse refuses: parse what was tested.
  const trimmed = text.trimStart();
  try {
    data = trimmed.startsWith('{') ? JSON.parse(trimmed) : yaml().parse(text, { maxAliasCount: 10_000 });
  } catch (error) {
    throw new McpvisorError('BAD_INPUT', `invalid OpenAPI specification format in ${source}: not valid JSON or YAML (${firstLine((error as Error).message)})`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new McpvisorError('BAD_INPUT', `invalid OpenAPI specification format in ${source}: expected an object at the top level`);
  }
  return data as JsonObject;
}

/** Returns the version string; throws BAD_INPUT naming `source` for a missing version or `paths`. */
export function checkDocument(doc: JsonObject, source: string): string {
  const version = typeof doc.openapi === 'string' ? doc.openapi : typeof doc.swagger === 'string' ? doc.swagger : undefined;
  if (version === undefined || !/^(3\.[01]|2\.0)/.test(version)) {
    throw new McpvisorError('BAD_INPUT', `invalid OpenAPI specification in ${source}: missing or unsupported 'openapi' / 'swagger' version field (supported: 3.0, 3.1, Swagger 2.0)`);
  }
  // OpenAPI 3.1 makes `paths` optional beside `webhooks` or `components`: such a document has no
  // operation to call (0 tools), but it is valid.
  if (doc.paths === undefined && version.startsWith('3.1') && (doc.webhooks !== undefined || doc.components !== undefined)) doc.paths = {};
  if (doc.paths === null || typeof doc.paths !== 'object' || Array.isArray(doc.paths)) {
    throw new McpvisorError('BAD_INPUT', `invalid OpenAPI specification in ${source}: missing required field 'paths'`);
  }
  return version;
}

/**
 * A description file, at most `maxBytes`: a FIFO waited for a writer until the worker's start
 * timeout, and /dev/zero was read until V8's string limit ("Invalid string length", 600 MB).
 */
async function readSpecFile(file: string, shown: string, maxBytes: number): Promise<string> {
  try {
    return await readRegularFile(file, maxBytes);
  } catch (error) {
    if (error instanceof FileRefusedError) throw new McpvisorError('BAD_INPUT', `failed to load the OpenAPI spec from ${shown}: it ${error.message}`);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new McpvisorError('NOT_FOUND', `OpenAPI spec file not found: ${shown}`);
    // Found but refused to this user: not NOT_FOUND, which sent people looking for a missing file.
    if (code === 'EACCES' || code === 'EPERM') throw new McpvisorError('BAD_INPUT', `failed to load the OpenAPI spec from ${shown}: ${describeOpenError(file, error)}`);
    throw new McpvisorError('NOT_FOUND', `failed to load the OpenAPI spec from ${shown}: ${code ?? (error as Error).message}`);
  }
}

/**
 * The text at `url`, at most `maxBytes` (default options.maxBytes); `tooLarge` is thrown past it,
 * if given. `dispatcher` (default redirecting()) refusing an address is BLOCKED. NETWORK_ERROR's
 * data: `reason` alone, and `answered`, false when no response came (the host may be down).
 */
async function readUrl(url: string, options: LoadSpecOptions, maxBytes = options.maxBytes ?? MAX_SPEC_BYTES, tooLarge?: () => McpvisorError, dispatcher = redirecting()): Promise<string> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let answered = false;
  try {
    const { response, credentialed } = await requestDocument(url, { signal, dispatcher, maxRedirects: MAX_REDIRECTS, auth: options.auth });
    answered = true;
    if (response.statusCode < 200 || response.statusCode >= 300) {
      await response.body.dump();
      // The redirect interceptor hands back the redirect it did not follow.
      const location = response.statusCode >= 300 && response.statusCode < 400 ? response.headers.location : undefined;
      const status = `HTTP ${response.statusCode}`;
      if (response.statusCode === 401 || response.statusCode === 403) throw new Error(`${status}: ${authAdvice(url, options.auth, credentialed)}`);
      throw new Error(location !== undefined ? `more than ${MAX_REDIRECTS} redirects (the last, HTTP ${response.statusCode}, to ${String(location).slice(0, 200)})` : status);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        response.body.destroy();
        throw tooLarge?.() ?? new Error(`larger than ${maxBytes} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  } catch (error) {
    if (error instanceof McpvisorError) throw error;
    const refused = [error, (error as { cause?: unknown })?.cause].find((e): e is BlockedAddressError => (e as { code?: string })?.code === BLOCKED_ADDRESS_CODE);
    if (refused) {
      const where = refused.host === refused.address ? refused.host : `${refused.host} (${refused.address})`;
      throw new McpvisorError('BLOCKED', `${url}: ${where} is a private, loopback or link-local address, which a description from the network may not make this machine fetch from (but from its own host); load the description from a file to allow it`);
    }
    const reason = timeout.aborted ? `timed out after ${timeoutMs} ms` : networkReason(error);
    throw new McpvisorError('NETWORK_ERROR', `failed to load the OpenAPI spec from ${url}: ${reason}`, { data: { reason, answered } });
  }
}

const MAX_REDIRECTS = 5;
let followRedirects: Dispatcher | undefined;
/**
 * The global dispatcher (an agent of ours in a worker given NODE_EXTRA_CA_CERTS, see
 * extra-ca-certs.ts), following up to MAX_REDIRECTS redirects (descriptions often sit behind one).
 */
function redirecting(): Dispatcher {
  if (followRedirects === undefined) {
    const connect = extraCaConnect(undici().buildConnector);
    const base = connect ? new (undici().Agent)({ connect }) : undici().getGlobalDispatcher();
    followRedirects = base.compose(undici().interceptors.redirect({ maxRedirections: MAX_REDIRECTS }));
  }
  return followRedirects;
}

/**
 * A dispatcher for the external documents of a description read from `rootUri` on the network:
 * connections to a private, loopback or link-local address (judged after DNS, on every redirect)
 * are refused, but to the description's own host. Why: a third party's description could make
 * this machine fetch its cloud metadata (169.254.169.254) or an intranet service, and the answer
 * would be written into the tools the model reads. Closed by the caller.
 */
function guardedFor(rootUri: string): Dispatcher {
  const own = new URL(rootUri);
  const ownPort = own.port === '' ? (own.protocol === 'https:' ? '443' : '80') : own.port;
  const bare = (host: string) => host.replace(/^\[|\]$/g, '');
  const open = extraCaConnect(undici().buildConnector) ?? undici().buildConnector({});
  const guarded = extraCaConnect((opts) => undici().buildConnector({ ...opts, lookup: guardedLookup as never })) ?? undici().buildConnector({ lookup: guardedLookup as never });
  const connect: typeof open = (opts, callback) => {
    const port = String(opts.port || (opts.protocol === 'https:' ? '443' : '80'));
    if (bare(opts.hostname) === bare(own.hostname) && port === ownPort && opts.protocol === own.protocol) return open(opts, callback);
    // net.connect does no lookup for an IP literal: judged here.
    if (isIP(bare(opts.hostname)) !== 0 && isBlockedAddress(opts.hostname)) return callback(new BlockedAddressError(opts.hostname, bare(opts.hostname)), null);
    return guarded(opts, callback);
  };
  return new (undici().Agent)({ connect }).compose(undici().interceptors.redirect({ maxRedirections: MAX_REDIRECTS }));
}

async function readStream(stream: NodeJS.ReadableStream, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size > maxBytes) throw new McpvisorError('BAD_INPUT', `the OpenAPI spec on standard input is larger than ${maxBytes} bytes`);
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new McpvisorError('BAD_INPUT', 'invalid OpenAPI specification format in standard input: it is empty');
  return text;
}

/**
 * Reads the documents `root` references into `external`; `dispatcher` (see guardedFor) for those
 * on the network, if given. One that cannot be read (not found, an HTTP error, no connection, not
 * JSON or YAML, larger than maxBytes, BLOCKED by the rules above) goes into `unloaded` with why,
 * and the documents only it references are never read: see UnloadedDocument (refs.ts). What the
 * description as a whole may cost stays an error: BAD_INPUT past 100 documents (tried, loaded or
 * not) or past maxExternalBytes together, as which documents made it in would hang on the order
 * they were read in. A cancelled load (options.signal) rejects as before.
 */
async function fetchExternal(root: JsonObject, rootUri: string | undefined, loaded: { external: Map<string, Json>; unloaded: Map<string, UnloadedDocument> }, options: LoadSpecOptions, source: string, dispatcher?: Dispatcher): Promise<void> {
  const { external, unloaded } = loaded;
  // Each document to read, with the one whose $ref named it.
  const pending = [...externalRefs(root, rootUri)].map((uri) => ({ uri, from: rootUri }));
  // One budget for all the documents: 8 of 180 MB each (each within maxBytes) peaked at 6.6 GB.
  const maxBytes = options.maxBytes ?? MAX_SPEC_BYTES;
  const maxTotal = options.maxExternalBytes ?? maxBytes;
  let total = 0;
  const overTotal = (uri: string) => new McpvisorError('BAD_INPUT', `the external documents of ${source} come to more than ${maxTotal} bytes together, past it at ${uri}`);
  // Hosts that did not answer: another document there fails at once, not after its own timeout.
  const silent = new Map<string, string>();
  while (pending.length > 0) {
    const { uri, from } = pending.shift()!;
    if (external.has(uri) || unloaded.has(uri) || uri === rootUri) continue;
    if (external.size + unloaded.size >= 100) throw new McpvisorError('BAD_INPUT', `${source} references more than 100 external documents`);
    const fail = (code: ErrorCode, reason: string) => void unloaded.set(uri, { code, reason, shown: shownUri(uri)!, from: from === rootUri ? source : shownUri(from)! });
    let text: string;
    // A document from the network may not read this machine's files (file:///etc/…), as in a browser.
    if (uri.startsWith('file:') && from !== undefined && /^https?:/i.test(from)) {
      fail('BLOCKED', `${shownUri(from)} may not reference a local file (${uri})`);
      continue;
    }
    const file = uri.startsWith('file:') ? localPath(uri) : undefined;
    if (typeof file === 'object') {
      fail('BAD_INPUT', `cannot follow the $ref to ${uri}: ${file.refused}`);
      continue;
    } else if (file !== undefined) {
      // Sized before reading: a file had no cap at all.
      const size = await fileSize(file);
      if (size > maxBytes) {
        fail('BAD_INPUT', `larger than ${maxBytes} bytes`);
        continue;
      }
      if (total + size > maxTotal) throw overTotal(file);
      try {
        text = await readRegularFile(file, maxBytes);
      } catch (error) {
        if (error instanceof FileRefusedError) {
          fail('BAD_INPUT', error.message);
          continue;
        }
        const errno = (error as NodeJS.ErrnoException).code;
        fail('NOT_FOUND', errno === 'ENOENT' ? 'file not found' : `cannot be read (${errno ?? (error as Error).message})`);
        continue;
      }
    } else if (/^https?:/.test(uri)) {
      const origin = new URL(uri).origin;
      if (silent.has(origin)) {
        fail('NETWORK_ERROR', `${origin} did not answer for another document (${silent.get(origin)})`);
        continue;
      }
      const left = maxTotal - total;
      let over: McpvisorError | undefined;
      try {
        text = await readUrl(uri, options, Math.min(maxBytes, left), left < maxBytes ? () => (over = overTotal(uri)) : undefined, dispatcher);
      } catch (error) {
        if (options.signal?.aborted || !(error instanceof McpvisorError) || error === over) throw error;
        if (error.code === 'BLOCKED') {
          fail('BLOCKED', `${source} may not reference ${error.message}`);
          continue;
        }
        const { reason, answered } = (error.data ?? {}) as { reason?: string; answered?: boolean };
        if (answered === false && reason !== undefined) silent.set(origin, reason);
        fail(error.code, reason ?? error.message);
        continue;
      }
    } else {
      fail('BAD_INPUT', `cannot follow the $ref to ${uri} (only files and http(s) URLs are read)`);
      continue;
    }
    total += Buffer.byteLength(text);
    if (total > maxTotal) throw overTotal(file ?? uri);
    let doc: unknown;
    try {
      // \s matches a byte order mark, which JSON.parse refuses: parsed without it.
      doc = /^\s*[[{]/.test(text) ? JSON.parse(text.trimStart()) : yaml().parse(text, { maxAliasCount: 10_000 });
    } catch (error) {
      fail('BAD_INPUT', `not valid JSON or YAML (${firstLine((error as Error).message)})`);
      continue;
    }
    external.set(uri, doc as Json);
    for (const next of externalRefs(doc as Json, uri)) if (!external.has(next) && !unloaded.has(next) && next !== rootUri) pending.push({ uri: next, from: uri });
  }
}

/** A file's size in bytes; 0 when it cannot be read (readSpecFile then says why). */
async function fileSize(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}

/**
 * The path of a `file:` URL: fileURLToPath, not the URL's pathname, which keeps `%20` for a space
 * in a folder's name. `{ refused }` with fileURLToPath's reason for one it refuses (another host,
 * an encoded `/`).
 */
function localPath(uri: string): string | { refused: string } {
  try {
    return fileURLToPath(uri);
  } catch (error) {
    return { refused: (error as Error).message };
  }
}

function firstLine(message: string): string {
  return message.split('\n')[0].slice(0, 200);
}
