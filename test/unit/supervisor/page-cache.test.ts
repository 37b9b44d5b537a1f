import { PageCache } from '../../../supervisor/toolsets/page-cache';

const page = (id: string) => ({ id });

function cache(options: Partial<ConstructorParameters<typeof PageCache>[0]> = {}) {
  let now = 1_000;
  const made = new PageCache<{ id: string }>({ ttlMs: 100, maxBytes: 1000, maxEntryBytes: 400, now: () => now, ...options });
  return { cache: made, advance: (ms: number) => (now += ms) };
}

describe('PageCache', () => {
  it('serves a value until its ttl has passed since it was stored, reads not extending it', () => {
    const { cache: c, advance } = cache();
    c.set('a', page('1'), 10);
    advance(99);
    expect(c.get('a')).toEqual(page('1'));
    advance(1);
    expect(c.get('a')).toBeUndefined();
    expect(c.bytes).toBe(0);
    // Gone, but its id is remembered, to tell a page fetched again from the one before.
    expect(c.lastId('a')).toBe('1');
  });

  it('drops the least recently read values first to stay within maxBytes', () => {
    const { cache: c } = cache();
    c.set('a', page('a'), 400);
    c.set('b', page('b'), 400);
    c.get('a');
    c.set('c', page('c'), 400);
    expect([c.has('a'), c.has('b'), c.has('c')]).toEqual([true, false, true]);
    expect(c.bytes).toBe(800);
  });

  it('keeps no value over maxEntryBytes, and drops the older version the key held', () => {
    const { cache: c } = cache();
    c.set('a', page('1'), 100);
    expect(c.set('a', page('2'), 401)).toBe(false);
    expect(c.get('a')).toBeUndefined();
    expect(c.lastId('a')).toBe('2');
    expect(c.bytes).toBe(0);
  });

  it('replaces a value under the same key without counting it twice', () => {
    const { cache: c } = cache();
    c.set('a', page('1'), 300);
    c.set('a', page('2'), 300);
    expect(c.bytes).toBe(300);
    expect(c.get('a')).toEqual(page('2'));
  });

  it('remembers the last ids of at most maxRemembered keys', () => {
    const { cache: c } = cache({ maxRemembered: 2 });
    for (const key of ['a', 'b', 'c']) c.remember(key, key);
    expect([c.lastId('a'), c.lastId('b'), c.lastId('c')]).toEqual([undefined, 'b', 'c']);
  });

  it('lets expired values go by itself: an idle server holds no pages nobody can read any more', () => {
    jest.useFakeTimers();
    try {
      const c = new PageCache<{ id: string }>({ ttlMs: 100, maxBytes: 1000, maxEntryBytes: 400, now: () => performance.now() });
      c.set('a', page('a'), 300);
      jest.advanceTimersByTime(50);
      c.set('b', page('b'), 300);
      jest.advanceTimersByTime(51);
      expect(c.bytes).toBe(300);
      jest.advanceTimersByTime(50);
      expect(c.bytes).toBe(0);
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });

  it('keeps a value its ttlMs by the time that passed when the wall clock jumps (NTP, `date -s`), either way', () => {
    jest.useFakeTimers(); // setSystemTime moves Date.now() only; performance.now() moves with the timers
    try {
      const c = new PageCache<{ id: string }>({ ttlMs: 1000, maxBytes: 1000, maxEntryBytes: 400 });
      c.set('a', page('a'), 300);
      jest.setSystemTime(Date.now() + 3_600_000);
      expect(c.get('a')).toEqual(page('a'));
      jest.setSystemTime(Date.now() - 7_200_000);
      jest.advanceTimersByTime(1001);
      expect(c.get('a')).toBeUndefined();
      expect(c.bytes).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });

  it('drops the values of a group together (the pages of a closed session), and only those, their ids still remembered', () => {
    const { cache: c } = cache();
    c.set('a', page('a'), 100, 's1');
    c.set('b', page('b'), 200, 's1');
    c.set('c', page('c'), 300, 's2');
    // A value dropped before (replaced without a group) is no longer the group's.
    c.set('b', page('b2'), 50);
    expect(c.deleteGroup('s1')).toEqual({ count: 1, bytes: 100 });
    expect([c.has('a'), c.has('b'), c.has('c')]).toEqual([false, true, true]);
    expect(c.bytes).toBe(350);
    expect(c.lastId('a')).toBe('a');
    expect(c.deleteGroup('s1')).toEqual({ count: 0, bytes: 0 });
    expect(c.deleteGroup('s2')).toEqual({ count: 1, bytes: 300 });
    expect(c.bytes).toBe(50);
  });
});
