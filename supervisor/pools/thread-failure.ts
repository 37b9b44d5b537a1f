import { McpvisorError } from '../../protocol/errors';
import type { AnnouncedTool } from '../../protocol/tool-text';

/** Why piscina rejected a call, as the thread pool knows it then. */
export interface Rejection {
  error: Error;
  pool: string;
  maxQueue: number;
  heapMb: number;
  stopping: boolean;
  /** The call was given up and its thread terminated for it: its caller has its answer. */
  runaway: boolean;
  /** Its thread was terminated for another call's runaway. */
  terminating: boolean;
}

/**
 * The answer for a call piscina rejected: a full queue, a thread we terminated, or a crash. A
 * crash here ended the thread under its calls (process.exit in one, out of memory): `crash` says
 * so, to be counted once as the thread's end.
 */
export function rejectedCall({ error, pool, maxQueue, heapMb, stopping, runaway, terminating }: Rejection): { error: McpvisorError; crash?: string } {
  const message = error.message ?? String(error);
  // piscina's own bound on waiting tasks (maxQueue).
  if (/queue is at limit/i.test(message)) return { error: new McpvisorError('BUSY', `the ${pool} pool is busy (${maxQueue} calls already waiting); try again later`) };
  if (stopping) return { error: new McpvisorError('SHUTTING_DOWN', 'the server is shutting down') };
  // The runaway's caller was answered already (TIMEOUT or CANCELLED).
  if (runaway) return { error: new McpvisorError('CANCELLED', 'the call was cancelled') };
  if (terminating) return { error: new McpvisorError('WORKER_CRASHED', 'the thread running this call was terminated because another call on it would not stop; try again') };
  if ((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
    const what = `the thread running this call ran out of memory (its ${heapMb} MB heap, pools.threadMaxOldGenerationSizeMb) and was replaced; a call on it needed more (a very large page)`;
    return { error: new McpvisorError('WORKER_CRASHED', what), crash: `out of memory (${heapMb} MB heap)` };
  }
  return { error: new McpvisorError('WORKER_CRASHED', `the thread running this call crashed (${message})`), crash: message };
}

/** The tool declares itself read-only or idempotent (MCP annotations): a second run does no harm. */
export function repeatable(tools: readonly AnnouncedTool[], tool: string): boolean {
  const hints = tools.find((announced) => announced.name === tool)?.descriptor.annotations;
  return hints?.readOnlyHint === true || hints?.idempotentHint === true;
}
