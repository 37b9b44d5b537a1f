import { PassThrough } from 'node:stream';
import { captureOutput } from '../../../workers/shell/output-capture';
import { fitStreams, fitText, jsonBytes } from '../../../workers/shell/reply-budget';

describe('jsonBytes', () => {
  test.each([
    ['', 2],
    ['abc', 5],
    ['a"b\\', 8],
    ['\n\t', 6],
    ['\u0000', 8],
    ['é', 4],
    ['€', 5],
    ['😀', 6],
  ])('counts %p as its JSON-encoded UTF-8 size %p', (text, size) => {
    expect(jsonBytes(text)).toBe(size);
    expect(jsonBytes(text)).toBe(Buffer.byteLength(JSON.stringify(text)));
  });
});

describe('fitText', () => {
  test('keeps a text that fits as it is', () => {
    expect(fitText('hello', 100)).toEqual({ text: 'hello', cut: false });
  });

  test('keeps the head and the tail around a marker within the budget', () => {
    const text = `${'h'.repeat(5000)}${'m'.repeat(5000)}${'t'.repeat(5000)}`;
    const fitted = fitText(text, 4000);
    expect(fitted.cut).toBe(true);
    expect(jsonBytes(fitted.text)).toBeLessThanOrEqual(4000);
    expect(fitted.text).toMatch(/^h+\n\[… \d+ bytes cut to fit the reply …\]\nt+$/);
    const kept = fitted.text.replace(/\n\[…[^\]]*\]\n/, '').length;
    expect(fitted.text).toContain(`[… ${15_000 - kept} bytes cut to fit the reply …]`);
  });

  test('counts what an earlier marker in the cut says was missing, so the new one tells the whole cut', () => {
    // As a capture leaves it: 900,000 bytes dropped between head and tail.
    const captured = `${'h'.repeat(3000)}\n[… 900000 bytes cut …]\n${'t'.repeat(3000)}`;
    const fitted = fitText(captured, 2000);
    const kept = fitted.text.replace(/\n\[…[^\]]*\]\n/, '').length;
    expect(fitted.text).toContain(`[… ${6000 - kept + 900_000} bytes cut to fit the reply …]`);
    expect(fitted.text).not.toContain('900000 bytes cut …');
    // Cut again for a smaller budget (the text item of an exec reply): the total still adds up.
    const again = fitText(fitted.text, 1000);
    const keptAgain = again.text.replace(/\n\[…[^\]]*\]\n/, '').length;
    expect(again.text).toContain(`[… ${6000 - keptAgain + 900_000} bytes cut to fit the reply …]`);
  });

  test('counts escaped control characters, so binary noise cannot blow the budget', () => {
    const fitted = fitText('\u0001'.repeat(10_000), 1000);
    expect(jsonBytes(fitted.text)).toBeLessThanOrEqual(1000);
  });

  test('never splits a surrogate pair', () => {
    const fitted = fitText('😀'.repeat(1000), 500);
    expect(fitted.text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });
});

describe('fitText of captured output that is not UTF-8', () => {
  const capture = async (data: Buffer, cap: number, window?: number) => {
    const stream = new PassThrough();
    const captured = captureOutput(stream, cap, window);
    stream.end(data);
    await captured.closed;
    return captured;
  };
  const marked = (text: string) => Number(/\[… (\d+) bytes cut/.exec(text)![1]);
  const withoutMarker = (text: string) => text.replace(/\n\[…[^\]]*\]\n/, '');

  test.each([
    // [what, unit of output, its bytes as shown characters: bytes each U+FFFD or letter stood for]
    ['invalid bytes, one U+FFFD each', [0xff], { '\uFFFD': 1 }],
    ['truncated sequences, one U+FFFD for two bytes', [0xe2, 0x82, 0x41], { '\uFFFD': 2, A: 1 }],
    ['real U+FFFD characters, three bytes each', [0xef, 0xbf, 0xbd], { '\uFFFD': 3 }],
  ])('the marker counts the original bytes cut: %s', async (_what, unit, bytesOf) => {
    const data = Buffer.from(Array.from({ length: 100_000 }, () => unit).flat());
    const captured = await capture(data, 10 * 1024 * 1024);
    const fitted = fitText(captured.text(), 3000, captured.sourceBytes);
    const shownBytes = [...withoutMarker(fitted.text)].reduce((sum, char) => sum + (bytesOf as Record<string, number>)[char], 0);
    expect(marked(fitted.text)).toBe(data.length - shownBytes);
  });

  test('through the capture\'s own cut too, and a second fit to a smaller budget', async () => {
    const data = Buffer.alloc(300_000, 0xff);
    const captured = await capture(data, 10 * 1024 * 1024, 20_000);
    for (const budget of [30_000, 2000]) {
      const fitted = fitText(captured.text(), budget, captured.sourceBytes);
      expect(marked(fitted.text)).toBe(data.length - [...withoutMarker(fitted.text)].length);
    }
  });
});

describe('fitStreams', () => {
  test('lets a small stream keep everything and gives the rest to the large one', () => {
    const fitted = fitStreams('x'.repeat(10_000), 'small error', 2000);
    expect(fitted.stderr).toBe('small error');
    expect(fitted.stderrCut).toBe(false);
    expect(fitted.stdoutCut).toBe(true);
    expect(jsonBytes(fitted.stdout) + jsonBytes(fitted.stderr)).toBeLessThanOrEqual(2000);
  });
});

describe('captureOutput', () => {
  const feed = async (chunks: string[], cap: number, window?: number) => {
    const stream = new PassThrough();
    const capture = captureOutput(stream, cap, window);
    for (const chunk of chunks) stream.write(Buffer.from(chunk));
    stream.end();
    await capture.closed;
    return capture;
  };

  test('keeps everything under the cap', async () => {
    const capture = await feed(['abc', 'def'], 100);
    expect(capture.text()).toBe('abcdef');
    expect(capture.truncated()).toBe(false);
    expect(capture.total()).toBe(6);
  });

  test('past the cap keeps the head and the end of the whole output, and counts what it drops', async () => {
    const capture = await feed(['0123456789', 'abcdef'], 12);
    expect(capture.text()).toBe('012345\n[… 4 bytes cut …]\nabcdef');
    expect(capture.truncated()).toBe(true);
    expect(capture.total()).toBe(16);
    expect((await feed(['0123456789', 'ab'], 12)).text()).toBe('0123456789ab');
  });

  test('decodes a character split between head and tail whole when nothing was cut', async () => {
    const capture = await feed(['ab\u20ac'.repeat(3)], 16, 8);
    expect(capture.text()).toBe('ab\u20ac'.repeat(3));
  });

  test('holds only a window of head and tail when given one', async () => {
    const capture = await feed(['aaaa', 'bbbb', 'cccc', 'dddd', 'eeee'], 16, 4);
    expect(capture.text()).toBe('aaaa\n[… 12 bytes cut …]\neeee');
    expect(capture.truncated()).toBe(true);
    expect(capture.total()).toBe(20);
  });
});
