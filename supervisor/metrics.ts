import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ERROR_META_KEY, UPSTREAM_STATUS_META_KEY } from '../protocol/results';
import type { ToolResult } from '../protocol/tool';
import type { Supervisor } from './supervisor';

/**
 * The `tool` label of a call to a name no toolset serves. Refusals answered before the name is
 * looked up (a session at its concurrency limit: BUSY; a draining server: SHUTTING_DOWN) carry
 * whatever name the client sent: one series per made-up name grew the heap and every scrape by
 * ~1.3 KB each, without bound. Parentheses cannot appear in an MCP tool name, so it never collides.
 */
export const UNKNOWN_TOOL_LABEL = '(unknown)';

/**
 * Prometheus metrics of one supervisor (`GET /metrics`): sessions, calls by tool and outcome, call
 * latency, pool state (workers, busy, queue, restarts), upstream status codes, and Node's
 * defaults (event-loop lag among them). Pool figures are read from the pools at scrape time.
 */
export class Metrics {
  readonly registry = new Registry();
  #poolOf: (tool: string) => string | undefined;
  #calls: Counter<'tool' | 'outcome'>;
  #latency: Histogram<'pool'>;
  #upstream: Counter<'pool' | 'status'>;
  #refused: Counter<'status'>;
  #streamsCut: Counter<'reason'>;
  #streamWaiting: () => number = () => 0;

  constructor(supervisor: Supervisor) {
    const registry = this.registry;
    this.#poolOf = (tool) => supervisor.catalogue.poolOf(tool);
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
    steadyEventLoopLag(registry);
    this.#calls = new Counter({ name: 'mcpvisor_tool_calls_total', help: 'Tool calls by tool and outcome (ok or the error code)', labelNames: ['tool', 'outcome'], registers: [registry] });
    // By pool, not by tool: 16 series per tool made an API of 1,000 operations a 1.3 MB scrape
    // (18,000 lines) that held the event loop 115 ms. Calls by tool stay in mcpvisor_tool_calls_total.
    this.#latency = new Histogram({
      name: 'mcpvisor_pool_call_duration_seconds',
      help: 'Tool call latency by pool, queueing included',
      labelNames: ['pool'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
    this.#upstream = new Counter({ name: 'mcpvisor_upstream_responses_total', help: 'Upstream HTTP responses seen by workers, by pool and status code', labelNames: ['pool', 'status'], registers: [registry] });
    this.#refused = new Counter({
      name: 'mcpvisor_http_requests_refused_total',
      help: 'HTTP requests answered 4xx or 503 (bad token, Origin or Host, rate limited, malformed or oversized body, unknown session…), by status',
      labelNames: ['status'],
      registers: [registry],
    });
    this.#streamsCut = new Counter({
      name: 'mcpvisor_http_streams_cut_total',
      help: 'SSE streams closed because their client was not reading: reason stream (http.maxStreamBufferBytes) or total (http.maxTotalStreamBufferBytes)',
      labelNames: ['reason'],
      registers: [registry],
    });
    const waiting = () => this.#streamWaiting();
    new Gauge({
      name: 'mcpvisor_http_stream_waiting_bytes',
      help: 'Output waiting to be sent on every SSE stream, as last counted',
      registers: [registry],
      collect() {
        this.set(waiting());
      },
    });
    new Gauge({
      name: 'mcpvisor_sessions',
      help: 'Live MCP sessions (all transports)',
      registers: [registry],
      collect() {
        this.set(supervisor.health().sessions);
      },
    });
    new Gauge({
      name: 'mcpvisor_up',
      help: '1 when /health would answer 200',
      registers: [registry],
      collect() {
        this.set(supervisor.health().status === 'ok' ? 1 : 0);
      },
    });
    const poolGauge = (name: string, help: string, pick: (stats: ReturnType<Supervisor['health']>['pools'][number]) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['pool'],
        registers: [registry],
        collect() {
          this.reset();
          for (const stats of supervisor.health().pools) this.set({ pool: stats.name }, pick(stats));
        },
      });
    poolGauge('mcpvisor_pool_workers_alive', 'Live workers of a pool', (stats) => stats.alive);
    poolGauge('mcpvisor_pool_workers_busy', 'Calls running in a pool', (stats) => stats.busy);
    poolGauge('mcpvisor_pool_queue_depth', 'Calls waiting for a worker', (stats) => stats.queued);
    // A counter, read from the pools at scrape time: as a gauge (mcpvisor_pool_restarts) rate()
    // and increase() were wrong across a server restart, which resets it.
    new Counter({
      name: 'mcpvisor_pool_restarts_total',
      help: 'Worker restarts since the server started, by pool',
      labelNames: ['pool'],
      registers: [registry],
      collect() {
        this.reset();
        for (const stats of supervisor.health().pools) this.inc({ pool: stats.name }, stats.restarts);
      },
    });
    poolGauge('mcpvisor_pool_ready', '1 when the pool is ready, 0 when starting, degraded, failed or stopping', (stats) => (stats.state === 'ready' ? 1 : 0));
  }

  /** Counts one refused HTTP request; `status` is 400-599, so the label has at most 200 values. */
  refused(status: number): void {
    this.#refused.inc({ status: String(status) });
  }

  /** Counts one SSE stream closed for its client not reading (`stream-budget.ts`). */
  streamCut(reason: 'stream' | 'total'): void {
    this.#streamsCut.inc({ reason });
  }

  /** Where `mcpvisor_http_stream_waiting_bytes` is read from (the HTTP server's stream budget). */
  watchStreamWaiting(read: () => number): void {
    this.#streamWaiting = read;
  }

  /** Records one finished call. */
  observe(name: string, result: ToolResult, seconds: number): void {
    const pool = this.#poolOf(name);
    const tool = pool !== undefined ? name : UNKNOWN_TOOL_LABEL;
    const code = (result._meta?.[ERROR_META_KEY] as { code?: string } | undefined)?.code;
    this.#calls.inc({ tool, outcome: result.isError ? (code ?? 'error') : 'ok' });
    this.#latency.observe({ pool: pool ?? UNKNOWN_TOOL_LABEL }, seconds);
    const status = result._meta?.[UPSTREAM_STATUS_META_KEY];
    if (typeof status === 'number' && pool !== undefined) this.#upstream.inc({ pool, status: String(status) });
  }
}

/** The event-loop delay figures prom-client reads from one histogram, which each scrape resets. */
const LAG_PARTS = ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99'].map((part) => `nodejs_eventloop_lag_${part}_seconds`);

/**
 * A scrape within the event-loop monitor's resolution (10 ms) of the one before (the two servers
 * of an HA Prometheus pair, a curl beside them) found the histogram empty: prom-client wrote
 * `nodejs_eventloop_lag_mean_seconds Nan` (a spelling the exposition format does not have), a
 * min of 9223372036.85 s (292 years), a max of 0 and percentiles of 0.5 µs. Each figure keeps its
 * last real value instead (none before the first).
 */
function steadyEventLoopLag(registry: Registry): void {
  const mean = registry.getSingleMetric('nodejs_eventloop_lag_mean_seconds') as Gauge | undefined;
  if (mean === undefined) return;
  const meanNow = mean.get.bind(mean);
  for (const name of LAG_PARTS) {
    const gauge = registry.getSingleMetric(name) as Gauge | undefined;
    if (gauge === undefined) continue;
    const get = gauge.get.bind(gauge);
    let last: Awaited<ReturnType<typeof get>>['values'] = [];
    // Both read the values at the call, as nodejs_eventloop_lag_seconds's collect (which runs
    // first in a scrape) set them; the mean is NaN when no delay was recorded since the last.
    gauge.get = async () => {
      const [data, now] = await Promise.all([get(), meanNow()]);
      if (now.values.some(({ value }) => Number.isNaN(value))) return { ...data, values: last };
      last = data.values;
      return data;
    };
  }
}
