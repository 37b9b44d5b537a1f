/**
 * The size cap of one tool result, in every toolset. Why: the MCP SDK's stdio client reads at
 * most 10 MiB a message (`ReadBuffer`, STDIO_DEFAULT_MAX_BUFFER_SIZE) and closes the whole
 * connection past it, so one custom tool returning 11 MB ended the session of every call on it.
 */

/** Bytes a character of a JSON string can take at most (`\u0001` is six). */
const MAX_BYTES_PER_CHAR = 6;

/**
 * The result's size as UTF-8 JSON when that may be over `maxBytes`, else undefined. A walk sums
 * its string lengths first: a result whose every character could be six bytes and still fits is
 * not written out (most results; the check runs on every call). Only a large one is serialised.
 */
export function oversizeBytes(result: unknown, maxBytes: number): number | undefined {
  if (countChars(result, Math.floor(maxBytes / MAX_BYTES_PER_CHAR)) * MAX_BYTES_PER_CHAR <= maxBytes) return undefined;
  const bytes = Buffer.byteLength(JSON.stringify(result) ?? '', 'utf8');
  return bytes > maxBytes ? bytes : undefined;
}

/** Characters of the strings and keys in `value` (numbers and the like as 24), stopping past `limit`. */
function countChars(value: unknown, limit: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= limit) {
    const node = stack.pop();
    if (typeof node === 'string') total += node.length + 2;
    else if (Array.isArray(node)) {
      total += node.length + 2;
      for (const item of node) stack.push(item);
    } else if (node !== null && typeof node === 'object') {
      for (const [key, item] of Object.entries(node)) {
        total += key.length + 4;
        stack.push(item);
      }
    } else total += 24;
  }
  return total;
}

/** "10.5 MiB", "812 KiB": a size as people read it in an error message. */
export function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, '')} MiB`;
  return `${Math.ceil(bytes / 1024)} KiB`;
}
