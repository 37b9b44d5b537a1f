import { bomCharset, charsetOf, decodeIn } from '../common/charset';
import type { ApiResponse } from './api-client';

/**
 * Operator credentials taken out of what a tool result shows. The upstream gets them, and some
 * upstreams say them back: an echo endpoint (`/anything`, `/headers`), a framework's debug page
 * listing the request headers on a 401 or 500, a `Link` or `Location` repeating a key in its query.
 * A model that reads them can be talked (prompt injection) into sending them elsewhere, so each
 * one is replaced by `[redacted: <Name>]`. The model's own arguments are never looked for: they
 * are its already.
 *
 * Decisions:
 * - Which values: every configured header and base URL query parameter (`?api_key=`), and every
 *   header an IAuthProvider returned for the call, unless its name says it carries no credential
 *   (PLAIN_NAME: `Accept`, `Content-*`, `User-Agent`, `*-Version`, `*-Id`, tracing); a name with
 *   a credential's word in it always counts (`X-Session-Id`). Why not only names like
 *   `authorization|token|key`: real ones include `appid` (OpenWeather) and `code` (Azure
 *   Functions). A name we do not know costs at most a marker where its value is echoed; a
 *   credential we miss costs the credential.
 * - Which forms: the value; a scheme's credentials alone (`Bearer xyz` → `xyz`, since echoes and
 *   error messages often quote the bare token); Basic's decoded `user:password` and the password
 *   alone (the user name is an identifier the API's own data shows); each cookie's value; and
 *   each of them as an echo writes it: percent-encoded (`%20` or `+`), JSON-escaped (also `\/`,
 *   PHP's default) and HTML-escaped.
 * - Forms under MIN_SECRET_CHARS are not looked for. Why: `1`, `json` or `v2` occur in any
 *   text, so replacing them would mangle the answer, and where the markers stood would give
 *   the value away anyway; a real key or token is far longer.
 * - Not covered: an upstream that encodes a credential on purpose (base64 of a token, `\u`
 *   escapes of ASCII): it holds the credential already and could leak it by itself.
 */

/** Characters of the shortest form looked for. */
export const MIN_SECRET_CHARS = 8;

/** A configured credential as put on one request. */
export interface SentCredential {
  /** The header's name (any case), or the query parameter's, decoded. */
  name: string;
  value: string;
  in: 'header' | 'query';
}

/**
 * A base URL query's pairs as credentials: each value decoded and, when it differs, as written
 * (sent so, and echoed so: `?key=a%2Bb` as written, `a+b` by a server that decodes it).
 */
export function queryCredentials(search: string): SentCredential[] {
  const out: SentCredential[] = [];
  for (const pair of search.replace(/^\?/, '').split('&')) {
    const at = pair.indexOf('=');
    if (at < 0) continue;
    const written = pair.slice(at + 1);
    const name = decodedQueryPart(pair.slice(0, at));
    const value = decodedQueryPart(written);
    out.push({ name, value, in: 'query' });
    if (written !== value) out.push({ name, value: written, in: 'query' });
  }
  return out;
}

/** A query string's part decoded (`+` is a space); as it is when its encoding is broken (`%zz`). */
export function decodedQueryPart(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    return part;
  }
}

/** Words of a credential's name: they win over PLAIN_NAME (`X-Session-Id`, `Idempotency-Key`). */
const CREDENTIAL_NAME = /auth|token|secret|key|cookie|session|passw|pwd|credential|signature|sig(?![a-z])|csrf|xsrf|jwt|bearer|private/i;
/** Standard request headers that carry no credential, versions, request and trace ids. */
const PLAIN_NAME = /^(?:accept(?:-[\w-]+)?|content-[\w-]+|user-agent|prefer|cache-control|pragma|if-[\w-]+|origin|referer|dnt|range|expect|from|via|forwarded|x-forwarded-[\w-]+|x-requested-with|traceparent|tracestate|baggage|[\w-]*version|[\w-]*[-_]id)$/i;

/** Whether a configured header or query parameter of this name is treated as a credential. */
export function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAME.test(name) || !PLAIN_NAME.test(name);
}

/** One text to look for: as a string, as UTF-8 bytes, and what stands for it. */
export interface SecretForm {
  text: string;
  bytes: Buffer;
  marker: string;
  /** The credential's name as markers and logs show it. */
  name: string;
}

/**
 * One credential as looked for: its forms, longest first, and anchors: for each part (parts()),
 * its longest run of characters none of encodings() changes, so that every form holds one of
 * them. A text without any anchor holds no form: `Bearer xyz` costs one `includes` (of `xyz`),
 * not one per form.
 */
interface Secret {
  forms: readonly SecretForm[];
  anchors: readonly string[];
  anchorBytes: readonly Buffer[];
}

/** `<scheme> <credentials>` of an Authorization value. */
const SCHEME = /^([A-Za-z][\w.+-]*) +(\S.*)$/;
/** Schemes that mark a value as credentials in any header (`X-Auth: Bearer …`). */
const KNOWN_SCHEME = /^(?:bearer|basic|token|apikey|api-key|key|oauth|ssws|bot)$/i;
/** Runs of what percent-, JSON- and HTML-escaping all leave as it is. */
const UNCHANGED_RUN = /[\w.~-]+/g;
const NO_SECRET: Secret = { forms: [], anchors: [], anchorBytes: [] };
/** Credentials already worked out: the same few on every call; the client's configured ones are the same objects. */
const byObject = new WeakMap<SentCredential, Secret>();
const secrets = new Map<string, Secret>();
const MAX_CACHED = 256;

/** The forms of one credential to look for, longest first; none when its name is plain. */
export function secretForms(credential: SentCredential): readonly SecretForm[] {
  return secretOf(credential).forms;
}

function secretOf(credential: SentCredential): Secret {
  const known = byObject.get(credential);
  if (known !== undefined) return known;
  const key = `${credential.in}\n${credential.name}\n${credential.value}`;
  let secret = secrets.get(key);
  if (secret === undefined) {
    secret = isCredentialName(credential.name) ? build(credential) : NO_SECRET;
    if (secrets.size >= MAX_CACHED) secrets.clear();
    secrets.set(key, secret);
    // Only here: a provider's credentials are new objects on every call.
    byObject.set(credential, secret);
  }
  return secret;
}

function build(credential: SentCredential): Secret {
  const name = credential.in === 'header' ? headerName(credential.name) : `query ${credential.name}`;
  const marker = `[redacted: ${name}]`;
  const texts = new Set<string>();
  const runs = new Set<string>();
  for (const part of parts(credential)) {
    const before = texts.size;
    for (const text of encodings(part)) if (text.length >= MIN_SECRET_CHARS) texts.add(text);
    if (texts.size > before) runs.add((part.match(UNCHANGED_RUN) ?? ['']).reduce((a, b) => (b.length > a.length ? b : a)));
  }
  // A run holding another is found wherever that one is: the other suffices.
  const anchors = [...runs].filter((run) => ![...runs].some((other) => other !== run && run.includes(other)));
  const forms = [...texts].sort((a, b) => b.length - a.length).map((text) => ({ text, bytes: Buffer.from(text), marker, name }));
  return forms.length === 0 ? NO_SECRET : { forms, anchors, anchorBytes: anchors.map((anchor) => Buffer.from(anchor)) };
}

/** The value and the parts of it that an echo may quote alone. */
function parts({ name, value, in: where }: SentCredential): string[] {
  const out = [value];
  if (where === 'query') return out;
  const lower = name.toLowerCase();
  const scheme = SCHEME.exec(value);
  if (scheme && (lower.endsWith('authorization') || KNOWN_SCHEME.test(scheme[1]))) {
    out.push(scheme[2]);
    if (/^basic$/i.test(scheme[1])) out.push(...basicParts(scheme[2].trim()));
  }
  if (lower === 'cookie') {
    for (const pair of value.split(';')) {
      const at = pair.indexOf('=');
      if (at > 0) out.push(pair.slice(at + 1).trim());
    }
  }
  return out;
}

/** `user:password` and `password` of Basic credentials; none unless they decode to text. */
function basicParts(token: string): string[] {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(token)) return [];
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0 || /[\u0000-\u001f\u007f\ufffd]/.test(decoded)) return [];
  return [decoded, decoded.slice(colon + 1)];
}

/** A text as echoes write it: as sent, percent-encoded, JSON-escaped, HTML-escaped. */
function encodings(text: string): string[] {
  const json = JSON.stringify(text).slice(1, -1);
  const html = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
  const out = [text, json, json.replace(/\//g, '\\/'), html];
  try {
    const url = encodeURIComponent(text);
    out.push(url, url.replace(/%20/g, '+'));
  } catch {
    // A lone surrogate (an odd provider's header) has no percent-encoding.
  }
  return out;
}

/** `x-api-key` → `X-Api-Key`: configured names are kept lower case. */
function headerName(name: string): string {
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());
}

/**
 * The credentials of one call, to take out of what its result shows. Each method returns its
 * input itself when no credential occurs in it; that check is an `includes` of each anchor
 * (Secret), ~0.4 µs for 2 KB, and only a hit builds anything.
 */
export class Redaction {
  readonly #secrets: readonly Secret[];
  readonly #names = new Set<string>();

  /** `sent`: as ApiClient.send collects them; a credential sent twice is looked for twice, harmlessly. */
  constructor(sent: readonly SentCredential[]) {
    this.#secrets = sent.map(secretOf).filter((secret) => secret !== NO_SECRET);
  }

  /** The names of the credentials replaced so far (`Authorization`, `query api_key`). */
  get names(): string[] {
    return [...this.#names];
  }

  /** `text` with each credential replaced by its marker. */
  text(text: string): string {
    if (!this.#mayHold(text)) return text;
    const found: SecretForm[] = [];
    for (const secret of this.#secrets) for (const form of secret.forms) if (text.includes(form.text)) found.push(form);
    return found.length === 0 ? text : this.#replace(text, found, 'text');
  }

  /** Whether `text` holds an anchor: false means it holds no credential. */
  #mayHold(text: string): boolean {
    for (const secret of this.#secrets) for (const anchor of secret.anchors) if (text.includes(anchor)) return true;
    return false;
  }

  /**
   * `response` with credentials replaced in its headers (names and values), URL and body, before
   * anything is cut from it (an excerpt cut inside a token would show half of it). `bodyShown`
   * false (an image, a binary summary): the body is not read. A body cut at maxResponseBytes
   * that ends inside a credential loses that start too. The body is replaced byte for byte in
   * an ASCII-compatible charset, so its `charset` still applies.
   */
  response(given: ApiResponse, bodyShown: boolean): ApiResponse {
    if (this.#secrets.length === 0) return given;
    const response = bodyShown ? asUtf8IfUtf16(given) : given;
    const headers = this.#headers(response.headers);
    const url = this.text(response.url);
    const body = bodyShown ? this.#body(response) : response.body;
    if (headers === response.headers && url === response.url && body === response.body) return response;
    return { ...response, headers, url, body };
  }

  #headers(headers: Record<string, string>): Record<string, string> {
    let held = false;
    for (const name in headers) if ((held = this.#mayHold(headers[name]) || this.#mayHold(name))) break;
    if (!held) return headers;
    const out: Record<string, string> = Object.create(null);
    for (const [name, value] of Object.entries(headers)) out[this.text(name)] = this.text(value);
    return out;
  }

  #body(response: ApiResponse): Buffer {
    const { body, truncated } = response;
    const found: SecretForm[] = [];
    for (const secret of this.#secrets) {
      if (!secret.anchorBytes.some((anchor) => body.indexOf(anchor) !== -1)) continue;
      for (const form of secret.forms) if (body.indexOf(form.bytes) !== -1) found.push(form);
    }
    if (found.length === 0) return truncated ? this.#cutTailOf(body) : body;
    // Latin-1 maps each byte to one character and back: bytes of other charsets survive.
    // Only a credential of digits found can stand as a bare JSON number: the type is read then.
    const json = found.some((form) => NUMBER_TOKEN.test(form.text)) && isJsonBody(response);
    let text = this.#replace(body.toString('latin1'), found, 'bytes', json);
    if (truncated) text = this.#cutTail(text);
    return Buffer.from(text, 'latin1');
  }

  /** #cutTail on a body that holds no whole form: only its last bytes are read (a cut body may be megabytes). */
  #cutTailOf(body: Buffer): Buffer {
    const longest = Math.max(...this.#secrets.flatMap((secret) => secret.forms.map((form) => form.bytes.length)));
    const start = Math.max(0, body.length - longest);
    const tail = body.subarray(start).toString('latin1');
    const cut = this.#cutTail(tail);
    return cut === tail ? body : Buffer.concat([body.subarray(0, start), Buffer.from(cut, 'latin1')]);
  }

  /** `text` whose end is the start of a form (MIN_SECRET_CHARS or more of it) with the longest such start replaced. */
  #cutTail(text: string): string {
    let cut = 0;
    let by: SecretForm | undefined;
    for (const form of this.#secrets.flatMap((secret) => secret.forms)) {
      const bytes = form.bytes.toString('latin1');
      for (let size = bytes.length - 1; size >= Math.max(MIN_SECRET_CHARS, cut + 1); size--) {
        if (text.endsWith(bytes.slice(0, size))) {
          [cut, by] = [size, form];
          break;
        }
      }
    }
    if (by === undefined) return text;
    this.#names.add(by.name);
    return text.slice(0, text.length - cut) + latin1(by.marker);
  }

  /**
   * One pass, longest form first, so that a marker is never searched again. `json`: the text is
   * JSON and a form is all digits, which it may hold as a bare number (`"account": 12345678`):
   * see replaceInJson.
   */
  #replace(text: string, found: readonly SecretForm[], as: 'text' | 'bytes', json = false): string {
    const markers = new Map<string, string>();
    for (const form of found) {
      this.#names.add(form.name);
      const key = as === 'text' ? form.text : form.bytes.toString('latin1');
      if (!markers.has(key)) markers.set(key, as === 'text' ? form.marker : latin1(form.marker));
    }
    const pattern = new RegExp([...markers.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|'), 'g');
    if (json) return replaceInJson(text, pattern, markers);
    return text.replace(pattern, (match) => markers.get(match) ?? match);
  }
}

/** A form that JSON may hold as (part of) a bare number. */
const NUMBER_TOKEN = /^[-+.\deE]+$/;
const NUMBER_CHAR = /[-+.\deE]/;

/** Whether a response body is JSON by its type, or, untyped, by its first character. */
function isJsonBody(response: ApiResponse): boolean {
  const type = response.headers['content-type'] ?? '';
  if (type !== '') return /json/i.test(type);
  const first = response.body.subarray(0, 64).toString('latin1').trimStart()[0];
  return first === '{' || first === '[';
}

/**
 * `text.replace(pattern, …)` that keeps JSON valid: a match inside a string becomes its marker, as
 * anywhere; one outside any string is part of a bare number, and the whole number becomes the
 * marker as a JSON string (`12345678` → `"[redacted: X-Account]"`), since a marker written into a
 * number would make the body no JSON at all, and the model would lose its structure. Whether a
 * match is inside a string is read by one scan of the text up to it (quotes and escapes).
 */
function replaceInJson(text: string, pattern: RegExp, markers: Map<string, string>): string {
  let out = '';
  let last = 0;
  let scanned = 0;
  let inString = false;
  const scanTo = (end: number) => {
    for (; scanned < end; scanned++) {
      const code = text.charCodeAt(scanned);
      if (!inString) inString = code === 0x22;
      else if (code === 0x5c) scanned++;
      else if (code === 0x22) inString = false;
    }
  };
  for (const match of text.matchAll(pattern)) {
    const at = match.index;
    if (at < last) continue;
    scanTo(at);
    const marker = markers.get(match[0]) ?? match[0];
    if (inString || !NUMBER_TOKEN.test(match[0])) {
      out += text.slice(last, at) + marker;
      last = at + match[0].length;
      scanTo(last);
      continue;
    }
    let start = at;
    while (start > last && NUMBER_CHAR.test(text[start - 1])) start--;
    let end = at + match[0].length;
    while (end < text.length && NUMBER_CHAR.test(text[end])) end++;
    out += text.slice(last, start) + JSON.stringify(marker);
    last = end;
    scanned = end;
  }
  return out + text.slice(last);
}

/** A marker's UTF-8 bytes as Latin-1 characters (a query parameter's name may be any text). */
function latin1(text: string): string {
  return Buffer.from(text).toString('latin1');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A UTF-16 body (by its byte order mark or its charset) as UTF-8, its type saying so: the forms
 * are looked for as UTF-8 bytes, and a UTF-16 echo of a key has none of them in common.
 */
function asUtf8IfUtf16(response: ApiResponse): ApiResponse {
  const type = response.headers['content-type'];
  const charset = bomCharset(response.body) ?? charsetOf(type);
  if (charset === undefined || !/^utf-?16/i.test(charset)) return response;
  const text = decodeIn(response.body, charset);
  if (text === undefined) return response;
  // Without a charset (the BOM named it), UTF-8 is what a body is read as.
  const headers = type === undefined ? response.headers : { ...response.headers, 'content-type': type.replace(/charset\s*=\s*"?[\w.:-]+"?/i, 'charset=utf-8') };
  return { ...response, headers, body: Buffer.from(text.replace(/^\uFEFF/, ''), 'utf8') };
}
