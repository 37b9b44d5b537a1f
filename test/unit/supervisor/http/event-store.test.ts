import { EventStore } from '../../../../supervisor/http/event-store';
import { ResumableStreams, type NumberedStream } from '../../../../supervisor/http/resumable-streams';

const limits = { maxEvents: 3, maxBytes: 100, eventTtlMs: 1000 };
const frame = (text: string) => `data: ${text}\n\n`;

describe('EventStore', () => {
  test('replays the events of one stream after an event, not those of another stream', () => {
    const store = new EventStore(limits);
    store.add(1, 1, frame('a1'), undefined, 0);
    store.add(2, 1, frame('b1'), undefined, 0);
    store.add(1, 2, frame('a2'), 7, 0);
    expect(store.after(1, 1, 0)).toEqual({ frames: [frame('a2')] });
    expect(store.after(2, 0, 0)).toEqual({ frames: [frame('b1')] });
  });

  test.each([
    { given: 'a fourth event past maxEvents (3)', add: [frame('1'), frame('2'), frame('3'), frame('4')], bound: 'maxEvents', kept: 3 },
    { given: 'an event that takes the bytes past maxBytes (100)', add: [frame('x'.repeat(45)), frame('y'.repeat(45))], bound: 'maxBytes', kept: 1 },
    { given: 'an event larger than maxBytes, never kept', add: [frame('z'.repeat(200))], bound: 'maxBytes', kept: 0 },
  ])('drops the oldest for $given and reports a dropped answer with its bound', ({ add, bound, kept }) => {
    const store = new EventStore(limits);
    add.forEach((text, i) => store.add(1, i + 1, text, i === 0 ? 'first' : undefined, 0));
    expect(store.size).toBe(kept);
    expect(store.bytes).toBeLessThanOrEqual(limits.maxBytes);
    expect(store.after(1, 0, 0).lost).toEqual({ answers: ['first'], bound });
    // A client that read past the dropped event is owed nothing.
    expect(store.after(1, 1, 0).lost).toBeUndefined();
  });

  test('forgets events older than eventTtlMs, and what a resume acknowledges', () => {
    const store = new EventStore(limits);
    store.add(1, 1, frame('old'), undefined, 0);
    store.add(1, 2, frame('new'), undefined, 600);
    store.add(1, 3, frame('newer'), undefined, 700);
    expect(store.after(1, 0, 1500).frames).toEqual([frame('new'), frame('newer')]);
    store.acknowledge(1, 2);
    expect(store.size).toBe(1);
    expect(store.after(1, 0, 1500).frames).toEqual([frame('newer')]);
  });
});

describe('EventStore with the budget of every session (maxTotalBytes)', () => {
  test('drops its own oldest, then does not keep a new event past the shared bound, never touching another session\'s', () => {
    const total = { bytes: 0, maxTotalBytes: 100 };
    const a = new EventStore({ maxEvents: 10, maxBytes: 100, eventTtlMs: 1000 }, total);
    const b = new EventStore({ maxEvents: 10, maxBytes: 100, eventTtlMs: 1000 }, total);
    a.add(1, 1, frame('a'.repeat(52)), undefined, 0);
    b.add(1, 1, frame('b'.repeat(52)), 'answer', 0);
    expect([a.size, b.size, total.bytes]).toEqual([1, 0, 60]);
    expect(b.after(1, 0, 0).lost).toEqual({ answers: ['answer'], bound: 'maxTotalBytes' });
    b.add(1, 2, frame('b'.repeat(22)), undefined, 0);
    b.add(1, 3, frame('c'.repeat(22)), undefined, 0);
    // b's second event makes room by dropping b's own first, not a's.
    expect([a.size, b.size, total.bytes]).toEqual([1, 1, 90]);
    a.dispose();
    expect(total.bytes).toBe(30);
    b.add(1, 4, frame('d'.repeat(52)), undefined, 0);
    expect([b.size, total.bytes]).toEqual([2, 90]);
  });
});

describe('ResumableStreams', () => {
  const stream = (): NumberedStream => ({ seq: 0, open: new Set([1]) });
  const session = 'abcdef12-3456-7890-abcd-ef1234567890';

  test('numbers events <tag>.<stream>.<seq> and primes a 2025-11-25 stream only', () => {
    const streams = new ResumableStreams({ enabled: true, legacySse: false, resumeWindowMs: 1000, maxTotalBytes: 10_000, ...limits }, session);
    const one = stream();
    expect(streams.open(one, '2025-11-25')).toBe('id: abcdef12.1.0\ndata: \n\n');
    expect(streams.open(stream(), '2025-06-18')).toBeUndefined();
    expect(streams.frame(one as NumberedStream & { key: number }, { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } }).toString()).toMatch(/^id: abcdef12\.1\.1\n/);
  });

  test.each([
    { given: 'made up', id: 'nonsense' },
    { given: 'another session', id: 'ffffffff.1.0' },
    { given: 'a stream never opened', id: 'abcdef12.9.0' },
    { given: 'an event not sent yet', id: 'abcdef12.1.5' },
  ])('refuses an id of $given with 400 naming it', ({ id }) => {
    const streams = new ResumableStreams({ enabled: true, legacySse: false, resumeWindowMs: 1000, maxTotalBytes: 10_000, ...limits }, session);
    streams.open(stream(), '2025-11-25');
    expect(streams.resume(id)).toEqual({ status: 400, message: expect.stringContaining(`Last-Event-ID ${JSON.stringify(id)} is not an event id of this session`) });
  });

  test('replays an ended stream once, then answers 410', () => {
    const streams = new ResumableStreams({ enabled: true, legacySse: false, resumeWindowMs: 1000, maxTotalBytes: 10_000, ...limits }, session);
    const one = stream() as NumberedStream & { key: number };
    streams.open(one, '2025-11-25');
    const answer = streams.frame(one, { jsonrpc: '2.0', id: 1, result: {} });
    one.open.clear();
    streams.ended(one);
    expect(streams.resume('abcdef12.1.0')).toEqual({ status: 200, frames: answer, stream: undefined });
    expect(streams.resume('abcdef12.1.1')).toMatchObject({ status: 410 });
  });

  test('keeps for a resume the very bytes the stream writes, not a second copy of a large answer', () => {
    const streams = new ResumableStreams({ enabled: true, legacySse: false, resumeWindowMs: 1000, maxEvents: 10, maxBytes: 1_000_000, maxTotalBytes: 1_000_000, eventTtlMs: 60_000 }, session);
    const one = stream() as NumberedStream & { key: number };
    streams.open(one, '2025-11-25');
    const text = 'x'.repeat(200_000);
    const frame = streams.frame(one, { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text }] } });
    expect(Buffer.isBuffer(frame)).toBe(true);
    expect(frame.toString()).toBe(`id: abcdef12.1.1\nevent: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text }] } })}\n\n`);
    const resumed = streams.resume('abcdef12.1.0');
    expect(resumed.status === 200 && resumed.frames).toBe(frame);
  });

  test('lets a stream written out whole go after a short grace, not after eventTtlMs', () => {
    const long = { enabled: true, legacySse: false, resumeWindowMs: 1000, maxEvents: 10, maxBytes: 1000, maxTotalBytes: 10_000, eventTtlMs: 300_000 };
    const streams = new ResumableStreams(long, session);
    const [read, cut] = [stream() as NumberedStream & { key: number }, stream() as NumberedStream & { key: number }];
    for (const one of [read, cut]) {
      streams.open(one, '2025-11-25');
      streams.frame(one, { jsonrpc: '2.0', id: 1, result: {} });
      one.open.clear();
      streams.ended(one);
    }
    streams.delivered(read, 0);
    streams.sweep(5_000);
    expect(streams.resume('abcdef12.1.0')).toMatchObject({ status: 200 });
    streams.sweep(10_001);
    expect(streams.resume('abcdef12.1.0')).toMatchObject({ status: 410 });
    // The other one's answer may never have arrived: it stays for eventTtlMs.
    expect(streams.resume('abcdef12.2.0')).toMatchObject({ status: 200 });
  });
});
