import { OUTPUT_LINE_MAX_CHARS, OUTPUT_WINDOW_MAX_CHARS, OutputLines } from '../../../protocol/output-lines';

function collect() {
  const lines: Array<{ stream: string; text: string; cutChars: number }> = [];
  const events: string[] = [];
  const output = new OutputLines({
    line: (stream, text, cutChars) => lines.push({ stream, text, cutChars }),
    dropping: () => events.push('dropping'),
    dropped: (chars) => events.push(`dropped ${chars}`),
  });
  return { output, lines, events };
}

describe('OutputLines', () => {
  it('joins chunks into lines per stream, and end() emits an unfinished line', () => {
    const { output, lines } = collect();
    output.write('stdout', 'hel');
    output.write('stderr', 'oops\r\n');
    output.write('stdout', 'lo\nwor');
    output.end();
    expect(lines).toEqual([
      { stream: 'stderr', text: 'oops', cutChars: 0 },
      { stream: 'stdout', text: 'hello', cutChars: 0 },
      { stream: 'stdout', text: 'wor', cutChars: 0 },
    ]);
  });

  it('cuts a long line at OUTPUT_LINE_MAX_CHARS and counts the rest, even without a newline', () => {
    const { output, lines } = collect();
    output.write('stdout', 'a'.repeat(OUTPUT_LINE_MAX_CHARS + 10));
    output.write('stdout', 'b'.repeat(5));
    output.end();
    expect(lines).toEqual([{ stream: 'stdout', text: 'a'.repeat(OUTPUT_LINE_MAX_CHARS), cutChars: 15 }]);
  });

  it('passes at most OUTPUT_WINDOW_MAX_CHARS a window, says so once, and counts what it dropped', () => {
    const { output, lines, events } = collect();
    const line = `${'x'.repeat(1023)}\n`;
    output.write('stdout', line.repeat(200));
    output.end();
    expect(lines).toHaveLength(OUTPUT_WINDOW_MAX_CHARS / 1024);
    expect(events).toEqual(['dropping', `dropped ${(200 - OUTPUT_WINDOW_MAX_CHARS / 1024) * 1024}`]);
  });

  it('keeps the last lines of stderr (a crash message) whatever the budget', () => {
    const { output } = collect();
    output.write('stderr', `${'e'.repeat(1023)}\n`.repeat(100));
    output.write('stderr', 'Error: boom\n');
    expect(output.stderrTail.at(-1)).toBe('Error: boom');
  });
});
