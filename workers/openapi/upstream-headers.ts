/** Headers of upstream requests and responses, as ApiClient reads and writes them. */
import { headerText } from '../common/charset';

/** A response's headers, each one text (repeated ones joined with `, `). */
export function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = headerText(Array.isArray(value) ? value.join(', ') : value);
  return out;
}

/**
 * `Cookie` headers as one. A later header's pairs of a name replace an earlier header's pairs of
 * that name (where they stood); pairs repeated within one header all stay: an exploded array
 * cookie (`c=a; c=b; c=c`) lost all but its last item once a cookie was configured.
 */
export function joinCookies(headers: Array<string | undefined>): string | undefined {
  const given = headers.filter((header): header is string => header !== undefined && header !== '');
  if (given.length < 2) return given[0];
  let joined: Array<[name: string, pair: string]> = [];
  for (const header of given) {
    const own = header.split(';').map((pair) => pair.trim()).filter((pair) => pair !== '').map((pair): [string, string] => [pair.split('=', 1)[0], pair]);
    const names = new Set(own.map(([name]) => name));
    const placed = new Set<string>();
    const next: Array<[string, string]> = [];
    for (const entry of joined) {
      if (!names.has(entry[0])) next.push(entry);
      else if (!placed.has(entry[0])) {
        placed.add(entry[0]);
        for (const mine of own) if (mine[0] === entry[0]) next.push(mine);
      }
    }
    for (const mine of own) if (!placed.has(mine[0])) next.push(mine);
    joined = next;
  }
  return joined.map(([, pair]) => pair).join('; ');
}

/** Header names in lower case, values as text. */
export function lowerKeys(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = String(value);
  return out;
}
