import { errorResult } from '../../../protocol/results';
import { McpvisorError } from '../../../protocol/errors';
import { Metrics, UNKNOWN_TOOL_LABEL } from '../../../supervisor/metrics';
import type { Supervisor } from '../../../supervisor/supervisor';

/** A supervisor that serves the tools `echo` and `sleep`. */
function stubSupervisor(): Supervisor {
  const tools = new Set(['echo', 'sleep']);
  return {
    catalogue: { has: (name: string) => tools.has(name), poolOf: (name: string) => (tools.has(name) ? 'stub' : undefined) },
    health: () => ({ status: 'ok', sessions: 0, pools: [] }),
  } as unknown as Supervisor;
}

async function series(metrics: Metrics, name: string): Promise<Array<Partial<Record<string, string | number>>>> {
  const metric = metrics.registry.getSingleMetric(name);
  return (await metric!.get()).values.map((value) => value.labels);
}

describe('Metrics', () => {
  it('labels calls by tool name for the tools served', async () => {
    const metrics = new Metrics(stubSupervisor());
    metrics.observe('echo', { content: [] }, 0.01);
    metrics.observe('sleep', errorResult(new McpvisorError('BUSY', 'busy'), 'sleep'), 0);
    expect(await series(metrics, 'mcpvisor_tool_calls_total')).toEqual(
      expect.arrayContaining([{ tool: 'echo', outcome: 'ok' }, { tool: 'sleep', outcome: 'BUSY' }]),
    );
  });

  it('counts refusals of names no toolset serves under one label, so made-up names add no series', async () => {
    const metrics = new Metrics(stubSupervisor());
    // A session at its concurrency limit is answered BUSY before the name is looked up.
    for (let i = 0; i < 500; i++) metrics.observe(`made-up-${i}`, errorResult(new McpvisorError('BUSY', 'busy'), `made-up-${i}`), 0);
    expect(await series(metrics, 'mcpvisor_tool_calls_total')).toEqual([{ tool: UNKNOWN_TOOL_LABEL, outcome: 'BUSY' }]);
    const latency = await series(metrics, 'mcpvisor_pool_call_duration_seconds');
    expect(new Set(latency.map((labels) => labels.pool))).toEqual(new Set([UNKNOWN_TOOL_LABEL]));
    expect(await metrics.registry.metrics()).not.toContain('made-up-');
  });
});
