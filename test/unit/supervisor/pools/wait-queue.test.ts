import { WaitQueue } from '../../../../supervisor/pools/wait-queue';

const FAR = () => performance.now() + 60_000;

/**
 * Drives a queue as a pool does: `held` slots taken without waiting, then calls queued in the
 * given order (`s1:a` is call `a` of session s1), then slots freed one at a time (each by a
 * session that held one). Returns the calls in the order they were let go, and how the others ended.
 */
async function served(given: { held?: string[]; queued: string[]; freedBy?: string[]; max?: number }): Promise<{ order: string[]; refused: string[] }> {
  const queue = new WaitQueue(given.max ?? 256);
  for (const tenant of given.held ?? []) queue.hold(tenant);
  const order: string[] = [];
  const refused: string[] = [];
  const waits = given.queued.map((name) => {
    const tenant = name.split(':')[0];
    return queue.wait(undefined, FAR(), 'the test pool', tenant).then(
      () => void order.push(name),
      (error: { code: string }) => void refused.push(`${name} ${error.code}`),
    );
  });
  await Promise.resolve();
  for (const tenant of given.freedBy ?? given.held ?? []) {
    queue.freed(tenant);
    await new Promise((resolve) => setImmediate(resolve));
  }
  queue.rejectAll(Object.assign(new Error('stop'), { code: 'SHUTTING_DOWN' }) as never);
  await Promise.all(waits);
  return { order, refused };
}

describe('WaitQueue order', () => {
  it.each([
    {
      case: 'one session (stdio): first come, first served',
      given: { held: ['', ''], queued: [':a', ':b', ':c'], freedBy: ['', '', ''] },
      want: [':a', ':b', ':c'],
    },
    {
      case: 'a quiet session queued behind a noisy one is served at the first freed slot',
      given: { held: ['noisy', 'noisy'], queued: ['noisy:1', 'noisy:2', 'noisy:3', 'quiet:1'], freedBy: ['noisy', 'noisy', 'noisy'] },
      want: ['quiet:1', 'noisy:1', 'noisy:2'],
    },
    {
      case: 'one slot: the quiet session goes next though the noisy one, freeing it, holds no more',
      given: { held: ['n'], queued: ['n:1', 'n:2', 'q:1'], freedBy: ['n', 'q', 'n'] },
      want: ['q:1', 'n:1', 'n:2'],
    },
    {
      case: 'a session\'s own calls stay in their order',
      given: { held: ['n', 'n'], queued: ['n:1', 'q:1', 'n:2', 'q:2', 'n:3'], freedBy: ['n', 'n', 'q', 'q', 'n'] },
      // n frees a slot: q holds none, so q:1; n frees another and holds none, q one: n:1; q frees: q:2.
      want: ['q:1', 'n:1', 'q:2', 'n:2', 'n:3'],
    },
    {
      case: 'sessions holding as many slots alternate, the longest waiting first',
      given: { held: ['a', 'b'], queued: ['a:1', 'a:2', 'b:1', 'b:2'], freedBy: ['a', 'b', 'a', 'b'] },
      want: ['a:1', 'b:1', 'a:2', 'b:2'],
    },
    {
      case: 'the session holding the fewest slots goes first, whoever freed the slot',
      given: { held: ['a', 'a', 'a', 'a', 'b'], queued: ['a:1', 'b:1', 'c:1'], freedBy: ['a', 'a', 'a'] },
      want: ['c:1', 'b:1', 'a:1'],
    },
  ])('$case', async ({ given, want }) => {
    expect((await served(given)).order).toEqual(want);
  });

  it.each([
    {
      case: 'a full queue refuses the session that fills it, at once',
      given: { queued: ['n:1', 'n:2', 'n:3'], max: 2, freedBy: [] },
      want: { order: [], refused: ['n:3 BUSY', 'n:1 SHUTTING_DOWN', 'n:2 SHUTTING_DOWN'] },
    },
    {
      case: 'a full queue makes room for a session with fewer waiting: the noisy one\'s newest call is refused',
      given: { held: ['n', 'n'], queued: ['n:1', 'n:2', 'n:3', 'q:1'], max: 3, freedBy: ['n'] },
      want: { order: ['q:1'], refused: ['n:3 BUSY', 'n:1 SHUTTING_DOWN', 'n:2 SHUTTING_DOWN'] },
    },
    {
      case: 'no room is made between sessions with as many waiting',
      given: { queued: ['a:1', 'b:1', 'c:1'], max: 2, freedBy: [] },
      want: { order: [], refused: ['c:1 BUSY', 'a:1 SHUTTING_DOWN', 'b:1 SHUTTING_DOWN'] },
    },
  ])('$case', async ({ given, want }) => {
    expect(await served(given)).toEqual(want);
  });
});

describe('WaitQueue slots, deadlines and cancellation', () => {
  it('counts the slot a released waiter holds until it is freed, and a dropped one without letting anyone go', async () => {
    const queue = new WaitQueue(8);
    queue.hold('a');
    const b = queue.wait(undefined, FAR(), 'p', 'b');
    const a = queue.wait(undefined, FAR(), 'p', 'a');
    queue.freed('a');
    await b;
    expect([queue.heldBy('a'), queue.heldBy('b'), queue.length]).toEqual([0, 1, 1]);
    queue.drop('b');
    expect([queue.heldBy('b'), queue.length]).toEqual([0, 1]);
    queue.release(1);
    await a;
    expect([queue.heldBy('a'), queue.length]).toEqual([1, 0]);
  });

  it('ends a wait at its deadline with TIMEOUT and on abort with CANCELLED, leaving the others in place', async () => {
    const queue = new WaitQueue(8);
    const controller = new AbortController();
    const late = queue.wait(undefined, performance.now() + 20, 'the p pool', 'a');
    const cancelled = queue.wait(controller.signal, FAR(), 'the p pool', 'b');
    const kept = queue.wait(undefined, FAR(), 'the p pool', 'c');
    controller.abort();
    await expect(cancelled).rejects.toMatchObject({ code: 'CANCELLED' });
    await expect(late).rejects.toMatchObject({ code: 'TIMEOUT', message: 'the call waited for a worker of the p pool until its deadline' });
    expect(queue.length).toBe(1);
    queue.release(1);
    await kept;
    expect(queue.length).toBe(0);
  });

  it('names the bound and why in the BUSY of a call that gave its place', async () => {
    const queue = new WaitQueue(1);
    const first = queue.wait(undefined, FAR(), 'the p pool', 'n');
    const second = queue.wait(undefined, FAR(), 'the p pool', 'n');
    await expect(second).rejects.toMatchObject({ code: 'BUSY', message: 'the p pool is busy (1 calls already waiting); try again later' });
    const quiet = queue.wait(undefined, FAR(), 'the p pool', 'q');
    // n has one waiting and q would have one: no room is made.
    await expect(quiet).rejects.toMatchObject({ code: 'BUSY' });
    queue.release(1);
    await first;
  });
});

describe('WaitQueue reservation (pools.reservedSlots)', () => {
  /** A queue counting `slots` slots, keeping `reservedSlots` while `open()` sessions are open. */
  const reserving = (slots: number, reservedSlots: number, open: () => number) => new WaitQueue(256, { reservedSlots, slots: () => slots, openSessions: open });
  const takes = (queue: WaitQueue, tenants: string[]) => tenants.map((tenant) => queue.take(tenant));
  const settled = () => new Promise((resolve) => setImmediate(resolve));

  it('keeps the last free slot from a session holding slots, for another open session holding none', () => {
    const queue = reserving(4, 1, () => 2);
    expect(takes(queue, ['a', 'a', 'a', 'a'])).toEqual([true, true, true, false]);
    expect(queue.admits('a')).toBe(false);
    expect(queue.admits('b')).toBe(true);
    expect(takes(queue, ['b', 'b'])).toEqual([true, false]);
    expect([queue.heldBy('a'), queue.heldBy('b')]).toEqual([3, 1]);
  });

  it.each([
    { case: 'one session open (stdio)', slots: 4, reservedSlots: 1, open: 1 },
    { case: 'reservedSlots 0', slots: 4, reservedSlots: 0, open: 2 },
    { case: 'a pool of one slot', slots: 1, reservedSlots: 1, open: 2 },
    { case: 'a pool with no more slots than reservedSlots', slots: 2, reservedSlots: 2, open: 3 },
  ])('keeps nothing with $case: one session takes every slot', ({ slots, reservedSlots, open }) => {
    const queue = reserving(slots, reservedSlots, () => open);
    expect(takes(queue, Array.from({ length: slots + 1 }, () => 'a'))).toEqual([...Array.from({ length: slots }, () => true), false]);
  });

  it('lets a lone session of a one-slot pool go when its slot frees (no deadlock)', async () => {
    const queue = reserving(1, 1, () => 2);
    expect(queue.take('a')).toBe(true);
    const next = queue.wait(undefined, FAR(), 'p', 'a');
    queue.freed('a');
    await next;
    expect(queue.heldBy('a')).toBe(1);
  });

  it('lets a session held back go when its own call ends, whoever else is open', async () => {
    const queue = reserving(2, 1, () => 5);
    expect(takes(queue, ['a', 'a'])).toEqual([true, false]);
    const next = queue.wait(undefined, FAR(), 'p', 'a');
    queue.freed('a');
    await next;
    expect(queue.heldBy('a')).toBe(1);
  });

  it('hands a freed slot to a session holding none first, then keeps none once every open session holds one', async () => {
    const queue = reserving(4, 1, () => 3);
    expect(takes(queue, ['a', 'a', 'a', 'b'])).toEqual([true, true, true, true]);
    const order: string[] = [];
    const waits = ['a:1', 'b:1', 'c:1'].map((name) => queue.wait(undefined, FAR(), 'p', name.split(':')[0]).then(() => void order.push(name)));
    queue.freed('a');
    await settled();
    // a and b hold slots, c none: c's call takes the freed slot.
    expect(order).toEqual(['c:1']);
    queue.freed('b');
    await settled();
    expect(order).toEqual(['c:1', 'b:1']);
    // Each of the 3 open sessions holds a slot: no one is left to keep the last one for.
    queue.freed('a');
    await Promise.all(waits);
    expect(order).toEqual(['c:1', 'b:1', 'a:1']);
  });

  it('keeps the reserved slot free as a held-back session\'s calls end, and hands it to a newcomer', async () => {
    const queue = reserving(4, 1, () => 2);
    expect(takes(queue, ['a', 'a', 'a'])).toEqual([true, true, true]);
    const order: string[] = [];
    const waits = ['a:1', 'a:2'].map((name) => queue.wait(undefined, FAR(), 'p', 'a').then(() => void order.push(name)));
    queue.freed('a');
    await settled();
    expect(order).toEqual(['a:1']);
    expect(queue.take('b')).toBe(true);
    queue.freed('b');
    await settled();
    expect(order).toEqual(['a:1']);
    queue.rejectAll(Object.assign(new Error('stop'), { code: 'SHUTTING_DOWN' }) as never);
    await Promise.allSettled(waits);
  });

  it('hands the kept slots to the held-back session once the other session closed, at its next freed slot', async () => {
    let open = 2;
    const queue = reserving(4, 1, () => open);
    expect(takes(queue, ['a', 'a', 'a', 'a'])).toEqual([true, true, true, false]);
    const order: string[] = [];
    const waits = ['a:1', 'a:2'].map((name) => queue.wait(undefined, FAR(), 'p', 'a').then(() => void order.push(name)));
    open = 1;
    queue.freed('a');
    await Promise.all(waits);
    expect(order).toEqual(['a:1', 'a:2']);
    expect(queue.heldBy('a')).toBe(4);
  });

  it('lets a pool that finds its own free worker ask `admits` before `hold`, counting held slots as `take` does', () => {
    const queue = reserving(3, 1, () => 2);
    queue.hold('a');
    expect(queue.admits('a')).toBe(true);
    queue.hold('a');
    expect(queue.admits('a')).toBe(false);
    queue.drop('a');
    expect(queue.admits('a')).toBe(true);
  });
});
