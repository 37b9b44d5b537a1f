import type { ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import { OUTPUT_WINDOW_MAX_CHARS, OutputLines } from '../../protocol/output-lines';

/**
 * Reads a worker process's stdout and stderr (pipes, spare-worker.ts) into log lines of `log`,
 * which names the pool (the toolset), the worker and its pid: stdout at info, stderr at warn,
 * bounded as output-lines.ts says. Both pipes are always read, so a worker that writes without
 * end never blocks on a full pipe; what is over the bound is dropped and counted.
 */
export function captureOutput(child: ChildProcess, log: Logger): OutputLines {
  const lines = new OutputLines({
    line: (stream, text, cutChars) => log[stream === 'stderr' ? 'warn' : 'info']({ stream, ...(cutChars > 0 ? { cutChars } : {}) }, text),
    dropping: (windowMs) => log.warn(`the worker wrote over ${OUTPUT_WINDOW_MAX_CHARS} characters of output in ${windowMs} ms: dropping the rest until the ${windowMs} ms are over`),
    dropped: (chars) => log.warn({ droppedChars: chars }, `dropped ${chars} characters of the worker's output`),
  });
  for (const stream of ['stdout', 'stderr'] as const) {
    const pipe = child[stream];
    if (!pipe) continue;
    pipe.setEncoding('utf8');
    pipe.on('data', (chunk: string) => lines.write(stream, chunk));
    // A grandchild holding the pipe may outlive the worker; its errors are not ours to throw.
    pipe.on('error', () => undefined);
  }
  child.once('close', () => lines.end());
  return lines;
}
