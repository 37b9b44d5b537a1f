import { FairTaskQueue, QUEUE_OPTIONS } from '../../../../supervisor/pools/fair-task-queue';

type Task = { name: string; [QUEUE_OPTIONS]: { session: string } | null };
const task = (name: string): Task => ({ name, [QUEUE_OPTIONS]: name.includes(':') ? { session: name.split(':')[0] } : null });

/** Pushes the tasks, then shifts them all; `running` counts of each session, as the pool would see them. */
function order(pushed: string[], running: Record<string, number> = {}): string[] {
  const queue = new FairTaskQueue((session) => running[session] ?? 0);
  for (const name of pushed) queue.push(task(name) as never);
  const out: string[] = [];
  for (let i = 0; i < 100 && queue.size > 0; i++) {
    const next = queue.shift() as unknown as Task;
    out.push(next.name);
    const session = next[QUEUE_OPTIONS]?.session ?? '';
    running[session] = (running[session] ?? 0) + 1;
  }
  return out;
}

describe('FairTaskQueue (a thread pool\'s queue)', () => {
  it.each([
    { case: 'tasks without a session: first in, first out', pushed: ['a', 'b', 'c'], running: {} as Record<string, number>, want: ['a', 'b', 'c'] },
    { case: 'a quiet session goes before a noisy one that runs calls', pushed: ['n:1', 'n:2', 'q:1'], running: { n: 2 }, want: ['q:1', 'n:1', 'n:2'] },
    { case: 'sessions running as many alternate, each in its own order', pushed: ['a:1', 'a:2', 'a:3', 'b:1', 'b:2'], running: {}, want: ['a:1', 'b:1', 'a:2', 'b:2', 'a:3'] },
  ])('$case', ({ pushed, running, want }) => {
    expect(order(pushed, running)).toEqual(want);
  });

  it('puts a task piscina could not place back first in its session\'s line, and removes a task on request', () => {
    const queue = new FairTaskQueue(() => 0);
    const [a1, a2, b1] = [task('a:1'), task('a:2'), task('b:1')];
    for (const t of [a1, a2, b1]) queue.push(t as never);
    const first = queue.shift();
    expect(first).toBe(a1);
    queue.unshift(first!);
    queue.remove(b1 as never);
    expect([queue.size, queue.waiting('a'), queue.waiting('b')]).toEqual([2, 2, 0]);
    expect([queue.shift(), queue.shift(), queue.shift()]).toEqual([a1, a2, null]);
  });

  it('takes a task it gave out and got back by push (piscina\'s way, all threads busy) as first of its session', () => {
    const queue = new FairTaskQueue(() => 0);
    const [a1, a2] = [task('a:1'), task('a:2')];
    queue.push(a1 as never);
    queue.push(a2 as never);
    queue.push(queue.shift()!);
    expect([queue.shift(), queue.shift()]).toEqual([a1, a2]);
  });
});
