/**
 * Where `value` cannot be written as JSON, as a path (`structuredContent.n is a BigInt`), or
 * undefined. JSON.stringify throws on a BigInt and on an object that contains itself, both of
 * which a thread's answer carries (structured clone copies them); thrown on the supervisor's
 * way out, the call was never answered and its client waited for its own timeout. Objects with
 * a `toJSON` (Date, Buffer) are written by it and not looked into.
 */
export function unserialisableAt(value: unknown): string | undefined {
  const ancestors = new Set<object>();
  const path: Array<string | number> = [];
  const visit = (node: unknown): string | undefined => {
    if (typeof node === 'bigint') return 'is a BigInt';
    if (node === null || typeof node !== 'object' || typeof (node as { toJSON?: unknown }).toJSON === 'function') return undefined;
    if (ancestors.has(node)) return 'is an object that contains itself';
    ancestors.add(node);
    const keys: Array<string | number> = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
    for (const key of keys) {
      const problem = visit((node as Record<string | number, unknown>)[key]);
      if (problem) {
        path.unshift(key);
        return problem;
      }
    }
    ancestors.delete(node);
    return undefined;
  };
  const problem = visit(value);
  return problem && `${path.length > 0 ? path.join('.') : 'the result'} ${problem}`;
}
