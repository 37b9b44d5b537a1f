/**
 * Text from a description that clients show to people (tool titles and descriptions, parameter
 * descriptions), with what could make it display differently from what the model reads removed:
 * terminal escape sequences (colours, cursor moves, OSC 8 links that hide their target), other
 * C0 and C1 control characters but tab and line feed, a carriage return (it rewrites the line
 * it ends, so it becomes a line feed), and the Unicode bidirectional embeddings, overrides and
 * isolates of "Trojan Source" (CVE-2021-42574). Marks that only set a direction (LRM, RLM, ALM),
 * zero-width joiners and all printable text stay. Argument values, enums and defaults are data
 * and are never changed.
 */
// ESC [ … final byte (CSI); ESC ] … BEL or ESC \ (OSC, an unterminated one to the end); ESC and one more.
const ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]?|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[\s\S]?|\u009b[0-?]*[ -/]*[@-~]?/g;
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

export function displayText(text: string): string {
  if (!UNSAFE.test(text)) return text;
  return text.replace(ESCAPES, '').replace(/\r\n?/g, '\n').replace(CONTROLS, '');
}

/**
 * In asciiJson text (protocol/tool-text.ts), an escape that may stand for a character displayText
 * removes: a cheap test before walking a descriptor. It may match where there is none (an escaped
 * backslash before `u001b`), never the other way round.
 */
export const MAY_HOLD_UNSAFE = /\\(?:[bfr]|u00[01][0-9a-f]|u007f|u00[89][0-9a-f]|u202[a-e]|u206[6-9])/i;

/** Keywords whose values are data (sent upstream or compared against), never display text. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'example', 'examples']);

/**
 * `value` (a tool descriptor or a schema) with displayText applied to every `title` and
 * `description` string outside data keywords; parts without a change are the same objects.
 */
export function cleanDisplayTexts<T>(value: T): T {
  return clean(value, 0) as T;
}

function clean(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object' || depth > 2_000) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item, i) => {
      const next = clean(item, depth + 1);
      if (next !== item) (out ??= [...value])[i] = next;
    });
    return out ?? value;
  }
  let out: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    if (DATA_KEYWORDS.has(key)) continue;
    const next = (key === 'description' || key === 'title') && typeof item === 'string' ? displayText(item) : clean(item, depth + 1);
    if (next !== item) {
      out ??= copy(value as Record<string, unknown>);
      Object.defineProperty(out, key, { value: next, enumerable: true, writable: true, configurable: true });
    }
  }
  return out ?? value;
}

/** A shallow copy keeping the prototype (null-prototype property maps stay so) and `__proto__` keys as data. */
function copy(value: Record<string, unknown>): Record<string, unknown> {
  const out = Object.create(Object.getPrototypeOf(value)) as Record<string, unknown>;
  for (const [key, item] of Object.entries(value)) Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
  return out;
}
