/* eslint-disable @typescript-eslint/no-require-imports */
import { isUtf8 } from 'node:buffer';
import type IconvLite from 'iconv-lite';

/**
 * Text decoding shared by the api worker (workers/openapi/results.ts) and the web fetcher
 * (workers/web/charset.ts). Why not TextDecoder: Node 20's decodes `windows-1252` (and so
 * `iso-8859-1`, its WHATWG alias) as Latin-1, so `“quoted” €` came out as invisible C1 control
 * characters (U+0093, U+0094, U+0080). iconv-lite decodes them right; it is loaded on first use
 * (~18 ms), since most bodies are UTF-8 and never need it.
 */
let iconvModule: typeof IconvLite | undefined;
function iconv(): typeof IconvLite {
  return (iconvModule ??= require('iconv-lite') as typeof IconvLite);
}

/** The encoding a byte order mark at the start of `body` names (WHATWG "BOM sniff"); undefined without one. */
export function bomCharset(body: Uint8Array): 'utf-8' | 'utf-16le' | 'utf-16be' | undefined {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  return undefined;
}

/** The `charset` parameter of a media type (`text/plain; charset="ISO-8859-1"` → `ISO-8859-1`). */
export function charsetOf(contentType: string | undefined): string | undefined {
  return /charset\s*=\s*"?([\w.:-]+)"?/i.exec(contentType ?? '')?.[1];
}

/** Whether a label names UTF-8 (or ASCII, a subset of it). */
export function isUtf8Label(charset: string): boolean {
  return /^(utf-?8|(us-)?ascii)$/i.test(charset);
}

/**
 * `body` as text in `charset`, a BOM not part of it; undefined for a label iconv-lite does not
 * know. Latin-1 and ASCII labels mean windows-1252, as in browsers (WHATWG Encoding): servers
 * label windows-1252 text `iso-8859-1`, and the two differ only where Latin-1 has control characters.
 */
export function decodeIn(body: Buffer, charset: string): string | undefined {
  const lower = charset.toLowerCase();
  const name = /^(iso-8859-1|iso_8859-1|latin1|l1|(us-)?ascii)$/.test(lower) ? 'windows-1252' : lower;
  if (name === 'utf-8' || name === 'utf8') return body.toString('utf8').replace(/^\uFEFF/, '');
  if (!iconv().encodingExists(name)) return undefined;
  return iconv().decode(body, name);
}

/**
 * Whether `body` is UTF-8; `cut` (the body was cut at a size cap): an unfinished character at its
 * end does not count against it.
 */
export function isUtf8Body(body: Buffer, cut = false): boolean {
  if (isUtf8(body)) return true;
  if (!cut) return false;
  for (let drop = 1; drop <= 3 && drop < body.length; drop++) if (isUtf8(body.subarray(0, body.length - drop))) return true;
  return false;
}

/**
 * A response header's value as its sender meant it. undici reads header bytes as Latin-1, so a
 * value sent as UTF-8 (a `Location: /café` from many frameworks, a name in a custom header) came
 * as `/cafÃ©`, and a redirect was followed to `/caf%C3%83%C2%A9`. Bytes that form UTF-8 are read
 * as UTF-8, as browsers read `Location`; others stay Latin-1.
 */
export function headerText(value: string): string {
  let high = false;
  for (let i = 0; i < value.length && !high; i++) high = value.charCodeAt(i) > 0x7f;
  if (!high) return value;
  const bytes = Buffer.from(value, 'latin1');
  return isUtf8(bytes) ? bytes.toString('utf8') : value;
}
