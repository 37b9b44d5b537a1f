import { availableParallelism } from 'node:os';
import type { Config } from '../config/schema';
import { McpvisorError, toErrorInfo } from '../protocol/errors';
import type { Pool, PoolStats } from '../protocol/pool';
import { errorResult } from '../protocol/results';
import type { ToolResult } from '../protocol/tool';
import { Catalogue, type RouteOptions } from './catalogue';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import { ProcessPool } from './pools/process-pool';
import { workerEnv } from './pools/spare-worker';
import { ThreadPool } from './pools/thread-pool';
import type { PoolPlan, ToolsetPlan } from './toolsets/types';
import { packageVersion } from '../protocol/version';

/**
 * Pools starting at once; the others wait their turn in the configuration's order. Why: a
 * worker's `startTimeoutMs` counted the whole crowd's time on shared cores, not its own: 30
 * copies of GitHub's description (~1 s each alone) all took ~10 s to be ready, and with
 * `startTimeoutMs: 8000` all 30 failed the start; and 30 descriptions parsed at once peaked
 * together. At least 4, so that a few slow descriptions (a URL that answers late) do not
 * hold up the rest.
 */
export const POOLS_STARTING_AT_ONCE = Math.max(4, availableParallelism());

/**
 * A pool left out at the start (not required, could not start) is tried again after
 * min(5 s·2^(n-1), 5 min): an API whose description host was down comes back by itself once the
 * host is, its tools added to the list and every session told (`notifications/tools/list_changed`).
 */
const LEFT_OUT_RETRY_BASE_MS = 5_000;
const LEFT_OUT_RETRY_MAX_MS = 300_000;

/** Delay after the start before warming what the first call needs (catalogue.ts, then each pool's warmUp). */
const WARM_UP_DELAY_MS = 300;

export type HealthStatus = 'ok' | 'starting' | 'degraded' | 'failed' | 'draining';

export interface Health {
  status: HealthStatus;
  uptimeSeconds: number;
  version: string;
  sessions: number;
  inFlightCalls: number;
  pools: PoolStats[];
}

/**
 * Owns the pools and the catalogue: starts every pool of every planned toolset, routes calls,
 * reports health, and drains on shutdown. Transports hold sessions and call `call`.
 */
export class Supervisor {
  readonly catalogue: Catalogue;
  readonly config: Config;
  #metrics: Metrics | undefined;
  #log: Logger;
  #plans: ToolsetPlan[];
  #pools: Array<{ pool: Pool; required: boolean }> = [];
  #startedAt = performance.now();
  #state: 'created' | 'starting' | 'running' | 'draining' | 'stopped' = 'created';
  #inFlight = 0;
  #sessionCounters = new Set<() => number>();
  #toolsChangedListeners = new Set<() => void>();
  #retries = new Set<NodeJS.Timeout>();

  constructor(config: Config, logger: Logger, plans: ToolsetPlan[]) {
    this.config = config;
    this.catalogue = new Catalogue({ maxResultBytes: config.pools.maxResultBytes });
    this.#log = logger;
    this.#plans = plans;
  }

  /** Prometheus metrics, created on first use (HTTP mode): stdio mode never loads prom-client. */
  get metrics(): Metrics {
    if (!this.#metrics) {
      const { Metrics: MetricsClass } = require('./metrics') as typeof import('./metrics');
      this.#metrics = new MetricsClass(this);
    }
    return this.#metrics;
  }

  /**
   * Starts every pool; rejects with the first required pool's failure (the reason its worker
   * gave; with its `label`, and the other required pools that failed, when the plan names them).
   * A pool that is not required and cannot start is left out, with an error log: its tools are
   * not listed, /health shows it `failed` with its reason.
   */
  async start(): Promise<void> {
    this.#state = 'starting';
    const planned = this.#plans.flatMap((plan) => plan.pools.map((poolPlan) => ({ plan, poolPlan, pool: this.#createPool(poolPlan) })));
    for (const { poolPlan, pool } of planned) this.#pools.push({ pool, required: poolPlan.required ?? true });
    const started = await Promise.allSettled(
      atMostAtOnce(
        POOLS_STARTING_AT_ONCE,
        planned.map(({ pool }) => async () => {
          // A stop during the start: the pools still waiting never start.
          if (this.#state !== 'starting') throw new McpvisorError('SHUTTING_DOWN', 'stopped during the start');
          await pool.start();
          this.#log.debug({ pool: pool.name, tools: pool.tools.length }, 'pool started');
        }),
      ),
    );
    const failed = planned.flatMap((entry, i) => {
      const result = started[i];
      return result.status === 'rejected' ? [{ ...entry, reason: result.reason as unknown }] : [];
    });
    const leftOut = failed.filter(({ poolPlan }) => poolPlan.required === false);
    for (const { pool, reason } of leftOut) {
      this.#log.error(
        { pool: pool.name, code: toErrorInfo(reason).code },
        `${pool.name} could not start and is left out (it does not affect health): ${toErrorInfo(reason).message}; its tools are not listed, the other pools are served; tried again in ${LEFT_OUT_RETRY_BASE_MS / 1000} s`,
      );
    }
    let failure: unknown = startFailure(failed.filter(({ poolPlan }) => poolPlan.required !== false));
    // Registered in the configuration's order once all are up, not as each pool gets ready:
    // tools/list is then the same list on every start and on every instance behind a balancer.
    try {
      if (failure === undefined) {
        for (const { plan, poolPlan, pool } of planned) {
          if (failed.some((entry) => entry.pool === pool)) continue;
          this.catalogue.register(pool, { namespace: plan.namespace, callTimeoutMs: poolPlan.callTimeoutMs ?? this.config.pools.callTimeoutMs, beforeCall: poolPlan.beforeCall, aroundCall: poolPlan.aroundCall });
        }
      }
    } catch (error) {
      failure = error;
    }
    if (failure !== undefined) {
      await this.stop(0);
      throw failure;
    }
    if (this.catalogue.size === 0) this.#log.warn('no tools are enabled: every toolset is disabled or empty');
    const unportable = this.catalogue.unportableNames;
    if (unportable.length > 0) {
      // Which toolsets: with several of an author's own, the names alone did not say where to rename.
      const toolsets = [...new Set(unportable.map((name) => this.catalogue.poolOf(name)))];
      this.#log.warn(
        { tools: unportable.slice(0, 10), count: unportable.length, toolsets },
        `${unportable.length} tool name(s) use characters or a length MCP advises against (1-128 of A-Z a-z 0-9 _ - .): some clients and model APIs refuse such tools; rename them in their toolset (${toolsets.join(', ')})`,
      );
    }
    const pages = this.catalogue.pageCount;
    if (pages > 1) {
      this.#log.warn(
        { tools: this.catalogue.size, pages },
        `${this.catalogue.size} tools take ${pages} tools/list pages (nextCursor); a client that does not follow nextCursor sees the first page only: an API's toolsMode 'dynamic' or include filters keep the list short`,
      );
    }
    this.#state = 'running';
    for (const entry of leftOut) this.#retryLeftOut(entry, 1);
    // After the start's own work (the first tools/list): what the first call would wait for.
    setTimeout(() => void this.#warmUp(), WARM_UP_DELAY_MS).unref();
  }

  /** Whether tools may join the list after the start (a pool that is not required): sessions declare `listChanged`. */
  get toolsMayChange(): boolean {
    return this.#pools.some((entry) => !entry.required);
  }

  /** `listener` is called when tools join the list after the start; returns its removal. */
  onToolsChanged(listener: () => void): () => void {
    this.#toolsChangedListeners.add(listener);
    return () => this.#toolsChangedListeners.delete(listener);
  }

  /**
   * Starts a left-out pool again, as a new pool in its place (/health shows the new one's state
   * and error), after the retry delay of `attempt`; on success its tools are registered (after
   * the others) and the listeners told, else it is tried again later. Never while stopping.
   */
  #retryLeftOut(entry: { plan: ToolsetPlan; poolPlan: PoolPlan; pool: Pool }, attempt: number): void {
    const delayMs = Math.min(LEFT_OUT_RETRY_BASE_MS * 2 ** (attempt - 1), LEFT_OUT_RETRY_MAX_MS);
    const timer = setTimeout(async () => {
      this.#retries.delete(timer);
      if (this.#state !== 'running') return;
      const slot = this.#pools.find((held) => held.pool === entry.pool);
      if (!slot) return;
      const pool = this.#createPool(entry.poolPlan);
      slot.pool = entry.pool = pool;
      try {
        await pool.start();
      } catch (error) {
        if (this.#state !== 'running') return;
        const next = Math.min(LEFT_OUT_RETRY_BASE_MS * 2 ** attempt, LEFT_OUT_RETRY_MAX_MS);
        this.#log.warn({ pool: pool.name, attempt, code: toErrorInfo(error).code }, `${pool.name} still cannot start (attempt ${attempt}): ${toErrorInfo(error).message}; tried again in ${next / 1000} s`);
        return this.#retryLeftOut(entry, attempt + 1);
      }
      if (this.#state !== 'running') return;
      try {
        this.catalogue.register(pool, { namespace: entry.plan.namespace, callTimeoutMs: entry.poolPlan.callTimeoutMs ?? this.config.pools.callTimeoutMs, beforeCall: entry.poolPlan.beforeCall, aroundCall: entry.poolPlan.aroundCall });
      } catch (error) {
        // Its tools clash with the others' (a name): no retry mends that.
        this.#log.error({ pool: pool.name, code: toErrorInfo(error).code }, `${pool.name} started but stays left out: ${toErrorInfo(error).message}`);
        await pool.stop(0);
        return;
      }
      this.#log.info({ pool: pool.name, attempt, tools: pool.tools.length }, `${pool.name} started after being left out; its tools are listed now and sessions are told (notifications/tools/list_changed)`);
      for (const listener of this.#toolsChangedListeners) listener();
    }, delayMs);
    timer.unref();
    this.#retries.add(timer);
  }

  /**
   * The catalogue's validator, then each pool's workers, one pool after another. Why not each
   * worker on its own once ready: with many APIs the first ready ones loaded their call modules
   * (~175 ms of CPU each) while the others were still starting, on the same cores; 30 copies of
   * GitHub's description took 6.1-6.5 s to the first tools/list instead of 2.7-3.0 s
   * (bench/openapi/many-apis.ts).
   */
  async #warmUp(): Promise<void> {
    if (this.#state !== 'running') return;
    this.catalogue.warmUp();
    for (const { pool } of this.#pools) {
      if (this.#state !== 'running') return;
      await pool.warmUp?.();
    }
  }

  /**
   * Routes a call; throws only UNKNOWN_TOOL (a protocol error), everything else is a result.
   * `session` identifies the caller's session to hooks that keep state per session; `onProgress`
   * receives the worker's own progress reports (given when the client wants them).
   */
  async call(name: string, args: Record<string, unknown> | undefined, signal: AbortSignal, session?: string, callId?: string, onProgress?: RouteOptions['onProgress']): Promise<ToolResult> {
    if (this.#state !== 'running') return this.refuse(name, new McpvisorError('SHUTTING_DOWN', 'the server is shutting down and takes no new calls'));
    this.#inFlight++;
    const started = performance.now();
    try {
      const result = await this.catalogue.call(name, args, { signal, session, callId, onProgress });
      this.#metrics?.observe(name, result, (performance.now() - started) / 1000);
      return result;
    } catch (error) {
      // Counted under the `(unknown)` label: a client calling a tool this server does not have
      // (a stale list, a removed API) showed nowhere, neither in /metrics nor at info in the log.
      if (error instanceof McpvisorError) this.#metrics?.observe(name, errorResult(error, name), (performance.now() - started) / 1000);
      throw error;
    } finally {
      this.#inFlight--;
    }
  }

  /** A call refused before it reached a pool (a session's own limit, shutdown), as a result, counted in /metrics. */
  refuse(name: string, error: McpvisorError): ToolResult {
    const result = errorResult(error, name);
    this.#metrics?.observe(name, result, 0);
    return result;
  }

  /**
   * An MCP session ended (mcp-session.ts, on its transport's close, whatever the transport): each
   * toolset's onSessionEnd lets go what it kept for it. A hook that throws is logged, the others run.
   */
  sessionEnded(session: string): void {
    // A slot a pool kept for the ended session went to no one until a call ended: a session
    // filling a pool of 60 s calls waited for one of them. Next turn: the transport counts it gone.
    setImmediate(() => {
      for (const { pool } of this.#pools) pool.sessionsChanged?.();
    });
    for (const plan of this.#plans) {
      try {
        plan.onSessionEnd?.(session);
      } catch (error) {
        this.#log.warn({ toolset: plan.name, err: (error as Error).message }, 'a toolset failed to let go of a closed session');
      }
    }
  }

  /** Transports report their live sessions through a counter. */
  addSessionCounter(counter: () => number): () => void {
    this.#sessionCounters.add(counter);
    return () => this.#sessionCounters.delete(counter);
  }

  /** Live sessions over every transport (`http.maxSessions` bounds them together). */
  get sessions(): number {
    let sessions = 0;
    for (const counter of this.#sessionCounters) sessions += counter();
    return sessions;
  }

  get draining(): boolean {
    return this.#state === 'draining' || this.#state === 'stopped';
  }

  health(): Health {
    const pools = this.#pools.map(({ pool }) => pool.stats());
    const required = this.#pools.filter((entry) => entry.required).map(({ pool }) => pool.stats());
    let status: HealthStatus = 'ok';
    if (this.#state === 'created' || this.#state === 'starting') status = 'starting';
    else if (this.draining) status = 'draining';
    else if (required.some((stats) => stats.state === 'failed')) status = 'failed';
    // A pool between a crash and its restart has no worker to serve: not `ok` for a load balancer.
    else if (required.some((stats) => stats.state === 'degraded' || (stats.state === 'ready' && stats.alive === 0))) status = 'degraded';
    return {
      status,
      uptimeSeconds: Math.round((performance.now() - this.#startedAt) / 1000),
      version: this.config.version ?? packageVersion(),
      sessions: this.sessions,
      inFlightCalls: this.#inFlight,
      pools,
    };
  }

  /**
   * Stops taking calls, waits up to `graceMs` for running ones, then stops every pool. Called
   * again while draining, a shorter grace cuts the drain short (the same stop goes on): under pm2,
   * the daemon's death closed stdout first (a stop with the whole grace) and then the IPC channel
   * (a stop at once), and the second was ignored, so the port stayed held for the drain.
   */
  stop(graceMs: number): Promise<void> {
    const deadline = performance.now() + graceMs;
    this.#drainDeadline = Math.min(this.#drainDeadline, deadline);
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  #drainDeadline = Infinity;
  #stopping: Promise<void> | undefined;

  async #stop(): Promise<void> {
    if (this.#state === 'stopped') return;
    this.#state = 'draining';
    for (const timer of this.#retries) clearTimeout(timer);
    this.#retries.clear();
    while (this.#inFlight > 0 && performance.now() < this.#drainDeadline) await new Promise((resolve) => setTimeout(resolve, 20));
    if (this.#inFlight > 0) this.#log.warn({ inFlight: this.#inFlight }, 'grace period over; stopping pools with calls still running');
    await Promise.all(this.#pools.map(({ pool }) => pool.stop(Math.max(0, Math.floor(this.#drainDeadline - performance.now())))));
    this.#state = 'stopped';
  }

  #createPool(plan: PoolPlan): Pool {
    const { pools } = this.config;
    // Slots kept for a session holding none, while one is open (wait-queue.ts).
    const sharing = { reservedSlots: pools.reservedSlots, openSessions: () => this.sessions };
    if (plan.kind === 'thread') {
      return new ThreadPool({
        name: plan.name,
        module: plan.module,
        threads: plan.threads,
        concurrency: plan.concurrency ?? 1,
        workerConfig: plan.workerConfig,
        maxQueue: pools.maxQueue,
        sharing,
        cancelGraceMs: pools.cancelGraceMs,
        startTimeoutMs: pools.startTimeoutMs,
        maxOldGenerationSizeMb: pools.threadMaxOldGenerationSizeMb,
        restart: pools.restart,
        logger: this.#log,
      });
    }
    return new ProcessPool({
      name: plan.name,
      module: plan.module,
      size: plan.size,
      concurrency: plan.concurrency,
      workerConfig: plan.workerConfig,
      env: plan.env ?? workerEnv(),
      maxQueue: pools.maxQueue,
      sharing,
      cancelGraceMs: pools.cancelGraceMs,
      startTimeoutMs: pools.startTimeoutMs,
      liveness: { intervalMs: pools.livenessIntervalMs, timeoutMs: pools.livenessTimeoutMs },
      restart: pools.restart,
      logger: this.#log,
    });
  }
}

/**
 * The error a start fails with: the first failed pool's, its message prefixed with the pool's
 * `label` when the plan gives one, and the other failed pools named after it (with 15 APIs, the
 * reason alone, "OpenAPI spec file not found: …", did not say which API, and only the first
 * of several was told). undefined when none failed.
 */
function startFailure(failed: Array<{ poolPlan: PoolPlan; reason: unknown }>): unknown {
  if (failed.length === 0) return undefined;
  const labelled = failed.filter(({ poolPlan }) => poolPlan.label !== undefined);
  if (labelled.length === 0) return failed[0].reason;
  const text = ({ poolPlan, reason }: { poolPlan: PoolPlan; reason: unknown }) => (poolPlan.label ? `${poolPlan.label}: ` : '') + toErrorInfo(reason).message;
  const first = toErrorInfo(failed[0].reason);
  const named = failed.slice(1, 6).map(text);
  if (failed.length > 6) named.push(`and ${failed.length - 6} more (each in the log)`);
  const others = failed.length > 1 ? `; ${failed.length - 1} more could not start either: ${named.join('; ')}` : '';
  return new McpvisorError(first.code, `${text(failed[0])}${others}`, first.data === undefined ? {} : { data: first.data });
}

/** Runs `tasks`, at most `limit` at once, in their order; one promise per task. */
function atMostAtOnce<T>(limit: number, tasks: Array<() => Promise<T>>): Array<Promise<T>> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return tasks.map(async (task) => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  });
}
