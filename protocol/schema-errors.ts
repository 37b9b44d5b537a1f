import type { ErrorObject } from 'ajv';

/**
 * The ajv errors worth naming to a caller. A value that fits none of a oneOf/anyOf gets one error
 * per alternative, each where that alternative first failed, and then the oneOf's own: of those,
 * only the ones that got furthest into the value are kept (the alternative the caller meant,
 * usually), so a valid `type` is not reported as wrong while the real fault sits deeper. Errors
 * outside any oneOf/anyOf (a missing required argument beside it) are all kept. In protocol/
 * because the supervisor's check and the api worker's (library, invoke-api-endpoint) both
 * describe them.
 */
export function closestErrors(errors: ErrorObject[]): ErrorObject[] {
  // Each once, shortest first: every item of an array that fits none of its oneOf adds the same
  // one, and a list with one per error made this quadratic in the items (8,000 took 57 s).
  const groups = [...new Set(errors.filter((error) => error.keyword === 'oneOf' || error.keyword === 'anyOf').map((error) => `${error.schemaPath}/`))].sort((a, b) => a.length - b.length);
  if (groups.length === 0) return errors;
  // Each error under a oneOf/anyOf belongs to the outermost one (the shortest schema path).
  const outermost = new Map<string, string | undefined>();
  const groupOf = (error: ErrorObject) => {
    if (!outermost.has(error.schemaPath)) outermost.set(error.schemaPath, groups.find((prefix) => error.schemaPath.startsWith(prefix)));
    return outermost.get(error.schemaPath);
  };
  const depth = (error: ErrorObject) => (error.instancePath === '' ? 0 : error.instancePath.split('/').length);
  const deepest = new Map<string, number>();
  for (const error of errors) {
    const group = groupOf(error);
    if (group !== undefined) deepest.set(group, Math.max(deepest.get(group) ?? 0, depth(error)));
  }
  return errors.filter((error) => {
    const group = groupOf(error);
    if (group !== undefined) return depth(error) === deepest.get(group);
    // A oneOf/anyOf's own error stays only when none of its alternatives' errors came with it.
    if (error.keyword === 'oneOf' || error.keyword === 'anyOf') return !deepest.has(`${error.schemaPath}/`);
    return true;
  });
}

/**
 * `problems` joined for a message, each once (alternatives often fail the same way), at most
 * five, saying how many more there were.
 */
export function joinProblems(problems: string[]): string {
  const unique = [...new Set(problems)];
  const more = unique.length > 5 ? ` (and ${unique.length - 5} more)` : '';
  return `${unique.slice(0, 5).join('; ')}${more}`;
}
