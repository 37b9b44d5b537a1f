import { pathToFileURL } from 'node:url';

/**
 * A PDF's text, by pdf.js (`pdfjs-dist`, its legacy build for Node), when that package is
 * installed; without it, PDFs are summarised only. Decision: pdf.js because it is Mozilla's,
 * kept, pure JavaScript and offline (pdfjs-dist 4.10.38 runs on Node 20; unpdf 1.x needs Node 22).
 * It runs in the fetch thread, whose heap limit and deadline bound a hostile file: the loading
 * task is destroyed when the call's signal ends, and the thread is terminated if it does not yield.
 * Text comes as pdf.js lays it out, line by line, pages apart; no layout, images or tables.
 */

/** Pages read at most; the rest are named, not read. */
export const PDF_MAX_PAGES = 500;
/** Characters of text kept at most (the fetch's windows page through them). */
export const PDF_MAX_CHARS = 2_000_000;

export type PdfText =
  | { ok: true; text: string; pages: number; pagesRead: number; cut: boolean }
  | { ok: false; reason: string };

interface TextItem {
  str?: string;
  hasEOL?: boolean;
}
interface PdfJs {
  getDocument(options: Record<string, unknown>): { promise: Promise<PdfDocument>; destroy(): Promise<void> };
}
interface PdfDocument {
  numPages: number;
  getPage(n: number): Promise<{ getTextContent(): Promise<{ items: TextItem[] }>; cleanup(): void }>;
  destroy(): Promise<void>;
}

let loading: Promise<PdfJs | undefined> | undefined;

/**
 * pdf.js, imported once per thread; undefined when it is not installed. Its import prints
 * warnings (no canvas package, no DOMMatrix) with console.log, which in a stdio server is the
 * protocol's stdout: console.log is silenced while it loads. An ES module only, so imported with
 * a real `import()`, which tsc would turn into require().
 */
function pdfjs(): Promise<PdfJs | undefined> {
  loading ??= (async () => {
    const log = console.log;
    console.log = () => {};
    try {
      // Resolved here (CommonJS lookup from this file), imported by absolute URL: the import in a
      // Function has no module of its own to resolve a bare name from.
      const resolved = require.resolve('pdfjs-dist/legacy/build/pdf.mjs');
      const importModule = new Function('url', 'return import(url)') as (url: string) => Promise<PdfJs>;
      return await importModule(pathToFileURL(resolved).href);
    } catch {
      return undefined;
    } finally {
      console.log = log;
    }
  })();
  return loading;
}

/** The text of `body`, a PDF; `{ ok: false, reason }` when pdf.js is missing or cannot read it. */
export async function pdfText(body: Buffer, signal?: AbortSignal): Promise<PdfText> {
  const lib = await pdfjs();
  if (!lib) return { ok: false, reason: 'no PDF reader is installed, the pdfjs-dist package' };
  if (signal?.aborted) return { ok: false, reason: 'the call ended first' };
  // pdf.js takes the bytes over (it detaches their buffer): a copy.
  const task = lib.getDocument({ data: new Uint8Array(body), isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0, stopAtErrors: false, disableAutoFetch: true, disableStream: true });
  const stop = () => void task.destroy().catch(() => {});
  signal?.addEventListener('abort', stop, { once: true });
  try {
    const document = await task.promise;
    const parts: string[] = [];
    let chars = 0;
    let pagesRead = 0;
    for (let n = 1; n <= Math.min(document.numPages, PDF_MAX_PAGES) && chars < PDF_MAX_CHARS; n++) {
      if (signal?.aborted) break;
      const page = await document.getPage(n);
      const content = await page.getTextContent();
      page.cleanup();
      const text = content.items.map((item) => `${item.str ?? ''}${item.hasEOL ? '\n' : ''}`).join('').replace(/[ \t]+\n/g, '\n').trim();
      parts.push(text);
      chars += text.length + 2;
      pagesRead = n;
    }
    let text = parts.filter((part) => part !== '').join('\n\n');
    const cut = pagesRead < document.numPages || text.length > PDF_MAX_CHARS;
    // Never half a surrogate pair at the cut.
    if (text.length > PDF_MAX_CHARS) text = text.slice(0, /[\ud800-\udbff]/.test(text[PDF_MAX_CHARS - 1]) ? PDF_MAX_CHARS - 1 : PDF_MAX_CHARS);
    return { ok: true, text, pages: document.numPages, pagesRead, cut };
  } catch (error) {
    return { ok: false, reason: signal?.aborted ? 'the call ended first' : `pdf.js could not read it: ${String((error as Error)?.message ?? error).replace(/\s+/g, ' ').slice(0, 200).replace(/[.\s]+$/, '')}` };
  } finally {
    signal?.removeEventListener('abort', stop);
    stop();
  }
}
