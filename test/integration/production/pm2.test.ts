/**
 * `pm2 start ecosystem.config.js` as the operator guide shows it: two fork-mode instances on
 * consecutive ports behind nginx, a `pm2 reload` while clients keep calling, then `pm2 kill`.
 * pm2 runs with its own PM2_HOME in a temporary folder, so no pm2 daemon of the machine is used.
 *
 * The apps come from the real ecosystem.config.js through a one-line wrapper that only sets
 * `cwd` (the test runs pm2 from a temporary PM2_HOME).
 *
 * The reload is the rolling one of docs/production.md: `pm2 reload <app>` one instance at a time,
 * each after the previous one answers /health. A bare `pm2 reload ecosystem.config.js` restarts
 * two apps at once (PM2_CONCURRENT_ACTIONS defaults to 2), so both instances are down together
 * for a moment (nginx answers 502) even though each waits for its replacement's `ready`
 * (`wait_ready`): the recipe reloads one app at a time.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { ROOT, eventually, isAlive } from '../../helpers/processes';
import { freePort, pm2Runner, RecoveringClient, startNginx, type Nginx } from './cluster';

let home: string;
let basePort: number;
let config: string;
let ecosystem: string;
let nginx: Nginx | undefined;
const clients: RecoveringClient[] = [];

const pm2 = pm2Runner(() => ({ ...process.env, PM2_HOME: home, MCPVISOR_INSTANCES: '2', MCPVISOR_BASE_PORT: String(basePort), MCPVISOR_CONFIG: config }));

async function pids(): Promise<number[]> {
  const { stdout } = await pm2('jlist');
  return (JSON.parse(stdout) as Array<{ name: string; pid: number }>).sort((a, b) => a.name.localeCompare(b.name)).map((app) => app.pid);
}

async function healthy(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/health`)).status === 200;
  } catch {
    return false;
  }
}

/** Whether `port` on 127.0.0.1 can be bound right now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** Two consecutive free ports (at most 20 probes). */
async function consecutivePorts(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await freePort();
    if (port < 65_535 && (await bindable(port + 1))) return port;
  }
  throw new Error('no two consecutive free ports');
}

beforeAll(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'mcpvisor-pm2-'));
  basePort = await consecutivePorts();
  config = writeConfig(fixtureConfig({ thread: false }));
  ecosystem = path.join(home, 'ecosystem.config.js');
  const real = JSON.stringify(path.join(ROOT, 'ecosystem.config.js'));
  writeFileSync(ecosystem, `module.exports = { apps: require(${real}).apps.map((app) => ({ ...app, cwd: ${JSON.stringify(ROOT)} })) };\n`);
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await nginx?.stop();
  await pm2('kill').catch(() => undefined);
  rmSync(home, { recursive: true, force: true });
}, 60_000);

describe('pm2 with ecosystem.config.js', () => {
  it('starts two fork-mode instances on consecutive ports that report healthy', async () => {
    await pm2('start', ecosystem);
    expect(await eventually(async () => (await healthy(basePort)) && (await healthy(basePort + 1)), 30_000)).toBe(true);
    const { stdout } = await pm2('jlist');
    const apps = JSON.parse(stdout) as Array<{ name: string; pm2_env: { exec_mode: string; status: string } }>;
    expect(apps.map((app) => [app.name, app.pm2_env.exec_mode, app.pm2_env.status]).sort()).toEqual([
      ['mcpvisor-1', 'fork_mode', 'online'],
      ['mcpvisor-2', 'fork_mode', 'online'],
    ]);
    const health = (await (await fetch(`http://127.0.0.1:${basePort}/health`)).json()) as { status: string; pools: Array<{ name: string; alive: number }> };
    expect(health).toMatchObject({ status: 'ok', pools: [{ name: 'test', alive: 1 }] });
    // pino's JSON lines (stderr) land in pm2's error log of each app.
    const log = readFileSync(path.join(home, 'logs', 'mcpvisor-2-error.log'), 'utf8');
    expect(log).toContain(`"url":"http://127.0.0.1:${basePort + 1}/mcp","msg":"listening"`);
  }, 60_000);

  it('reloads both instances while clients keep calling: no failed call, only 404s that re-initialise', async () => {
    nginx = await startNginx([`127.0.0.1:${basePort}`, `127.0.0.1:${basePort + 1}`]);
    for (let i = 0; i < 20; i++) clients.push(await new RecoveringClient(nginx.mcpUrl).connect());
    const before = await pids();
    let reloading = true;
    const failures: string[] = [];
    let calls = 0;
    const loops = clients.map(async (client, i) => {
      // Bounded: at most 2,000 calls per client, and it stops once the reload is done.
      for (let n = 0; n < 2000 && (reloading || n < 3); n++) {
        try {
          const result = await client.run((c) => c.callTool({ name: 'echo', arguments: { text: `${i}:${n}` } }));
          calls++;
          if (result.isError || (result.structuredContent as { text?: string } | undefined)?.text !== `${i}:${n}`) failures.push(JSON.stringify(result));
        } catch (error) {
          failures.push(String(error));
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const [i, name] of ['mcpvisor-1', 'mcpvisor-2'].entries()) {
      await pm2('reload', name);
      expect(await eventually(() => healthy(basePort + i), 30_000)).toBe(true);
    }
    reloading = false;
    await Promise.all(loops);
    const after = await pids();
    expect(after.every((pid, i) => pid !== before[i])).toBe(true);
    expect(before.every((pid) => !isAlive(pid))).toBe(true);
    const kinds = new Map<string, number>();
    for (const failure of failures) {
      const kind = /"code":"([A-Z_]+)"/.exec(failure)?.[1] ?? /<title>([^<]+)/.exec(failure)?.[1] ?? failure.slice(0, 80);
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    expect(Object.fromEntries(kinds)).toEqual({});
    expect(calls).toBeGreaterThan(clients.length * 3);
    // Every client whose instance restarted lost its session once and started a new one.
    expect(clients.every((client) => client.reinitialised >= 1 && client.reinitialised <= 2)).toBe(true);
  }, 90_000);

  it('stops every instance and its workers with pm2 kill', async () => {
    const running = await pids();
    await pm2('kill');
    expect(await eventually(() => running.every((pid) => !isAlive(pid)), 20_000)).toBe(true);
    expect(await healthy(basePort)).toBe(false);
  }, 60_000);
});
