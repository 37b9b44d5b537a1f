import type { Readable } from 'node:stream';
import { McpvisorError } from '../../protocol/errors';

/**
 * The next `length` bytes of a worker's bulk pipe (protocol/bulk-text.ts) as text. Rejects with
 * BAD_INPUT when the pipe ends or fails first (the worker died or wrote less than it announced).
 */
export function readBulk(stream: Readable | null | undefined, length: number): Promise<string> {
  if (!stream) return Promise.reject(new McpvisorError('BAD_INPUT', 'the worker announced a tool list on a pipe it does not have'));
  if (!Number.isSafeInteger(length) || length < 0) return Promise.reject(new McpvisorError('BAD_INPUT', `the worker announced a tool list of ${length} bytes`));
  return new Promise((resolve, reject) => {
    const done = () => {
      stream.off('readable', take);
      stream.off('end', ended);
      stream.off('close', ended);
      stream.off('error', failed);
    };
    const take = () => {
      // read(n) answers n bytes, or null until they are there (or what is left, once ended).
      const chunk = length === 0 ? Buffer.alloc(0) : (stream.read(length) as Buffer | null);
      if (chunk === null) return;
      done();
      if (chunk.length === length) resolve(chunk.toString('latin1'));
      else reject(new McpvisorError('BAD_INPUT', `the worker's tool list ended after ${chunk.length} of the ${length} bytes it announced`));
    };
    const ended = () => {
      done();
      reject(new McpvisorError('BAD_INPUT', `the worker's tool list pipe closed before the ${length} bytes it announced`));
    };
    const failed = (error: Error) => {
      done();
      reject(new McpvisorError('BAD_INPUT', `the worker's tool list pipe failed: ${error.message}`));
    };
    stream.on('readable', take);
    stream.on('end', ended);
    stream.on('close', ended);
    stream.on('error', failed);
    take();
  });
}
