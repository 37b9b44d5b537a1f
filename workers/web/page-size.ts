import type { Page } from 'puppeteer-core';

/**
 * Decoded bytes of a search engine's result page read at most (10 MiB; real ones are 0.1-1.5 MB).
 * Why: a 200 MB result page took the browser's processes to 2.6 GB before the search timed out.
 */
export const MAX_RESULT_PAGE_BYTES = 10 * 1024 * 1024;

export interface DocumentSizeWatch {
  /** Resolves with the bytes read once they passed the limit and loading was stopped; never rejects. */
  tooLarge: Promise<number>;
  stop(): Promise<void>;
}

/**
 * Watches the bytes of the page's first document request (on a new page, the search's own
 * navigation; a redirect keeps its request id) on a CDP session of its own, and stops the page's
 * loading (Page.stopLoading) past `maxBytes`. The session keeps no bodies (buffer sizes 0):
 * puppeteer's own session keeps the one the searcher reads.
 */
export async function watchDocumentSize(page: Page, maxBytes = MAX_RESULT_PAGE_BYTES): Promise<DocumentSizeWatch> {
  const session = await page.createCDPSession();
  await session.send('Network.enable', { maxTotalBufferSize: 0, maxResourceBufferSize: 0 });
  const tracked = new Set<string>();
  let received = 0;
  let stopped = false;
  let reached: (bytes: number) => void = () => {};
  const tooLarge = new Promise<number>((resolve) => (reached = resolve));
  const onData = (event: { requestId: string; dataLength: number }) => {
    if (stopped || !tracked.has(event.requestId)) return;
    received += event.dataLength;
    if (received <= maxBytes) return;
    stopped = true;
    void session.send('Page.stopLoading').catch(() => {});
    reached(received);
  };
  const onRequest = (event: { requestId: string; type?: string }) => {
    if (tracked.size === 0 && event.type === 'Document') tracked.add(event.requestId);
  };
  session.on('Network.requestWillBeSent', onRequest);
  session.on('Network.dataReceived', onData);
  return {
    tooLarge,
    stop: async () => {
      session.off('Network.requestWillBeSent', onRequest);
      session.off('Network.dataReceived', onData);
      await session.detach().catch(() => {});
    },
  };
}
