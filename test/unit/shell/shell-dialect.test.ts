import { mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bashSyntaxNote, systemShell } from '../../../workers/shell/shell-dialect';

describe('bashSyntaxNote', () => {
  test.each([
    { output: 'sh: 1: eval: [[: not found\n', noted: true },
    { output: 'sh: 1: source: not found', noted: true },
    { output: 'sh: 1: declare: not found', noted: true },
    { output: 'sh: 1: set: Illegal option -o pipefail\n', noted: true },
    { output: 'sh: 1: Bad substitution', noted: true },
    { output: 'sh: 1: Syntax error: "(" unexpected', noted: true },
    { output: 'sh: 1: node: not found', noted: false },
    { output: 'the docs say: source: not found anywhere', noted: false },
    { output: 'all fine\n', noted: false },
  ])('$output', ({ output, noted }) => {
    const note = bashSyntaxNote(output, 'dash');
    expect(note === undefined ? false : note.startsWith('commands run in /bin/sh, which is dash here (POSIX sh), not bash')).toBe(noted);
  });

  test('says nothing where /bin/sh is bash', () => {
    expect(bashSyntaxNote('sh: 1: source: not found', 'bash')).toBeUndefined();
  });
});

describe('systemShell', () => {
  test('names the program behind a link, and sh when there is none', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'system-shell-'));
    try {
      symlinkSync('/bin/true', path.join(dir, 'sh'));
      expect(systemShell(path.join(dir, 'sh'))).toBe(path.basename(realpathSync('/bin/true')));
      expect(systemShell(path.join(dir, 'missing'))).toBe('sh');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
