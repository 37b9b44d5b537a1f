import { Writable } from 'node:stream';
import pino from 'pino';
import { ThreadPool } from '../../../supervisor/pools/thread-pool';
import { errorCodeOf } from '../../../protocol/results';
import { fixture } from '../../helpers/processes';

/** The thread pool's cancel grace against a supervisor whose event loop was blocked. */
describe('ThreadPool cancel grace', () => {
  it('reads an answer that came while its event loop was blocked before terminating the thread as a runaway', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }));
    const pool = new ThreadPool({
      name: 'threads',
      module: fixture('test-thread-worker'),
      threads: 1,
      concurrency: 1,
      workerConfig: {},
      cancelGraceMs: 50,
      maxQueue: 10,
      maxOldGenerationSizeMb: 256,
      restart: { maxRestarts: 3, windowMs: 60_000, backoffBaseMs: 50, backoffMaxMs: 1000 },
      logger,
    });
    await pool.start();
    try {
      // A 200 ms CPU-bound call past its 20 ms deadline: answered TIMEOUT, its thread asked to stop.
      const answered = await pool.call({ tool: 'spin', arguments: { ms: 200 } }, { deadlineMs: 20 });
      expect(errorCodeOf(answered)).toBe('TIMEOUT');
      // The supervisor then blocks past the grace (a long GC pause, a heap snapshot) while the
      // call ends in its thread: when the loop runs again the grace timer is due and the
      // thread's answer waits to be read.
      const until = Date.now() + 1500;
      while (Date.now() < until) {
        // blocked
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(lines.filter((line) => line.includes('terminating the thread'))).toEqual([]);
      expect(pool.stats()).toMatchObject({ busy: 0, restarts: 0 });
      expect(await pool.call({ tool: 'echo', arguments: { text: 'after' } }, { deadlineMs: 2000 })).toMatchObject({ content: [{ type: 'text', text: 'after' }] });
    } finally {
      await pool.stop(1000);
    }
  }, 20_000);
});
