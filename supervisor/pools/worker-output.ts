import type { ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import { OUTPUT_WINDOW_MAX_CHARS, OutputLines } from '../../protocol/output-lines';

/**
 * Reads a worker process's stdout and stderr (pipes, spare-worker.ts) into log lines of `log`,
 * which names the pool (the toolset), the worker and its pid: stdout at info, stderr at warn,
 * bounded as output-lines.ts says. Both pipes are always read, so a worker that writes without
 * end never blocks on a full pipe; what is over the bound is dropped and counted.
 */
export function captureOutput(child: ChildProcess, log: Logger): WorkerOutput {
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
  // Its two pipes, not the child's 'close', which waits for the bulk pipe too (read only for a large list).
  const pipesClosed = Promise.all([child.stdout, child.stderr].map((pipe) => (pipe && !pipe.closed ? new Promise((resolve) => pipe.once('close', resolve)) : undefined)));
  void pipesClosed.then(() => lines.end());
  const closed = new Promise<void>((resolve) => {
    void pipesClosed.then(() => resolve());
    // A grandchild may hold the pipes open: the exit is enough after a moment.
    child.once('exit', () => setTimeout(resolve, CLOSE_WAIT_MS).unref());
  });
  return { lines, closed };
}

export interface WorkerOutput {
  lines: OutputLines;
  /** Resolves once its pipes have closed (all it wrote is read), or CLOSE_WAIT_MS after its exit. */
  closed: Promise<void>;
}

const CLOSE_WAIT_MS = 300;

/**
 * Why a worker ended before it was ready, for the start's error. Its exit may be seen before its
 * stderr is read, so this is asked once `closed`; Node's own message (a syntax error, a module
 * not found, what its init threw outside runWorker) is taken from the last lines of stderr.
 * It said only "exited with exit code 1 before it was ready", the reason in the raw stderr above.
 */
export function exitedBeforeReady(pool: string, module: string, reason: string, code: number | null, output: WorkerOutput): string {
  const said = nodeError(output.lines.stderrTail);
  const why = code === 0 ? `: ${module} ended without calling runWorker(init) from 'mcpvisor'` : said ? `: ${said}` : '';
  return `worker of ${pool} exited with ${reason} before it was ready${why}`;
}

/** `SyntaxError: Unexpected token ';' (at /srv/mine.js:3)` from Node's report of an uncaught error, or undefined. */
function nodeError(tail: readonly string[]): string | undefined {
  const at = tail.findIndex((line) => ERROR_LINE.test(line));
  if (at < 0) return undefined;
  // Node prints the place first (`/srv/mine.js:3`, the source line, a caret), then the error.
  const place = tail.slice(0, at).find((line) => /^(file:\/\/)?\/\S*:\d+$/.test(line));
  const error = tail[at].length > 500 ? `${tail[at].slice(0, 500)}…` : tail[at];
  return place ? `${error} (at ${place})` : error;
}

/** `Error: …`, `SyntaxError: …`, `Error [ERR_MODULE_NOT_FOUND]: …`, `McpvisorError: …`. */
const ERROR_LINE = /^([A-Z][A-Za-z]*)?(Error|Exception)( \[[A-Z_0-9]+\])?: /;
