import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { progressNotifier } from '../../../supervisor/progress-notifier';

describe('progressNotifier (heartbeat and a tool\'s reports merged for one call)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function notifier() {
    const sent: Array<Record<string, unknown>> = [];
    const backwards: Array<[number, number]> = [];
    const notify = async (notification: ServerNotification) => void sent.push(notification.params as Record<string, unknown>);
    const it = progressNotifier({ name: 'crawl', token: 't', notify, intervalMs: 200, onBackwards: (value, last) => backwards.push([value, last]) });
    return { sent, backwards, it };
  }

  test("heartbeats while the tool is silent, then a hair above the tool's reports after a silent interval, always rising", () => {
    const { sent, backwards, it } = notifier();
    jest.advanceTimersByTime(400);
    expect(sent.map((params) => params.message)).toEqual(['crawl: still running after 0 s', 'crawl: still running after 0 s']);
    const lastBeat = sent[1].progress as number;
    // Below what the client has seen: dropped, said once.
    it.onProgress({ progress: 0.1, total: 1 });
    it.onProgress({ progress: 0.2, total: 1 });
    expect(backwards).toEqual([[0.1, lastBeat]]);
    jest.advanceTimersByTime(100);
    it.onProgress({ progress: 3, total: 10, message: 'page 3' });
    // The tick 100 ms after the report is skipped; the next comes after a silent interval.
    jest.advanceTimersByTime(100);
    expect(sent.slice(3)).toEqual([]);
    expect(sent[2]).toEqual({ progressToken: 't', progress: 3, total: 10, message: 'page 3' });
    jest.advanceTimersByTime(200);
    expect(sent.slice(3)).toEqual([{ progressToken: 't', progress: 3 + 3e-9, total: 10, message: 'crawl: still running after 1 s' }]);
    it.onProgress({ progress: 4, total: 10 });
    it.stop();
    it.onProgress({ progress: 5 });
    jest.advanceTimersByTime(1000);
    expect(sent.map((params) => params.progress)).toEqual([sent[0].progress, lastBeat, 3, 3 + 3e-9, 4]);
  });
});
