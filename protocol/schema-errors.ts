import type { ErrorObject } from 'ajv';

/**
 * The ajv errors worth naming to a caller. A value that fits none of a oneOf/anyOf gets one error
 * per alternative, each where that alternative first failed, and then the oneOf's own: only those
 * that got furthest into the value are kept (the alternative the caller meant, usually), so a
 * valid `type` is not reported as wrong while the real fault sits deeper. In protocol/ because the
 * supervisor's check and the api worker's (library, invoke-api-endpoint) both describe them.
 */
export function closestErrors(errors: ErrorObject[]): ErrorObject[] {
  const depth = (error: ErrorObject) => (error.instancePath === '' ? 0 : error.instancePath.split('/').length);
  const deepest = Math.max(0, ...errors.map(depth));
  const kept = errors.filter((error) => depth(error) === deepest && error.keyword !== 'oneOf' && error.keyword !== 'anyOf');
  return kept.length > 0 ? kept : errors;
}

/** `problems` joined for a message, at most five, saying how many more there were. */
export function joinProblems(problems: string[]): string {
  const more = problems.length > 5 ? ` (and ${problems.length - 5} more)` : '';
  return `${problems.slice(0, 5).join('; ')}${more}`;
}
