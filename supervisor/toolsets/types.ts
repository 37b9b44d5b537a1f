import type { Config } from '../../config/schema';
import type { PoolCallOptions } from '../../protocol/pool';
import type { ToolCall, ToolResult } from '../../protocol/tool';
import type { Logger } from '../logger';

/**
 * Runs in the supervisor before a call is routed (rate limits that must hold across workers).
 * The wait counts against the call's budget: `maxWaitMs` is what is left of it, and `signal`
 * aborts when the caller gives up or the budget is spent. A hook that cannot be done within
 * `maxWaitMs` should throw at once (BUSY) rather than wait.
 */
export type BeforeCall = (tool: string, args: Record<string, unknown>, signal: AbortSignal, maxWaitMs?: number, session?: string) => Promise<void>;

/** What an `aroundCall` hook is given: PoolCallOptions, the session among them. */
export type RoutedCallOptions = PoolCallOptions;

/**
 * Runs in the supervisor around a validated call (after `beforeCall`): it may answer by itself
 * (a page it keeps) or hand the call, changed or not, to the pool through `next`. Never rejects.
 */
export type AroundCall = (call: ToolCall, options: RoutedCallOptions, next: (call: ToolCall, options: PoolCallOptions) => Promise<ToolResult>) => Promise<ToolResult>;

interface PoolPlanBase {
  /** Pool name, shown in /health (`shell`, `web-search`, `api-github`). */
  name: string;
  /** Absolute path of the compiled worker module. */
  module: string;
  /** Sent to each worker: `init` message (process) or `workerData.config` (thread). */
  workerConfig: unknown;
  /** Budget of a call in this pool; default `pools.callTimeoutMs`. */
  callTimeoutMs?: number;
  beforeCall?: BeforeCall;
  aroundCall?: AroundCall;
  /**
   * A pool whose failure makes /health 503, and whose failure to start stops the start (default
   * true). One that is not required and cannot start is left out: the others are served.
   */
  required?: boolean;
  /** Where it is configured, named in a failure to start beside its reason (`api-bad (apis[3])`). */
  label?: string;
}

/** Child processes that run `runWorker` (protocol/worker-runtime). */
export interface ProcessPoolPlan extends PoolPlanBase {
  kind: 'process';
  size: number;
  /** Calls one worker runs at once (1 for CPU-bound work, more for I/O-bound work). */
  concurrency: number;
  /** Environment of the workers; default: the supervisor's, less its secrets. */
  env?: NodeJS.ProcessEnv;
}

/** piscina threads whose module default-exports `threadWorker(init)` (protocol/thread-runtime). */
export interface ThreadPoolPlan extends PoolPlanBase {
  kind: 'thread';
  threads: number;
  /** Calls one thread runs at once (default 1; more when calls also wait on the network). */
  concurrency?: number;
}

export type PoolPlan = ProcessPoolPlan | ThreadPoolPlan;

/** A toolset as the supervisor runs it: its pools, and the prefix of its tool names. */
export interface ToolsetPlan {
  name: string;
  /** Tool names become `<namespace>-<tool>` (several OpenAPI descriptions side by side). */
  namespace?: string;
  pools: PoolPlan[];
  /**
   * Told when an MCP session ends, on any transport (closed, deleted, expired, stdin's end), with
   * the key its calls carried as `session`: for state kept per session (the web pager's pages).
   */
  onSessionEnd?: (session: string) => void;
}

/** What the supervisor knows of its start beyond the configuration's values. */
export interface PlanContext {
  /** Absolute path of the config file it was started with (`--config`, MCPVISOR_CONFIG). */
  configFile?: string;
}

/** Each toolset contributes plans from the configuration; none when it is disabled. */
export type ToolsetFactory = (config: Config, logger: Logger, context?: PlanContext) => ToolsetPlan[];
