/**
 * Elements below this depth are flattened. turndown converts by recursion, several frames a
 * level: 1,500 nested `<div>`s (unclosed `<div>`/`<font>` tags on old pages nest like that)
 * overflowed the stack and the whole page failed. Decision: 256, far deeper than real layouts
 * nest (tens of levels), and well within a thread's stack.
 */
export const MAX_NESTING_DEPTH = 256;

/** Tags whose edges do not separate words: unwrapped without adding a space. */
const INLINE = new Set(['A', 'ABBR', 'B', 'BDI', 'BDO', 'CITE', 'CODE', 'DATA', 'DFN', 'EM', 'FONT', 'I', 'KBD', 'LABEL', 'MARK', 'Q', 'S', 'SAMP', 'SMALL', 'SPAN', 'STRONG', 'SUB', 'SUP', 'TIME', 'U', 'VAR']);

interface El {
  tagName: string;
  children: ArrayLike<El>;
  firstElementChild: El | null;
  childNodes: ArrayLike<unknown>;
  ownerDocument: { createTextNode(text: string): unknown };
  querySelectorAll(selector: string): ArrayLike<El>;
  before(...nodes: unknown[]): void;
  remove(): void;
}

/**
 * Nodes moved per call: a spread of all of an element's children overflowed the stack at 150,000
 * of them (a 1 MB page), and the whole page failed.
 */
const MOVE_BATCH = 4096;

/**
 * Keeps `root`'s tree within MAX_NESTING_DEPTH (+1) levels, so that converting it cannot overflow
 * the stack: inside each element at that depth, every element holding other elements is replaced
 * by its children (with a space around a block one, so words stay apart); elements holding only
 * text (a link, a `<b>`) are kept. The text is all kept; only structure that deep is lost. Walks
 * with an explicit stack, in time linear in the number of nodes.
 */
export function flattenDeepNesting(root: unknown, maxDepth = MAX_NESTING_DEPTH): void {
  const stack: Array<{ element: El; depth: number }> = [{ element: root as El, depth: 0 }];
  while (stack.length > 0) {
    const { element, depth } = stack.pop()!;
    if (depth < maxDepth) {
      for (const child of Array.from(element.children)) stack.push({ element: child, depth: depth + 1 });
      continue;
    }
    // Document order: an outer element is unwrapped before its own children are looked at.
    for (const inner of Array.from(element.querySelectorAll('*'))) {
      if (!inner.firstElementChild) continue;
      const nodes: unknown[] = Array.from(inner.childNodes);
      if (!INLINE.has(inner.tagName)) {
        nodes.unshift(inner.ownerDocument.createTextNode(' '));
        nodes.push(inner.ownerDocument.createTextNode(' '));
      }
      for (let start = 0; start < nodes.length; start += MOVE_BATCH) inner.before(...nodes.slice(start, start + MOVE_BATCH));
      inner.remove();
    }
  }
}
