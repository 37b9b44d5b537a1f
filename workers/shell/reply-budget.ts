/**
 * Output that fits in one MCP message. The worker keeps up to `maxOutputBytes` (10 MiB) per stream,
 * as spec 002 caps it, but the official MCP SDK's stdio client drops the whole connection on a
 * message over 10 MiB (STDIO_DEFAULT_MAX_BUFFER_SIZE), and a result repeats its output in the text
 * item and in `structuredContent`. So the reply is budgeted by its JSON-encoded UTF-8 size (control
 * characters grow six-fold as `\u0000`): when a stream does not fit, its head and tail are kept
 * around a marker saying how many bytes of output are missing. A reply that cannot be received is worse than a shorter
 * one. Sizes are counted by scanning, without building the JSON, so a 10 MiB stream costs no copy.
 */

/** Share of the budget the text item gets: output repeated for people, smaller than the structured copy. */
export const TEXT_SHARE = 8;

/** Bytes one UTF-16 code unit takes in JSON as UTF-8 (a surrogate half counts 2: a pair is 4). */
function unitBytes(code: number): number {
  if (code < 0x20) return code === 0x0a || code === 0x09 || code === 0x0d || code === 0x08 || code === 0x0c ? 2 : 6;
  if (code === 0x22 || code === 0x5c) return 2;
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  if (code >= 0xd800 && code <= 0xdfff) return 2;
  return 3;
}

/** JSON-encoded UTF-8 size of a string, quotes included. */
export function jsonBytes(text: string): number {
  let size = 2;
  for (let i = 0; i < text.length; i++) size += unitBytes(text.charCodeAt(i));
  return size;
}

/** Room kept for the marker and the quotes. */
const MARKER_ROOM = 96;

/**
 * Bytes of output that `text.slice(start, end)` shows: a captured stream's own count
 * (output-capture.ts), exact also where invalid UTF-8 became U+FFFD.
 */
export type SourceBytes = (start: number, end: number) => number;

/**
 * `text` itself when its JSON fits in `budget` bytes, else its head and tail around a marker that
 * says how many bytes were cut: counted by `sourceBytes` when given, else as the text's UTF-8
 * (an earlier marker in the cut counting what it says).
 */
export function fitText(text: string, budget: number, sourceBytes?: SourceBytes): { text: string; cut: boolean } {
  if (jsonBytes(text) <= budget) return { text, cut: false };
  const half = Math.max(0, Math.floor((budget - MARKER_ROOM) / 2));
  let head = 0;
  for (let size = 0; head < text.length; head++) {
    size += unitBytes(text.charCodeAt(head));
    if (size > half) break;
  }
  let tail = text.length;
  for (let size = 0; tail > head; tail--) {
    size += unitBytes(text.charCodeAt(tail - 1));
    if (size > half) break;
  }
  // Never split a surrogate pair.
  if (head > 0 && isHighSurrogate(text.charCodeAt(head - 1))) head--;
  if (tail < text.length && isLowSurrogate(text.charCodeAt(tail))) tail++;
  // Nor an earlier marker (the capture's, or a cut of this text made for a larger budget): what
  // it says was cut is counted into the new one, so the marker tells what is really missing.
  let earlier = 0;
  for (const m of text.matchAll(MARKER)) {
    const [start, end] = [m.index!, m.index! + m[0].length];
    if (end <= head || start >= tail) continue;
    head = Math.min(head, start);
    tail = Math.max(tail, end);
    earlier += Number(m[1]) - Buffer.byteLength(m[0]);
  }
  const cut = sourceBytes ? sourceBytes(head, tail) : Buffer.byteLength(text.slice(head, tail)) + earlier;
  const marker = `\n[… ${cut} bytes cut to fit the reply …]\n`;
  return { text: text.slice(0, head) + marker + text.slice(tail), cut: true };
}

/** A cut marker: output-capture.ts's (`[… N bytes cut …]`) or fitText's. */
const MARKER = /\n\[… (\d+) bytes cut[^\]\n]*…\]\n/g;

/** Splits `budget` between two streams: a small one keeps all it needs, the other gets the rest. */
export function fitStreams(
  stdout: string,
  stderr: string,
  budget: number,
  sources: { stdout?: SourceBytes; stderr?: SourceBytes } = {},
): { stdout: string; stderr: string; stdoutCut: boolean; stderrCut: boolean } {
  const half = Math.floor(budget / 2);
  const outSize = jsonBytes(stdout);
  const errSize = jsonBytes(stderr);
  const outBudget = errSize < half ? budget - errSize : outSize < half ? outSize : half;
  const errBudget = budget - Math.min(outSize, outBudget);
  const out = fitText(stdout, outBudget, sources.stdout);
  const err = fitText(stderr, errBudget, sources.stderr);
  return { stdout: out.text, stderr: err.text, stdoutCut: out.cut, stderrCut: err.cut };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
