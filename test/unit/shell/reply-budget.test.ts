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
    expect(fitted.text).toMatch(/^h+\n\[… \d+ characters cut to fit the reply …\]\nt+$/);
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

  test('drops what comes past the cap and still counts it', async () => {
    const capture = await feed(['0123456789', 'abcdef'], 12);
    expect(capture.text()).toBe('0123456789ab');
    expect(capture.truncated()).toBe(true);
    expect(capture.total()).toBe(16);
  });

  test('holds only the head and the tail of the capped output when given a window', async () => {
    const capture = await feed(['aaaa', 'bbbb', 'cccc', 'dddd', 'eeee'], 16, 4);
    expect(capture.text()).toBe('aaaa\n[… 8 bytes cut …]\ndddd');
    expect(capture.truncated()).toBe(true);
    expect(capture.total()).toBe(20);
  });
});
