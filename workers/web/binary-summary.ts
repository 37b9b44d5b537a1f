import type { BinaryBody } from './http-fetch';

/**
 * What `fetch_web_content` says of a body that is not text: its type, its size and what its
 * first bytes tell cheaply (an image's pixel size, a PDF's version, pages and title, an archive's
 * files). Decision (spec 001 is silent): a summary, as the content of a successful fetch, since
 * the resource was there; its bytes as text were mojibake, and the refusal it replaced named
 * neither size nor what the file held. A PDF's text is added by content.ts (pdf-text.ts).
 */
export interface BinarySummary {
  /** One paragraph of Markdown for the reader. */
  text: string;
  /** The facts of `text` alone, for a caller that says more (pdf-text). */
  facts: string;
  /** The type the bytes are (by their signature), else the one the site gave, else octet-stream. */
  contentType: string;
  /** A PDF's `/Title`, when it is a plain string. */
  title?: string;
  /** A PNG, JPEG, GIF or WebP read whole and at most MAX_IMAGE_BYTES: for an MCP image block. */
  image?: ImageData;
}

/** An image for an MCP `image` content block: base64 bytes, the type their signature says. */
export interface ImageData {
  data: string;
  mimeType: string;
}

/**
 * The largest image given as image content, in raw bytes (1 MiB, 1.4 MB as base64, as
 * workers/openapi gives API images). Decision: a multimodal client can look at an image itself;
 * a larger one would weigh on the model's context and the result caps, so it keeps the summary.
 */
export const MAX_IMAGE_BYTES = 1024 * 1024;

/** The types given as image content: those model APIs take. Never SVG: it is text and may carry scripts. */
const MODEL_IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

interface Sniffed {
  type: string;
  /** What the bytes are, for people: "PNG image, 640×480 pixels". */
  what: string;
  title?: string;
  /** An image whose header gave a pixel size (not 0×0): more than a signature on garbage. */
  sized?: boolean;
}

/** Summarises `binary` served as `contentType` (as the site labelled it). */
export function summariseBinary(binary: BinaryBody, contentType: string, bytes: number): BinarySummary {
  const labelled = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  const sniffed = binary.body.length > 0 ? sniff(binary.body) : undefined;
  const type = sniffed?.type ?? (labelled || 'application/octet-stream');
  const size = binary.cut
    ? binary.body.length === 0 ? `${formatBytes(bytes)}, over the body cap: not read` : `more than ${formatBytes(bytes)} (read up to the body cap)`
    : formatBytes(bytes);
  const label = labelled === '' ? 'no Content-Type' : labelled === type ? undefined : `served as ${labelled}`;
  const file = filenameOf(binary.disposition);
  const download = binary.disposition && /^\s*attachment/i.test(binary.disposition) ? `sent as a download${file ? ` (${file})` : ''}` : file ? `file name ${file}` : undefined;
  const facts = [sniffed?.what ?? 'binary data', size, label, download].filter(Boolean).join(', ');
  // The type is the signature's (sniffed), never the site's label: an image under text/html is still an image.
  const shown = sniffed !== undefined && MODEL_IMAGE_TYPES.has(sniffed.type);
  // A model API given a broken image may refuse the client's whole request: only one whose header reads, and whole.
  const unshown = !shown ? undefined : binary.cut ? 'it was not read whole' : !sniffed.sized ? 'its header gives no pixel size' : binary.body.length > MAX_IMAGE_BYTES ? `over the ${MAX_IMAGE_BYTES / 1024 / 1024} MiB (${MAX_IMAGE_BYTES.toLocaleString('en-US')}-byte) bound on image content` : undefined;
  const image = shown && unshown === undefined ? { data: binary.body.toString('base64'), mimeType: sniffed.type } : undefined;
  const why = image
    ? 'The image itself follows as image content'
    : unshown
      ? `Not shown as an image: ${unshown}; only this summary is returned`
      : type === 'application/pdf' ? 'Its text is not extracted: only this summary is returned' : 'Not text: only this summary is returned';
  return { text: `[${type}: ${facts}. ${why}.]`, facts: `${type}: ${facts}`, contentType: type, ...(sniffed?.title ? { title: sniffed.title } : {}), ...(image ? { image } : {}) };
}

/** "2,126 bytes", "1.4 MB" (decimal megabytes, one decimal). */
function formatBytes(bytes: number): string {
  if (bytes < 1_000_000) return `${bytes.toLocaleString('en-US')} bytes`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** The file name a Content-Disposition gives (`filename*=UTF-8''…` first), cut to 100 characters. */
function filenameOf(disposition: string | undefined): string | undefined {
  if (!disposition) return undefined;
  const extended = /filename\*\s*=\s*[\w-]+'[^']*'([^;\s]+)/i.exec(disposition)?.[1];
  const name = /filename\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(disposition);
  let value = name ? (name[1] ?? name[2]) : undefined;
  if (extended) {
    try {
      value = decodeURIComponent(extended);
    } catch {
      // Not percent-encoding: the plain filename, if any, stands.
    }
  }
  const clean = value?.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return clean ? clean.slice(0, 100) : undefined;
}

/** The format of `body` by its signature, with what can be read from its first bytes. */
function sniff(body: Buffer): Sniffed | undefined {
  const head = body.subarray(0, 16).toString('latin1');
  if (head.startsWith('\x89PNG\r\n\x1a\n') && body.length >= 24) return image('image/png', 'PNG', body.readUInt32BE(16), body.readUInt32BE(20));
  if (head.startsWith('GIF87a') || head.startsWith('GIF89a')) return image('image/gif', 'GIF', body.length >= 10 ? body.readUInt16LE(6) : undefined, body.length >= 10 ? body.readUInt16LE(8) : undefined);
  if (body[0] === 0xff && body[1] === 0xd8 && body[2] === 0xff) return image('image/jpeg', 'JPEG', ...jpegSize(body));
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WEBP') return image('image/webp', 'WebP', ...webpSize(body));
  if (head.startsWith('%PDF-')) return pdfFacts(body);
  if (head.startsWith('PK\x03\x04') || head.startsWith('PK\x05\x06')) return { type: 'application/zip', what: zipFacts(body) };
  if (body[0] === 0x1f && body[1] === 0x8b) return { type: 'application/gzip', what: 'gzip-compressed data' };
  if (head.startsWith('\x7fELF')) return { type: 'application/x-executable', what: 'an ELF executable' };
  return undefined;
}

function image(type: string, format: string, width?: number, height?: number): Sniffed {
  return width && height ? { type, what: `${format} image, ${width}×${height} pixels`, sized: true } : { type, what: `${format} image` };
}

/** A JPEG's size from its first SOFn frame header, reached marker by marker (bounded by the body). */
function jpegSize(body: Buffer): [number?, number?] {
  let at = 2;
  while (at + 9 < body.length && body[at] === 0xff) {
    const marker = body[at + 1];
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    // SOF0-SOF15, but DHT (C4), JPG (C8) and DAC (CC), which share the range.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return [body.readUInt16BE(at + 7), body.readUInt16BE(at + 5)];
    if (marker === 0xd9 || marker === 0xda) break;
    at += 2 + body.readUInt16BE(at + 2);
  }
  return [];
}

/** A WebP's size from its first chunk: VP8 (lossy), VP8L (lossless) or VP8X (extended). */
function webpSize(body: Buffer): [number?, number?] {
  const chunk = body.subarray(12, 16).toString('latin1');
  if (chunk === 'VP8 ' && body.length >= 30) return [body.readUInt16LE(26) & 0x3fff, body.readUInt16LE(28) & 0x3fff];
  if (chunk === 'VP8L' && body.length >= 25) {
    const bits = body.readUInt32LE(21);
    return [(bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1];
  }
  if (chunk === 'VP8X' && body.length >= 30) return [body.readUIntLE(24, 3) + 1, body.readUIntLE(27, 3) + 1];
  return [];
}

/**
 * A PDF's version, page count and title, where they are written plainly: the largest `/Count` of
 * a `/Type /Pages` node (the root counts every page) and an `/Info` `/Title (…)`. Both are often
 * inside compressed object streams; then they are left out rather than guessed.
 */
function pdfFacts(body: Buffer): Sniffed {
  const version = /^%PDF-(\d\.\d)/.exec(body.subarray(0, 16).toString('latin1'))?.[1];
  const text = body.toString('latin1');
  let pages = 0;
  // Each `/Type /Pages` node's dictionary, bounded on both sides (a `/Kids` array of a thousand
  // pages is ~7 KB), and PDF_MAX_NODES of them at most: a hostile file costs a linear scan.
  const nodes = /\/Type\s*\/Pages\b/g;
  for (let seen = 0, match = nodes.exec(text); match && seen < PDF_MAX_NODES; seen++, match = nodes.exec(text)) {
    const before = text.slice(Math.max(0, match.index - 4096), match.index);
    const after = text.slice(match.index, match.index + 16_384);
    const close = after.indexOf('>>');
    const dictionary = before.slice(before.lastIndexOf('<<') + 1) + (close === -1 ? after : after.slice(0, close));
    const count = /\/Count\s+(\d{1,9})\b/.exec(dictionary);
    if (count) pages = Math.max(pages, Number(count[1]));
  }
  const rawTitle = /\/Title\s*\(((?:[^()\\]|\\.){1,300})\)/.exec(text)?.[1];
  // A title in UTF-16 (a literal that starts with the BOM þÿ) is left out rather than shown as mojibake.
  const title = rawTitle?.startsWith('\xfe\xff') ? undefined : rawTitle?.replace(/\\(.)/g, '$1').replace(/[\u0000-\u001f]/g, ' ').trim().slice(0, 200) || undefined;
  const what = ['PDF document', version ? `version ${version}` : undefined, pages > 0 ? `${pages} page${pages === 1 ? '' : 's'}` : undefined, title ? `titled "${title}"` : undefined].filter(Boolean).join(', ');
  return { type: 'application/pdf', what, ...(title ? { title } : {}) };
}

/** Page-tree nodes looked at in a PDF, at most. */
const PDF_MAX_NODES = 10_000;

/** A zip archive's entry count and first names, from its central directory at the end. */
function zipFacts(body: Buffer): string {
  // The end record is 22 bytes plus a comment of up to 65,535.
  const from = Math.max(0, body.length - 22 - 65_535);
  const end = body.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < from || end + 22 > body.length) return 'zip archive';
  const count = body.readUInt16LE(end + 10);
  let at = body.readUInt32LE(end + 16);
  const names: string[] = [];
  for (let i = 0; i < Math.min(count, 10) && at + 46 <= body.length && body.readUInt32LE(at) === 0x02014b50; i++) {
    const nameLength = body.readUInt16LE(at + 28);
    names.push(body.subarray(at + 46, at + 46 + nameLength).toString('utf8').replace(/[\u0000-\u001f]/g, '').slice(0, 100));
    at += 46 + nameLength + body.readUInt16LE(at + 30) + body.readUInt16LE(at + 32);
  }
  const listed = names.length > 0 ? `: ${names.join(', ')}${count > names.length ? ', …' : ''}` : '';
  return `zip archive of ${count} file${count === 1 ? '' : 's'}${listed}`;
}
