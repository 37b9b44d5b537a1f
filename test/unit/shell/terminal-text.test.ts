import { asTerminalShows } from '../../../workers/shell/terminal-text';

describe('asTerminalShows', () => {
  test.each([
    { given: 'plain\ntext\n', want: 'plain\ntext\n' },
    { given: '\x1b[32mok\x1b[0m \x1b[1;31mFAIL\x1b[m\n', want: 'ok FAIL\n' },
    { given: '\rget 10%\rget 55%\rget 100%\ndone\n', want: 'get 100%\ndone\n' },
    { given: 'a\r\nb\r\n', want: 'a\nb\n' },
    { given: '\x1b[2K\rdl 10%\x1b[2K\rdl 100%\n', want: 'dl 100%\n' },
    { given: '\x1b]0;title\x07x \x1b]8;;http://a\x1b\\link\x1b]8;;\x1b\\\n', want: 'x link\n' },
    { given: '\x1b(Bsaved\x1b7 \x1b8back\n', want: 'saved back\n' },
    { given: 'bar 1%\rbar 2%\n[… 900 bytes cut to fit the reply …]\nbar 98%\rbar 99%\r', want: 'bar 2%\n[… 900 bytes cut to fit the reply …]\nbar 99%' },
    { given: 'ünï ✓\r日本\n', want: '日本\n' },
  ])('$given', ({ given, want }) => {
    expect(asTerminalShows(given)).toBe(want);
  });

  test('returns the same string when there is nothing to render', () => {
    const text = 'x'.repeat(1000);
    expect(asTerminalShows(text)).toBe(text);
  });
});
