/** CSI sequences (colours, cursor moves, erase line: `ESC [ … final`). */
const CSI = /\x1b\[[0-?]*[ -/]*[@-~]/g;
/** OSC sequences (window titles, hyperlinks), ended by BEL or ST, on one line. */
const OSC = /\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?/g;
/** The remaining two-character escapes (charset selection, keypad modes, save/restore cursor). */
const SHORT_ESCAPE = /\x1b(?:[()#%][0-9A-Za-z@]|[@-Z\\-_=>0-9a-z])/g;

/**
 * Output as a terminal would leave it on the screen, for the text a model or person reads:
 * escape sequences dropped (`git -c color.ui=always`, test runners, `ls --color`), and a line
 * redrawn with `\r` (progress bars of pip, curl, wget, npm) shown in its last state only; a `\r`
 * before a newline is a CRLF line ending and goes. A 40-line download bar became one line, and
 * `\x1b[32mok\x1b[0m` reads `ok`. Lines are handled one by one, so a cut marker (a line of its own,
 * reply-budget.ts) stays whole. Returns the text unchanged (the same string) when there is nothing
 * to render; the exact bytes stay in `structuredContent`.
 */
export function asTerminalShows(text: string): string {
  if (!text.includes('\x1b') && !text.includes('\r')) return text;
  const plain = text.replace(OSC, '').replace(CSI, '').replace(SHORT_ESCAPE, '');
  if (!plain.includes('\r')) return plain;
  return plain
    .split('\n')
    .map((line) => {
      const trimmed = line.replace(/\r+$/, '');
      const last = trimmed.lastIndexOf('\r');
      return last === -1 ? trimmed : trimmed.slice(last + 1);
    })
    .join('\n');
}
