import { fixtureConfig } from '../../helpers/config';
import { startHttp, type HttpServer } from '../../helpers/mcp';
import { writeConfig } from '../../helpers/config';
import { eventually } from '../../helpers/processes';
import { parsePrometheus, sampleValue } from '../../helpers/prometheus';
import { call, initialize, stalledRequest, type StalledResponse } from '../../helpers/raw-sessions';

/**
 * Clients that stop reading their SSE streams: the output waiting for them is bounded per
 * stream at each write (not only at a heartbeat) and across every stream together
 * (`http.maxTotalStreamBufferBytes`), the fullest closed first, with one warning and a counter.
 */

const KIB = 1024;
const LOAD_HTTP = { rateLimit: { perIpRequestsPerSecond: 0, perSessionRequestsPerSecond: 0 } };

async function serverWith(http: Record<string, unknown>): Promise<HttpServer> {
  // Heartbeats once a minute: the bounds must hold between two of them.
  // Answers of 8 MiB and more: over pools.maxResultBytes' default (8 MiB), raised here.
  const config = fixtureConfig({ thread: false, process: { concurrency: 8 }, root: { http: { ...LOAD_HTTP, heartbeatIntervalMs: 60_000, ...http }, pools: { cancelGraceMs: 300, maxResultBytes: 16 * 1024 * KIB } } });
  return startHttp('mcpvisor', ['--config', writeConfig(config)]);
}

const inFlight = async (server: HttpServer) => ((await (await fetch(`${server.baseUrl}/health`)).json()) as { inFlightCalls: number }).inFlightCalls;
const metrics = async (server: HttpServer) => (await fetch(`${server.baseUrl}/metrics`)).text();
/** A call answered with `bytes` and some more: loopback's kernel buffers take ~4 MiB of a stream nobody reads before Node holds any. */
const largeAnswer = (id: number, bytes: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 0, pad: bytes } } });
/** A POST whose answer comes as SSE (the client accepts nothing else), never read until asked. */
const stalledPost = (server: HttpServer, sessionId: string, body: unknown, protocolVersion: string) =>
  stalledRequest(server.mcpUrl, 'POST', { 'content-type': 'application/json', accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': protocolVersion }, JSON.stringify(body));
const answersIn = (text: string) => text.split('\n').filter((line) => line.startsWith('data: {') && line.includes('"result"')).length;
const warnings = (server: HttpServer) => server.server.stderr().split('\n').filter((line) => line.includes('SSE stream closed'));

describe('SSE streams whose clients stop reading', () => {
  it('closes a stream past http.maxStreamBufferBytes at the write that passes it, not at the next heartbeat', async () => {
    const server = await serverWith({ maxStreamBufferBytes: 1024 * KIB });
    try {
      // A batch (2025-03-26) of 3 answers of 8 MiB each on one stream.
      const sessionId = await initialize(server.mcpUrl, '2025-03-26');
      const stalled = await stalledPost(server, sessionId, Array.from({ length: 3 }, (_, i) => largeAnswer(i + 1, 8192 * KIB)), '2025-03-26');
      expect(stalled.res.statusCode).toBe(200);
      expect(await eventually(async () => (await inFlight(server)) === 0)).toBe(true);
      const rest = await stalled.readRest();
      expect(rest.complete).toBe(false);
      expect(answersIn(rest.text)).toBeLessThan(3);
      expect(sampleValue(parsePrometheus(await metrics(server)), 'mcpvisor_http_streams_cut_total', { reason: 'stream' })).toBe(1);
      expect(warnings(server)).toHaveLength(1);
      expect(warnings(server)[0]).toContain('http.maxStreamBufferBytes');
      // The session goes on: a client reconnects, as after any cut connection.
      const after = await call(server.mcpUrl, sessionId, 100, 'echo', { text: 'still here' });
      expect(after.body).toContain('still here');
    } finally {
      await server.stop();
    }
  });

  it('bounds the output waiting on every stream together by http.maxTotalStreamBufferBytes, the fullest closed first, with one warning', async () => {
    const total = 8 * 1024 * KIB;
    const server = await serverWith({ maxTotalStreamBufferBytes: total, maxStreamBufferBytes: 64 * 1024 * KIB });
    try {
      const count = 12;
      const stalled: StalledResponse[] = [];
      for (let i = 0; i < count; i++) {
        const sessionId = await initialize(server.mcpUrl);
        // Each answer far below the per-stream bound; together ~5 times the total one once the
        // kernel's buffers are full.
        stalled.push(await stalledPost(server, sessionId, largeAnswer(1, 8192 * KIB), '2025-06-18'));
      }
      expect(await eventually(async () => (await inFlight(server)) === 0)).toBe(true);
      const text = await metrics(server);
      const cut = sampleValue(parsePrometheus(text), 'mcpvisor_http_streams_cut_total', { reason: 'total' }) ?? 0;
      // How many: as many as the kernel's socket buffers leave waiting in the server. Loopback
      // autotunes them to take 4 MiB to all 8 MiB of an answer (all of it for most streams on a
      // busy machine), so several cuts, not a fixed number.
      expect(cut).toBeGreaterThanOrEqual(2);
      expect(sampleValue(parsePrometheus(text), 'mcpvisor_http_stream_waiting_bytes')).toBeLessThanOrEqual(total);
      // One warning for the lot, not one per stream.
      expect(warnings(server)).toHaveLength(1);
      expect(warnings(server)[0]).toContain('http.maxTotalStreamBufferBytes');
      const rests = await Promise.all(stalled.map((response) => response.readRest()));
      const whole = rests.filter((rest) => rest.complete && answersIn(rest.text) === 1).length;
      expect(whole).toBe(count - cut);
      // The server answers on: health, and a new session's call. (CI once saw 503 here,
      // most likely the worker killed for cancels its answers had beaten: cancel-in-transit.test.ts.)
      const health = await fetch(`${server.baseUrl}/health`);
      expect(health.status === 200 ? 200 : await health.text()).toBe(200);
      const fresh = await initialize(server.mcpUrl);
      expect((await call(server.mcpUrl, fresh, 1, 'echo', { text: 'fresh' })).body).toContain('fresh');
    } finally {
      await server.stop();
    }
  });
});
