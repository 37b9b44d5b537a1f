import type { ToolCall, ToolResult } from './tool';
import type { AnnouncedTool } from './tool-text';

/**
 * Pool states. `degraded`: restarts exceeded the intensity limit, retries continue slowly.
 * `failed`: no worker could be started at all; its tools answer POOL_UNAVAILABLE.
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
}

export interface PoolCallOptions {
  signal?: AbortSignal;
  /** Budget of the call in ms, counted from when `call` is invoked (queueing included). */
  deadlineMs: number;
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
}
