/**
 * The session and fuzz parts of the load suite as jest tests with a size parameter: the short
 * form runs in `npm test` (test/integration/production/load-short.test.ts), the long form in
 * `npm run test:load` (test/load/*.load.ts). Figures are printed with console.log.
 */
import { fixtureConfig, writeConfig } from '../helpers/config';
import type { HttpServer } from '../helpers/mcp';
import { FUZZ_MAX_BODY, fuzzHttp, fuzzStdio } from './fuzz-scenario';
import { health, kb, LOAD_HTTP, startServer } from './harness';
import { runSessions } from './sessions-scenario';

/** The fixture server every load test uses: two echo workers, 16 calls each at once, no rate limits. */
export function loadConfig(http: Record<string, unknown> = {}): Record<string, unknown> {
  return fixtureConfig({ thread: false, process: { workers: 2, concurrency: 16 }, root: { http: { ...LOAD_HTTP, ...http } } });
}

export function sessionsSuite(count: number): void {
  let server: HttpServer;
  beforeAll(async () => {
    server = await startServer(loadConfig());
  });
  afterAll(() => server?.stop());

  it(`opens ${count} concurrent Streamable HTTP sessions that each initialise, list and call echo, and loses none`, async () => {
    const outcome = await runSessions(server, count);
    console.log(
      `${count} sessions: ${outcome.elapsedMs} ms to initialise+list+call all; supervisor RSS ${kb(outcome.rssBefore)} -> ${kb(outcome.rssIdle)} idle; ` +
        `${kb(outcome.bytesPerIdleSession)} per idle session (target <= 50 KB)`,
    );
    expect(outcome.lost).toEqual([]);
    expect(outcome.serverSessions).toBe(count);
    expect(outcome.rssIdle).toBeGreaterThan(0);
    // Every client ended its session (DELETE): the server holds none of them any more.
    const after = await health(server.baseUrl);
    expect([after.status, after.body.sessions]).toEqual([200, 0]);
    expect(server.server.child.exitCode).toBeNull();
  });
}

export function fuzzSuite(count: number): void {
  describe('over Streamable HTTP', () => {
    let server: HttpServer;
    beforeAll(async () => {
      server = await startServer(loadConfig({ maxBodyBytes: FUZZ_MAX_BODY }));
    });
    afterAll(() => server?.stop());

    it(`answers ${count} malformed, truncated, oversized and fuzzed messages with a JSON-RPC error or a 4xx, while valid sessions keep working`, async () => {
      const outcome = await fuzzHttp(server, count);
      console.log(`HTTP fuzz: ${outcome.sent} messages, statuses ${JSON.stringify(outcome.byStatus)}; ${outcome.validCalls} valid calls beside`);
      expect(outcome.failures).toEqual([]);
      expect(outcome.validFailures).toEqual([]);
      expect(outcome.validCalls).toBeGreaterThan(0);
      expect(outcome.byStatus['413']).toBeGreaterThan(0);
      expect(outcome.byStatus['500']).toBeUndefined();
      expect((await health(server.baseUrl)).status).toBe(200);
      expect(server.server.child.exitCode).toBeNull();
    });
  });

  describe('over stdio', () => {
    it(`answers every well-formed request among ${count} fuzzed lines with an error, writes nothing but JSON-RPC, and still serves a valid call`, async () => {
      const outcome = await fuzzStdio(writeConfig(loadConfig()), count);
      console.log(
        `stdio fuzz: ${outcome.sent} lines, ${outcome.requests} well-formed requests answered with errors, ` +
          `${outcome.unanswered} lines without an answer (notifications, which need none, among them), ${outcome.oversizedCalls} oversized calls served`,
      );
      expect(outcome.failures).toEqual([]);
      expect(outcome.requests).toBeGreaterThan(count / 20);
      expect(outcome.foreignStdout).toEqual([]);
      expect(outcome.exitCode).toBe(0);
    });
  });
}
