import { clientKey, KeyedRateLimiter } from '../../../../supervisor/http/rate-limit';

describe('KeyedRateLimiter', () => {
  it('refills by the time that passed when the wall clock is stepped back an hour (NTP, `date -s`): no hour of 429s', () => {
    jest.useFakeTimers(); // setSystemTime moves Date.now() only; performance.now() moves with the timers
    try {
      const limiter = new KeyedRateLimiter(2, 2);
      expect([limiter.take('a'), limiter.take('a'), limiter.take('a')]).toEqual([0, 0, 1]);
      jest.setSystemTime(Date.now() - 3_600_000);
      jest.advanceTimersByTime(500);
      expect(limiter.take('a')).toBe(0);
      // Stepped forward: no more than the half second that passed.
      jest.setSystemTime(Date.now() + 3_600_000);
      expect(limiter.take('a')).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });

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

describe('clientKey', () => {
  it('gives every address of an IPv6 /64 one key, in any spelling', () => {
    const key = clientKey('2001:db8:1:2::1');
    expect(key).toBe('2001:db8:1:2::/64');
    for (const address of ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0db8:0001:0002:0:0:0:9', '2001:db8:1:2::7%eth0', '2001:db8:1:2::1.2.3.4']) {
      expect(clientKey(address)).toBe(key);
    }
    expect(clientKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('1:2:3:4:5:6:7:8')).toBe('1:2:3:4::/64');
  });

  it('keys an IPv4-mapped address by its IPv4 address, not by the /64 every IPv4 client shares', () => {
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::FFFF:cb00:7107')).toBe('203.0.113.7');
    expect(clientKey('::ffff:203.0.113.8')).toBe('203.0.113.8');
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    // Not mapped: the NAT64 and IPv4-compatible forms are IPv6 addresses like any other.
    expect(clientKey('64:ff9b::203.0.113.7')).toBe('64:ff9b:0:0::/64');
    expect(clientKey('::203.0.113.7')).toBe('0:0:0:0::/64');
  });

  it('leaves what is not an IP address as it is', () => {
    expect(clientKey(undefined)).toBeUndefined();
    expect(clientKey('unknown')).toBe('unknown');
  });
});
