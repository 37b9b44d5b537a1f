/**
 * The size cap of one tool result, in every toolset. Why: the MCP SDK's stdio client reads at
 * most 10 MiB a message (`ReadBuffer`, STDIO_DEFAULT_MAX_BUFFER_SIZE) and closes the whole
 * connection past it, so one custom tool returning 11 MB ended the session of every call on it.
 */

/** What JSON escapes in a string: `"` and `\` take two bytes, control characters two or six. */
const ESCAPED = /[\u0000-\u001f"\\]/g;
const SHORT_ESCAPES = new Set(['"', '\\', '\b', '\f', '\n', '\r', '\t']);

/**
 * The result's size as UTF-8 JSON when it is over `maxBytes`, else undefined. A result whose
 * characters would fit at six bytes each is passed at once (a walk of lengths: ~5 µs for 10 KB).
 * A larger one is counted by a second walk, never written out: JSON.stringify of a 2 MiB result
 * (a shell command's whole reply) held the event loop every session shares ~15 ms, the walk
 * ~3 ms. Strings and keys are counted exactly, escapes included; numbers and punctuation as JSON
 * writes them, with a byte to spare per object and array.
 */
export function oversizeBytes(result: unknown, maxBytes: number): number | undefined {
  // Most results: even if every character took JSON's six bytes, they would fit.
  if (charCount(result, Math.floor(maxBytes / 6)) * 6 <= maxBytes) return undefined;
  let total = 0;
  const stack: unknown[] = [result];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') total += stringBytes(node);
    else if (Array.isArray(node)) {
      total += node.length + 2;
      for (const item of node) stack.push(item);
    } else if (node !== null && typeof node === 'object') {
      total += 2;
      for (const [key, item] of Object.entries(node)) {
        if (item === undefined || typeof item === 'function') continue;
        total += stringBytes(key) + 2;
        stack.push(item);
      }
    } else total += String(node).length;
  }
  return total > maxBytes ? total : undefined;
}

/** Characters of the strings and keys in `value`, others as 24, stopping past `limit`. */
function charCount(value: unknown, limit: number): number {
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

/** Bytes of `text` as a JSON string, quotes included. */
function stringBytes(text: string): number {
  let bytes = Buffer.byteLength(text, 'utf8') + 2;
  ESCAPED.lastIndex = 0;
  if (!ESCAPED.test(text)) return bytes;
  ESCAPED.lastIndex = 0;
  for (let match = ESCAPED.exec(text); match; match = ESCAPED.exec(text)) bytes += SHORT_ESCAPES.has(match[0]) ? 1 : 5;
  return bytes;
}

/** "10.5 MiB", "812 KiB": a size as people read it in an error message. */
export function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, '')} MiB`;
  return `${Math.ceil(bytes / 1024)} KiB`;
}
