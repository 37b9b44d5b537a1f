import fs, { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { LogDestination } from '../../../supervisor/log-destination';
import { tempDir } from '../../helpers/temp';

const flushed = (destination: LogDestination) => new Promise<void>((resolve) => destination.flush(() => resolve()));

describe('LogDestination', () => {
  it('drops the lines a full disk refuses without throwing, and its exit flush returns at once', async () => {
    // /dev/full refuses every write with ENOSPC; pino's destination made that an uncaught
    // exception, then retried it forever in its exit handler.
    const fd = openSync('/dev/full', 'w');
    try {
      const destination = new LogDestination(fd);
      for (let i = 0; i < 5; i += 1) expect(destination.write(`{"msg":"line ${i}"}\n`)).toBe(true);
      await flushed(destination);
      // The first goes out at once, the second waits: flushSync writes that one, and fails at once.
      destination.write('{"msg":"in flight"}\n');
      destination.write('{"msg":"last"}\n');
      destination.flushSync();
      // The write in flight ends before the descriptor is closed: its number is the next test's file.
      await flushed(destination);
    } finally {
      closeSync(fd);
    }
  });

  it('writes the lines it holds past the reader’s pace up to its bound, and counts the rest in one line first', async () => {
    const file = path.join(tempDir('mcpvisor-log-'), 'log');
    const fd = openSync(file, 'w');
    try {
      const destination = new LogDestination(fd, { maxBufferedBytes: 40 });
      // Written at once: the first line is in flight, the second waits, the last three pass the bound.
      for (const n of [1, 2, 3, 4, 5]) destination.write(`{"msg":"line ${n} ....."}\n`);
      await flushed(destination);
      destination.write('{"msg":"after"}\n');
      await flushed(destination);
      const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { msg: string }).msg);
      expect(lines).toEqual(['line 1 .....', 'line 2 .....', '3 log line(s) dropped: the log reader is not keeping up', 'after']);
    } finally {
      closeSync(fd);
    }
  });

  it('tells of lines a failed write lost before the lines queued behind that write, when the next write gets through', async () => {
    const file = path.join(tempDir('mcpvisor-log-'), 'log');
    const fd = openSync(file, 'w');
    const realWrite = fs.write;
    // The first write fails with ENOSPC after the next line was queued (the disk was full); the
    // disk has room by the time that line goes. Found by the full-disk test of the built server.
    let fail = true;
    const spy = jest.spyOn(fs, 'write').mockImplementation(((...args: unknown[]) => {
      if (!fail) return (realWrite as (...a: unknown[]) => void)(...args);
      fail = false;
      const callback = args[args.length - 1] as (error: NodeJS.ErrnoException) => void;
      setImmediate(() => callback(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })));
    }) as typeof fs.write);
    try {
      const destination = new LogDestination(fd);
      destination.write('{"msg":"lost"}\n');
      destination.write('{"msg":"queued behind it"}\n');
      await flushed(destination);
      destination.write('{"msg":"after"}\n');
      await flushed(destination);
      const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { msg: string }).msg);
      expect(lines).toEqual(['1 log line(s) dropped: ENOSPC writing the log', 'queued behind it', 'after']);
    } finally {
      spy.mockRestore();
      closeSync(fd);
    }
  });
});
