import { callProgress, PROGRESS_MESSAGE_MAX_CHARS, PROGRESS_MIN_INTERVAL_MS, type ProgressReport } from '../../../protocol/call-progress';

describe('callProgress (the worker side of CallContext.progress)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function reporter() {
    const sent: ProgressReport[] = [];
    const warnings: string[] = [];
    return { sent, warnings, progress: callProgress((report) => sent.push(report), (msg) => warnings.push(msg)) };
  }

  test('sends the first report at once and then one a window, the latest, whatever the flood', () => {
    const { sent, progress } = reporter();
    for (let i = 1; i <= 100_000; i++) progress.report(i, 100_000);
    expect(sent).toEqual([{ progress: 1, total: 100_000 }]);
    jest.advanceTimersByTime(PROGRESS_MIN_INTERVAL_MS);
    expect(sent).toEqual([{ progress: 1, total: 100_000 }, { progress: 100_000, total: 100_000 }]);
    jest.advanceTimersByTime(10 * PROGRESS_MIN_INTERVAL_MS);
    expect(sent).toHaveLength(2);
  });

  test('finish() sends what a window holds, and later reports are no-ops', () => {
    const { sent, progress } = reporter();
    progress.report(1);
    progress.report(2, undefined, 'two');
    progress.finish();
    expect(sent).toEqual([{ progress: 1 }, { progress: 2, message: 'two' }]);
    progress.report(3);
    jest.advanceTimersByTime(10 * PROGRESS_MIN_INTERVAL_MS);
    expect(sent).toHaveLength(2);
  });

  test('drops values that do not rise', () => {
    const { sent, progress } = reporter();
    progress.report(5);
    jest.advanceTimersByTime(PROGRESS_MIN_INTERVAL_MS);
    progress.report(5);
    progress.report(4);
    progress.finish();
    expect(sent).toEqual([{ progress: 5 }]);
  });

  test('drops unusable reports with one warning naming the first problem, and cuts a long message', () => {
    const { sent, warnings, progress } = reporter();
    progress.report(Number.NaN);
    progress.report(1, Number.POSITIVE_INFINITY);
    progress.report(1, 2, 42 as never);
    progress.report(1, 2, 'y'.repeat(PROGRESS_MESSAGE_MAX_CHARS + 5));
    expect(warnings).toEqual(['a progress report was dropped: progress must be a finite number, got NaN (later bad reports of this call are dropped silently)']);
    expect(sent).toHaveLength(1);
    expect(sent[0].message).toHaveLength(PROGRESS_MESSAGE_MAX_CHARS);
    expect(sent[0].message?.endsWith('y…')).toBe(true);
  });

  test('is a no-op without a progress token', () => {
    const progress = callProgress(undefined, () => {
      throw new Error('no warning expected');
    });
    progress.report(Number.NaN);
    progress.report(1);
    progress.finish();
    expect(jest.getTimerCount()).toBe(0);
  });
});
