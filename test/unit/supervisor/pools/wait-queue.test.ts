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
