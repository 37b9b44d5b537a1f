import { getHeapStatistics } from 'node:v8';
import { resourceLimits } from 'node:worker_threads';

/**
 * Nodes of a page (elements, and the text node each character reference makes) converted per MB
 * of the heap. Measured in a thread of a 512 MB heap (linkedom + turndown): about 2 KB a link,
 * 1.5 KB a paragraph, 0.8 KB a character reference; 300,000 links, 400,000 paragraphs or
 * 1,000,000 `&amp;&lt;` (9 MB) ran out of it. Running out is not always the clean end of the
 * thread that resourceLimits promises: a large allocation failing near the limit aborts the
 * whole process (V8 FatalProcessOutOfMemory, nodejs/node#47224), as 1.2 million `<p>`s (9 MB)
 * did to the supervisor. Decision: 256 a MB (4 KB a node), so a page takes half the heap at most.
 */
const NODES_PER_HEAP_MB = 256;

/**
 * The most nodes a page converted on this thread may have: NODES_PER_HEAP_MB per MB of the
 * thread's old-generation limit (`pools.threadMaxOldGenerationSizeMb`), or of the process's heap
 * outside a pool thread.
 */
export function maxPageNodes(): number {
  const heapMb = resourceLimits.maxOldGenerationSizeMb ?? getHeapStatistics().heap_size_limit / 1024 / 1024;
  return Math.floor(heapMb * NODES_PER_HEAP_MB);
}

/**
 * `html` cut before the node (a `<` and a letter, or a `&`) that passes `maxNodes`, or as it is.
 * Counted on the text before any parse, in one pass; a `&` in an attribute counts too, so a page
 * may be cut a little early, never late. The parser closes what the cut leaves open.
 */
export function cutAtNodes(html: string, maxNodes: number): { html: string; cut: boolean } {
  const node = /<[a-zA-Z]|&/g;
  let count = 0;
  for (let found = node.exec(html); found !== null; found = node.exec(html)) {
    if (++count > maxNodes) return { html: html.slice(0, found.index), cut: true };
  }
  return { html, cut: false };
}
