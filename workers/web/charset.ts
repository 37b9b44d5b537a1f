import iconv from 'iconv-lite';

/**
 * Decodes a body: a BOM wins, then the `charset` of the Content-Type header, then
 * `<meta charset>` / `<meta http-equiv="Content-Type">` in the first 2 KB of an HTML body, then
 * UTF-8 (WHATWG Encoding, "decode": the BOM beats the transport's label, as in browsers; a
 * UTF-16 page served as `charset=utf-8` came out as mojibake). An encoding iconv-lite does not
 * know falls back to UTF-8 rather than failing. The BOM is not part of the text.
 */
export function decodeBody(body: Buffer, contentType: string | undefined): { text: string; charset: string } {
  const charset = normalise(bomCharset(body) ?? charsetOf(contentType) ?? (isHtml(contentType) ? metaCharset(body) : undefined) ?? 'utf-8');
  const known = iconv.encodingExists(charset) ? charset : 'utf-8';
  return { text: iconv.decode(body, known), charset: known };
}

export function charsetOf(contentType: string | undefined): string | undefined {
  return /charset\s*=\s*"?([\w.:-]+)"?/i.exec(contentType ?? '')?.[1];
}

function bomCharset(body: Buffer): string | undefined {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  return undefined;
}

function metaCharset(body: Buffer): string | undefined {
  const head = body.subarray(0, 2048).toString('latin1');
  return /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
}

function isHtml(contentType: string | undefined): boolean {
  return !contentType || /html|xml/i.test(contentType);
}

function normalise(charset: string): string {
  const lower = charset.toLowerCase();
  // What browsers do (WHATWG Encoding): latin1 labels mean windows-1252.
  return lower === 'iso-8859-1' || lower === 'latin1' || lower === 'us-ascii' ? 'windows-1252' : lower;
}
