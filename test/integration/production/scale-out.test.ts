/**
 * The scale-out recipe of docs/production.md, end to end: two mcpvisor instances behind nginx
 * (deploy/nginx.conf.template, session affinity on Mcp-Session-Id) on loopback.
 */
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectSse, startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { descendants } from '../../helpers/processes';
import { RecoveringClient, startNginx, type Nginx } from './cluster';

const SESSIONS = 100;
let instances: HttpServer[] = [];
let nginx: Nginx;
const clients: RecoveringClient[] = [];

/** Index of the instance whose worker has `pid` (each instance runs one echo worker). */
function instanceOf(pid: number): number {
  return instances.findIndex((instance) => descendants(instance.server.child.pid!).includes(pid));
}

async function sessionsOf(instance: HttpServer): Promise<number> {
  const health = (await (await fetch(`${instance.baseUrl}/health`)).json()) as { sessions: number };
  return health.sessions;
}

beforeAll(async () => {
  const config = writeConfig(fixtureConfig({ thread: false }));
  instances = await Promise.all([startHttp('mcpvisor', ['--config', config]), startHttp('mcpvisor', ['--config', config])]);
  nginx = await startNginx(instances.map((instance) => new URL(instance.baseUrl).host));
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await nginx?.stop();
  await Promise.all(instances.map((instance) => instance.stop()));
});

describe('two mcpvisor instances behind nginx with Mcp-Session-Id affinity', () => {
  const home = new Map<RecoveringClient, number>();

  it('spreads 100 new sessions over both instances', async () => {
    for (let i = 0; i < SESSIONS; i += 25) {
      clients.push(...(await Promise.all(Array.from({ length: 25 }, () => new RecoveringClient(nginx.mcpUrl).connect()))));
    }
    const pids = await Promise.all(clients.map((client) => client.echoPid('first')));
    clients.forEach((client, i) => home.set(client, instanceOf(pids[i])));
    const counts = [0, 1].map((index) => [...home.values()].filter((value) => value === index).length);
    expect(counts[0] + counts[1]).toBe(SESSIONS);
    // Round-robin or random: either way far from all on one side (binomial tail < 1e-15).
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(15);
    expect(await Promise.all(instances.map(sessionsOf))).toEqual(counts);
    expect(new Set(clients.map((client) => client.sessionId)).size).toBe(SESSIONS);
  });

  it('sends every request of a session to the instance that created it', async () => {
    for (let round = 0; round < 3; round++) {
      const pids = await Promise.all(clients.map((client) => client.echoPid(`round ${round}`)));
      clients.forEach((client, i) => expect(instanceOf(pids[i])).toBe(home.get(client)));
    }
    const listed = await Promise.all(clients.map((client) => client.run((c) => c.listTools())));
    for (const { tools } of listed) expect(tools.map((tool) => tool.name)).toContain('echo');
    expect(clients.every((client) => client.reinitialised === 0)).toBe(true);
    // The ids clients hold carry nginx's instance tag; nginx sent each id to one address only.
    for (const client of clients) expect(client.sessionId).toMatch(new RegExp(`^i${home.get(client)! + 1}\\.[0-9a-f-]{36}$`));
    const upstreamsBySession = new Map<string, Set<string>>();
    for (const line of nginx.accessLog().split('\n')) {
      const match = / session=(i\d\.[0-9a-f-]{36}) upstream=(\S+)/.exec(line);
      if (match) upstreamsBySession.set(match[1], (upstreamsBySession.get(match[1]) ?? new Set()).add(match[2]));
    }
    expect(upstreamsBySession.size).toBe(SESSIONS);
    for (const [id, upstreams] of upstreamsBySession) {
      expect([...upstreams]).toEqual([new URL(instances[Number(id[1]) - 1].baseUrl).host]);
    }
  });

  it('routes legacy SSE sessions by the tag nginx writes into their endpoint event', async () => {
    const sse = await Promise.all(Array.from({ length: 6 }, () => connectSse(nginx.origin)));
    try {
      for (const { client } of sse) {
        for (let i = 0; i < 3; i++) {
          const result = await client.callTool({ name: 'echo', arguments: { text: `sse ${i}` } });
          expect(textOf(result)).toBe(`sse ${i}`);
        }
      }
      // initialize, initialized and 3 calls per session, each posted to the tagged endpoint.
      const posts = nginx.accessLog().match(/"POST \/message\?sessionId=i[12]\.[0-9a-f-]{36} HTTP\/1\.1" 202/g) ?? [];
      expect(posts.length).toBe(sse.length * 5);
      expect(nginx.accessLog()).not.toMatch(/"POST \/message\?sessionId=\S+ HTTP\/1\.1" 404/);
    } finally {
      await Promise.all(sse.map(({ client }) => client.close()));
    }
  });

  it('answers 404 for sessions of a stopped instance, and those clients re-initialise on the other', async () => {
    const stopped = 1;
    expect(await instances[stopped].stop()).toBe(0);
    const survivor = instances[1 - stopped];
    const survivorPid = descendants(survivor.server.child.pid!)[0];
    const before = new Map(clients.map((client) => [client, client.sessionId]));
    const pids = await Promise.all(clients.map((client) => client.echoPid('after stop')));
    expect(new Set(pids)).toEqual(new Set([survivorPid]));
    for (const client of clients) {
      const moved = home.get(client) === stopped;
      expect(client.reinitialised).toBe(moved ? 1 : 0);
      expect(client.sessionId === before.get(client)).toBe(!moved);
    }
    expect(await sessionsOf(survivor)).toBe(SESSIONS);
    // The 404s came from the survivor (nginx moved the request on after the refused connection).
    expect(nginx.accessLog()).toMatch(new RegExp(`"POST /mcp HTTP/1\\.1" 404 session=i${stopped + 1}\\.[0-9a-f-]{36} upstream=\\S+, ${new URL(survivor.baseUrl).host}`));
  });
});
