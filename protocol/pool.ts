import type { ProgressReport } from './call-progress';
import type { ErrorCode } from './errors';
import type { ToolCall, ToolResult } from './tool';
import type { AnnouncedTool } from './tool-text';

/**
 * Pool states. `degraded`: restarts exceeded the intensity limit, retries continue slowly; or a
 * live worker reports that it cannot do its work (WorkerHealth). `failed`: no worker could be
 * started at all; its tools answer POOL_UNAVAILABLE.
 */
export type PoolState = 'starting' | 'ready' | 'degraded' | 'failed' | 'stopping' | 'stopped';

export interface PoolStats {
  name: string;
  kind: 'process' | 'thread';
  state: PoolState;
  /** Configured number of workers. */
  workers: number;
  alive: number;
  busy: number;
  queued: number;
  restarts: number;
  lastError?: string;
  /** While a live worker reports itself degraded (WorkerHealth): why, and since when. */
  degradedBy?: DegradedReason;
}

/** Why a worker cannot do its work: a stable code, a message for people, since when (ISO 8601). */
export interface DegradedReason {
  code: ErrorCode;
  message: string;
  since: string;
}

/**
 * What a worker says of itself, sent (worker → supervisor, message `health`) when it changes:
 * `degraded` while it is alive and answers but cannot do its work (the search worker: its browser
 * cannot be launched), `ok` again once it can. The pool shows it in /health; it is not a crash,
 * so nothing is restarted for it.
 */
export interface WorkerHealth {
  status: 'ok' | 'degraded';
  /** Set when `degraded`. */
  reason?: DegradedReason;
}

export interface PoolCallOptions {
  signal?: AbortSignal;
  /** Budget of the call in ms, counted from when `call` is invoked (queueing included). */
  deadlineMs: number;
  /** The supervisor's id of the call (`c17`), on every log line about it, the worker's too. */
  callId?: string;
  /**
   * Given when the client wants progress of the call (a progress token): the worker's own reports
   * (CallContext.progress), already checked and coalesced; none come after the call settles.
   */
  onProgress?: (report: ProgressReport) => void;
  /**
   * The session the call came from (an id that never leaves the process): the unit a pool's
   * wait queue shares its workers fairly between (supervisor/pools/wait-queue.ts).
   */
  session?: string;
}

/** The contract of DESIGN.md: the router knows nothing else about a pool. */
export interface Pool {
  readonly name: string;
  /** Spawns the workers and waits for their `ready`; rejects with the worker's own reason. */
  start(): Promise<void>;
  /** The tools the workers announced; empty before `start` resolves. */
  readonly tools: readonly AnnouncedTool[];
  /** Never rejects: every failure is a result with `isError: true` and a stable code. */
  call(call: ToolCall, options: PoolCallOptions): Promise<ToolResult>;
  stats(): PoolStats;
  /** Stops taking calls, lets running ones finish within `graceMs`, then kills what is left. */
  stop(graceMs: number): Promise<void>;
  /**
   * Has the workers load what a first call needs, one after another; later workers (replacements)
   * warm up as they start. Never rejects. Optional: a pool without it warms nothing.
   */
  warmUp?(): Promise<void>;
  /** A session ended: free slots kept for sessions holding none (`pools.reservedSlots`) may go to waiting calls. Optional. */
  sessionsChanged?(): void;
}
