/**
 * The first key that an object of `text` (valid JSON: JSON.parse took it) holds twice, as a path
 * (`http.port`, `apis[].name`), or undefined. JSON.parse keeps the last value silently, so a
 * second `"http": {…}` section dropped the first one whole; a YAML config is refused for it.
 * Linear in the text: strings are skipped with one regexp search each.
 */
export function duplicateJsonKey(text: string): string | undefined {
  // One frame per open object (its keys so far, and the key that leads to it) or array (null keys).
  const frames: Array<{ keys: Set<string> | null; name: string }> = [];
  let expectKey = false;
  let lastKey = '';
  const quoteOrEscape = /["\\]/g;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = i + 1;
      for (;;) {
        quoteOrEscape.lastIndex = end;
        const found = quoteOrEscape.exec(text);
        if (found === null) return undefined; // not JSON after all: JSON.parse's error stands
        if (found[0] === '"') {
          end = found.index;
          break;
        }
        end = found.index + 2;
      }
      const frame = frames[frames.length - 1];
      if (expectKey && frame?.keys) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (frame.keys.has(key)) return pathOf([...frames.slice(1).map((f) => f.name), key]);
        frame.keys.add(key);
        lastKey = key;
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b /* { */) {
      frames.push({ keys: new Set(), name: nameOf(frames, lastKey) });
      expectKey = true;
    } else if (c === 0x5b /* [ */) {
      frames.push({ keys: null, name: nameOf(frames, lastKey) });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      frames.pop();
    } else if (c === 0x2c /* , */) {
      expectKey = frames[frames.length - 1]?.keys != null;
    }
  }
  return undefined;
}

/** How a new frame is named in a path: an array's elements are `[]`, an object's members their key. */
function nameOf(frames: Array<{ keys: Set<string> | null; name: string }>, lastKey: string): string {
  const parent = frames[frames.length - 1];
  if (parent === undefined) return '';
  return parent.keys === null ? '[]' : lastKey;
}

function pathOf(names: string[]): string {
  return names.reduce((path, name) => (name === '[]' ? `${path}[]` : path === '' ? name : `${path}.${name}`), '');
}
