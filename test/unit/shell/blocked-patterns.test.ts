import { BLOCKED_PATTERNS, findBlockedPattern } from '../../../workers/shell/blocked-patterns';
import { ALLOWED, BLOCKED } from '../../fixtures/shell/blocked-commands';


describe('the blocked-pattern guard', () => {
  test.each(BLOCKED)('refuses %p', ({ given, want }) => {
    const found = findBlockedPattern(given);
    expect(found?.pattern).toBe(want);
  });

  test.each(ALLOWED)('allows %p', (given) => {
    expect(findBlockedPattern(given)).toBeUndefined();
  });

  test('names each of the four patterns of spec 002', () => {
    expect([...new Set(BLOCKED.map((row) => row.want))].sort()).toEqual([...BLOCKED_PATTERNS].sort());
  });

  test('returns a reason and the offending simple command', () => {
    const found = findBlockedPattern('ls && sudo rm -fr /');
    expect(found).toEqual({ pattern: 'rm -rf /', reason: 'recursive delete of the root directory', command: 'sudo rm -fr /' });
  });

  test('handles malformed commands without throwing', () => {
    for (const given of ['"unterminated', "'open", '$(', '`', 'echo $(((', '<<', '>', '|||', '\\']) {
      expect(() => findBlockedPattern(given)).not.toThrow();
    }
    expect(findBlockedPattern('"rm -rf /')).toBeUndefined();
    expect(findBlockedPattern('rm -rf / "unterminated')?.pattern).toBe('rm -rf /');
  });
});
