import { isUtf8 } from 'node:buffer';
import { bomCharset, charsetOf, decodeIn } from '../common/charset';

/**
 * Decodes a body: a BOM wins, then the `charset` of the Content-Type header, then
 * `<meta charset>` / `<meta http-equiv="Content-Type">` in the first 2 KB of an HTML body (or an
 * XML declaration's `encoding`), then UTF-8 (WHATWG Encoding, "decode": the BOM beats the
 * transport's label, as in browsers; a UTF-16 page served as `charset=utf-8` came out as
 * mojibake). A label no decoder knows is passed over, as browsers do. A body that names no
 * encoding it can be read in and is not UTF-8 is read as windows-1252, browsers' fallback for
 * Western pages: it came with U+FFFD for every accented letter. The BOM is not part of the text.
 */
export function decodeBody(body: Buffer, contentType: string | undefined): { text: string; charset: string } {
  for (const label of [bomCharset(body), charsetOf(contentType), isHtml(contentType) ? metaCharset(body) : undefined]) {
    if (label === undefined) continue;
    const text = decodeIn(body, label);
    if (text !== undefined) return { text, charset: normalise(label) };
  }
  if (isUtf8(body)) return { text: body.toString('utf8'), charset: 'utf-8' };
  return { text: decodeIn(body, 'windows-1252')!, charset: 'windows-1252' };
}

function metaCharset(body: Buffer): string | undefined {
  const head = body.subarray(0, 2048).toString('latin1');
  return /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1] ?? /^\s*<\?xml[^>]+encoding\s*=\s*["']([\w.:-]+)/.exec(head)?.[1];
}

function isHtml(contentType: string | undefined): boolean {
  return !contentType || /html|xml/i.test(contentType);
}

function normalise(charset: string): string {
  const lower = charset.toLowerCase();
  // What browsers do (WHATWG Encoding): latin1 labels mean windows-1252.
  return lower === 'iso-8859-1' || lower === 'latin1' || lower === 'us-ascii' ? 'windows-1252' : lower;
}
