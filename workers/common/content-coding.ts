import zlib from 'node:zlib';

/** A body that cannot be decoded: a coding we do not know, or data that is not what it says. */
export class ContentCodingError extends Error {
  constructor(readonly kind: 'unsupported' | 'corrupt', message: string) {
    super(message);
  }
}

/**
 * A response body with its `Content-Encoding` undone: gzip (x-gzip), deflate (zlib or, as some
 * servers send it, raw) and br, several codings in reverse order of application. Why: a request
 * without Accept-Encoding lets a server use any coding (RFC 9110 12.5.3), and CDNs and pre-gzipped
 * files do, so the compressed bytes came back as garbled "text". The decoded size is capped at
 * `maxBytes` as the raw body is (a small gzip can expand to gigabytes): past it, the rest is cut
 * and `truncated` set. A coding we do not know, or data that does not decode, throws
 * ContentCodingError naming it; a body that was already cut decodes as far as it goes. Used by the
 * api worker (workers/openapi/api-client.ts) and the web fetcher (workers/web/http-fetch.ts).
 */
export async function decodeContent(body: Buffer, coding: string, maxBytes: number, cut: boolean): Promise<{ body: Buffer; truncated: boolean }> {
  const codings = coding
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  let out = { body, truncated: cut };
  for (const name of codings.reverse()) {
    const make = DECODERS[name];
    if (!make) throw new ContentCodingError('unsupported', `the response is encoded with '${name}', which cannot be decoded (gzip, deflate and br can)`);
    out = await decodeOne(out.body, name, make(out.body), maxBytes, out.truncated);
  }
  return out;
}

const DECODERS: Record<string, (body: Buffer) => zlib.Gunzip | zlib.Inflate | zlib.InflateRaw | zlib.BrotliDecompress> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  // `deflate` is the zlib format (RFC 9110 8.4.1.2); some servers send the raw stream, whose
  // first byte never has the zlib header's low nibble 8.
  deflate: (body) => ((body[0] ?? 0) & 0x0f) === 8 ? zlib.createInflate() : zlib.createInflateRaw(),
  br: () => zlib.createBrotliDecompress(),
};

function decodeOne(input: Buffer, name: string, stream: NodeJS.ReadWriteStream & { destroy(): void }, maxBytes: number, cut: boolean): Promise<{ body: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (truncated: boolean) => {
      settled = true;
      resolve({ body: Buffer.concat(chunks), truncated });
    };
    stream.on('data', (chunk: Buffer) => {
      if (settled) return;
      if (size + chunk.length > maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - size));
        stream.destroy();
        settle(true);
        return;
      }
      size += chunk.length;
      chunks.push(chunk);
    });
    stream.on('end', () => settled || settle(cut));
    stream.on('error', (error: Error) => {
      if (settled) return;
      if (cut) return settle(true);
      settled = true;
      reject(new ContentCodingError('corrupt', `the response's ${name} content could not be decoded: ${error.message}`));
    });
    stream.end(input);
  });
}
