import { RateLimiter } from '../../../workers/web/rate-limiter';

describe('RateLimiter', () => {
  it('lets a burst of `limit` through at once and makes the next caller wait for a refill', async () => {
    const limiter = new RateLimiter(2, 200);
    const started = Date.now();
    await limiter.acquire();
    await limiter.acquire();
    expect(limiter.tryAcquire()).toBe(false);
    expect(limiter.getStatus()).toMatchObject({ requests: 2, limit: 2, interval: 200 });
    await limiter.acquire();
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
  });

  it('serves waiters in order', async () => {
    const limiter = new RateLimiter(1, 50);
    const order: number[] = [];
    await Promise.all([1, 2, 3, 4].map((n) => limiter.acquire().then(() => order.push(n))));
    expect(order).toEqual([1, 2, 3, 4]);
  });

  it.each([
    { case: 'a quiet key behind a noisy one gets the next token', calls: ['n1', 'n2', 'n3', 'n4', 'q1'], want: ['n1', 'q1', 'n2', 'n3', 'n4'] },
    { case: 'keys take turns, each in its own order', calls: ['a1', 'a2', 'a3', 'b1', 'b2', 'c1'], want: ['a1', 'b1', 'c1', 'a2', 'b2', 'a3'] },
    { case: 'one key (no key given: the same) is first come, first served', calls: ['x1', 'x2', 'x3'], want: ['x1', 'x2', 'x3'] },
  ])('serves waiters of different keys round-robin: $case', async ({ calls, want }) => {
    const limiter = new RateLimiter(1, 20);
    await limiter.acquire();
    const order: string[] = [];
    await Promise.all(calls.map((name) => limiter.acquire({ key: name[0] }).then(() => order.push(name))));
    expect(order).toEqual(want);
  });

  it('judges a keyed caller\'s wait by its turn: a new key waits one token, a noisy key\'s next call all of them', async () => {
    const limiter = new RateLimiter(1, 1000);
    await limiter.acquire();
    const controller = new AbortController();
    const noisy = [1, 2, 3].map(() => limiter.acquire({ key: 'n', signal: controller.signal }).catch(() => undefined));
    // The quiet key's turn comes after n's first: 2 tokens, within 2,500 ms.
    const quiet = limiter.acquire({ key: 'q', signal: controller.signal, maxWaitMs: 2500 }).catch((error: Error) => error);
    await expect(limiter.acquire({ key: 'n', maxWaitMs: 2500 })).rejects.toMatchObject({ name: 'RateLimitWaitTooLong', waiting: 4 });
    await expect(limiter.acquire({ key: 'r', maxWaitMs: 2500 })).rejects.toMatchObject({ name: 'RateLimitWaitTooLong', waiting: 2 });
    controller.abort(new Error('done'));
    await Promise.all(noisy);
    expect(await quiet).toMatchObject({ message: 'done' });
    expect(limiter.getStatus().waiting).toBe(0);
  });

  it('takes an aborted caller out of the line with the signal reason', async () => {
    const limiter = new RateLimiter(1, 10_000);
    await limiter.acquire();
    const controller = new AbortController();
    const waiting = limiter.acquire({ signal: controller.signal });
    expect(limiter.getStatus().waiting).toBe(1);
    controller.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    expect(limiter.getStatus().waiting).toBe(0);
    await expect(limiter.acquire({ signal: AbortSignal.abort(new Error('early')) })).rejects.toThrow('early');
  });

  it('takes a fractional limit as a slower rate: 0.5 per 100 ms is one at once, then one per 200 ms', async () => {
    const limiter = new RateLimiter(0.5, 100);
    const started = Date.now();
    await limiter.acquire();
    expect(limiter.tryAcquire()).toBe(false);
    expect(limiter.getStatus()).toMatchObject({ requests: 1, limit: 0.5, interval: 100 });
    await limiter.acquire();
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    await limiter.acquire();
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
  });

  it('lets the whole tokens of a fractional limit above one go at once: 1.5 per 300 ms is one now, the next 200 ms later', async () => {
    const limiter = new RateLimiter(1.5, 300);
    const started = Date.now();
    await limiter.acquire();
    await limiter.acquire();
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    expect(Date.now() - started).toBeLessThan(250);
  });

  it('waits for a refill past setTimeout\'s range (a tiny fractional rate) with one timer, not a 1 ms spin', async () => {
    // Node turns a delay past 2^31-1 ms into 1 ms: the limiter then re-armed its timer every ms.
    const timers = jest.spyOn(global, 'setTimeout');
    try {
      const limiter = new RateLimiter(1e-7, 2000); // one per ~230 days
      await limiter.acquire();
      const controller = new AbortController();
      const waiting = limiter.acquire({ signal: controller.signal });
      await new Promise((resolve) => setTimeout(resolve, 50));
      controller.abort(new Error('done waiting'));
      await expect(waiting).rejects.toThrow('done waiting');
      const armed = timers.mock.calls.filter(([, ms]) => typeof ms === 'number' && ms > 50);
      expect(armed.length).toBe(1);
      expect(armed[0][1]).toBeLessThanOrEqual(2 ** 31 - 1);
    } finally {
      timers.mockRestore();
    }
  });

  it('refuses a limit or interval that is not positive', () => {
    expect(() => new RateLimiter(0, 1000)).toThrow(RangeError);
    expect(() => new RateLimiter(1, -1)).toThrow(/positive limit and interval/);
  });
});

describe('RateLimiter and a wall clock that jumps (NTP after a VM resumes, `date -s`)', () => {
  const HOUR_MS = 3_600_000;
  // Modern fake timers: setSystemTime moves Date.now() only; performance.now() moves with the timers.
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('refills by the time that passed when the clock is stepped back an hour, not by minus an hour', async () => {
    const limiter = new RateLimiter(2, 1000);
    expect([limiter.tryAcquire(), limiter.tryAcquire(), limiter.tryAcquire()]).toEqual([true, true, false]);
    jest.setSystemTime(Date.now() - HOUR_MS);
    jest.advanceTimersByTime(1000);
    expect(limiter.getStatus()).toMatchObject({ requests: 0 });
    expect(limiter.tryAcquire()).toBe(true);
    // A caller that may wait 1 s is served within it, not told its token is an hour away.
    expect(limiter.tryAcquire()).toBe(true);
    const next = limiter.acquire({ maxWaitMs: 1000 });
    await jest.advanceTimersByTimeAsync(500);
    await expect(next).resolves.toBeUndefined();
  });

  it('gives no more than the time that passed when the clock is stepped forward an hour', () => {
    const limiter = new RateLimiter(1, 1000);
    expect(limiter.tryAcquire()).toBe(true);
    jest.setSystemTime(Date.now() + HOUR_MS);
    expect(limiter.tryAcquire()).toBe(false);
    jest.advanceTimersByTime(1000);
    expect(limiter.tryAcquire()).toBe(true);
  });
});
