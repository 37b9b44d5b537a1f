import { PassThrough } from 'node:stream';
import { readBulk } from '../../../supervisor/pools/bulk-reader';
import { rejection } from '../../helpers/rejection';

describe('readBulk (a worker tool list on its own pipe)', () => {
  test('reads exactly the announced bytes, whether they came before or after the announcement, in any chunks', async () => {
    const early = new PassThrough();
    early.write('[{"a":1},');
    early.write('{"b":2}]tail');
    expect(await readBulk(early, 17)).toBe('[{"a":1},{"b":2}]');

    const late = new PassThrough();
    const reading = readBulk(late, 6);
    late.write('abc');
    setImmediate(() => late.write('defgh'));
    expect(await reading).toBe('abcdef');
  });

  test('a pipe that ends or fails before the announced bytes is BAD_INPUT naming how much came', async () => {
    const short = new PassThrough();
    const reading = readBulk(short, 10);
    short.end('abc');
    expect(await rejection(reading)).toMatchObject({ code: 'BAD_INPUT', message: "the worker's tool list ended after 3 of the 10 bytes it announced" });

    const broken = new PassThrough();
    const failing = readBulk(broken, 10);
    broken.destroy(new Error('EPIPE'));
    expect(await rejection(failing)).toMatchObject({ code: 'BAD_INPUT', message: expect.stringMatching(/pipe failed: EPIPE|closed before the 10 bytes/) });
  });

  test('no pipe, or a length that is not a byte count, is BAD_INPUT', async () => {
    expect(await rejection(readBulk(null, 3))).toMatchObject({ code: 'BAD_INPUT' });
    expect(await rejection(readBulk(new PassThrough(), -1))).toMatchObject({ code: 'BAD_INPUT', message: 'the worker announced a tool list of -1 bytes' });
    expect(await rejection(readBulk(new PassThrough(), 1.5))).toMatchObject({ code: 'BAD_INPUT' });
  });
});
