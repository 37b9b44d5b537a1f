import type { ProgressReport } from './call-progress';
import type { ErrorInfo } from './errors';
import type { WorkerHealth } from './pool';
import type { ToolCall, ToolDescriptor, ToolResult } from './tool';
import type { BulkToolTexts } from './bulk-text';
import type { ToolTexts } from './tool-text';

/**
 * IPC messages between the supervisor and a worker. Plain JSON-compatible objects; ids are
 * numbers chosen by the sender of a `call` and unique per channel.
 */
export type SupervisorMessage =
  | { type: 'init'; config: unknown }
  /** `progress`: the client wants progress of this call (it gave a progress token). */
  | { type: 'call'; id: number; call: ToolCall; deadlineMs: number; callId?: string; progress?: boolean }
  | { type: 'cancel'; id: number; reason: 'timeout' | 'cancelled' }
  | { type: 'stats'; id: number }
  | { type: 'warm-up'; id: number }
  | { type: 'shutdown'; graceMs: number };

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export type WorkerMessage =
  | { type: 'ready'; tools: ToolDescriptor[] | ToolTexts | BulkToolTexts; info?: Record<string, unknown> }
  | { type: 'fatal'; error: ErrorInfo }
  /** It is ending (an error thrown outside any call): give it no more calls; its running ones are answered next. */
  | { type: 'exiting'; reason: string }
  | { type: 'result'; id: number; result: ToolResult }
  /** A running call's own progress (CallContext.progress), coalesced and checked by the worker; only for a call sent with `progress: true`. */
  | { type: 'progress'; id: number; report: ProgressReport }
  | { type: 'error'; id: number; error: ErrorInfo }
  | { type: 'log'; level: LogLevel; msg: string; fields?: Record<string, unknown> }
  | { type: 'stats'; id: number; stats: Record<string, unknown> }
  | { type: 'warmed'; id: number }
  | { type: 'health'; health: WorkerHealth };

const SUPERVISOR_TYPES = new Set(['init', 'call', 'cancel', 'stats', 'warm-up', 'shutdown']);
const WORKER_TYPES = new Set(['ready', 'fatal', 'exiting', 'result', 'progress', 'error', 'log', 'stats', 'warmed', 'health']);

function hasType(value: unknown, types: Set<string>): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { type?: unknown }).type === 'string' &&
    types.has((value as { type: string }).type)
  );
}

/** Shape check for messages arriving at a worker; anything else is dropped with a log line. */
export function isSupervisorMessage(value: unknown): value is SupervisorMessage {
  return hasType(value, SUPERVISOR_TYPES);
}

/** Shape check for messages arriving at the supervisor from a worker. */
export function isWorkerMessage(value: unknown): value is WorkerMessage {
  return hasType(value, WORKER_TYPES);
}
