import { KeyedRateLimiter } from '../../../../supervisor/http/rate-limit';

describe('KeyedRateLimiter', () => {
  it('allows the burst, then says how long to wait, and refills over time', () => {
    const limiter = new KeyedRateLimiter(2, 3);
    expect([0, 0, 0].map(() => limiter.take('a', 1000))).toEqual([0, 0, 0]);
    expect(limiter.take('a', 1000)).toBe(1);
    // Another key has its own bucket.
    expect(limiter.take('b', 1000)).toBe(0);
    // Half a second at 2 per second: one token back.
    expect(limiter.take('a', 1500)).toBe(0);
    expect(limiter.take('a', 1500)).toBe(1);
  });

  it('forgets the buckets that are full again, so keys gone quiet (closed sessions) are not remembered', () => {
    const limiter = new KeyedRateLimiter(10, 20); // full again 2 s after the last request
    for (let i = 0; i < 1000; i++) limiter.take(`session-${i}`, 0);
    expect(limiter.size).toBe(1000);
    limiter.take('late', 1000);
    expect(limiter.size).toBe(1001);
    // 2 s on, the first thousand are full again: a new key's arrival drops them.
    limiter.take('later', 2500);
    expect(limiter.size).toBe(2);
    // A bucket in use is kept, with what it has spent.
    for (let i = 0; i < 20; i++) limiter.take('busy', 2600);
    limiter.take('new', 2700);
    expect(limiter.take('busy', 2700)).toBe(0);
    expect(limiter.take('busy', 2700)).toBe(1);
  });

  it('bounds the keys it remembers under a flood of new ones', () => {
    const limiter = new KeyedRateLimiter(1, 5, 100);
    for (let i = 0; i < 1000; i++) limiter.take(`client-${i}`, 0);
    expect(limiter.size).toBe(100);
  });
});
