/**
 * The pm2 daemon killed (`kill -9` of God, an OOM kill, a crash) under an instance started from
 * ecosystem.config.js: the instance must not stay behind as an orphan nobody reads or stops,
 * holding its port, so that a new daemon's `pm2 start` (or systemd's `pm2 resurrect`) serves
 * again. pm2 runs with its own PM2_HOME in a temporary folder, so no pm2 daemon of the machine
 * is used.
 *
 * The app has `pmx: false`: pm2 otherwise loads @pm2/io into the app, which calls
 * `process.exit(1)` once its IPC send fails, so the supervisor's own handling of the lost
 * channel is what this test sees, whatever pm2 does by itself.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { ROOT, descendants, eventually, isAlive } from '../../helpers/processes';
import { freePort, pm2Runner } from './cluster';

let home: string;
let port: number;
let config: string;
let ecosystem: string;
/** The supervisor under the killed daemon: killed after the tests should it have outlived them. */
let orphan: number | undefined;

const pm2 = pm2Runner(() => ({ ...process.env, PM2_HOME: home, MCPVISOR_INSTANCES: '1', MCPVISOR_BASE_PORT: String(port), MCPVISOR_CONFIG: config }));

async function app(): Promise<{ pid: number; status: string; restarts: number }> {
  const { stdout } = await pm2('jlist');
  const [first] = JSON.parse(stdout) as Array<{ pid: number; pm2_env: { status: string; restart_time: number } }>;
  return { pid: first.pid, status: first.pm2_env.status, restarts: first.pm2_env.restart_time };
}

async function healthy(): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/health`)).status === 200;
  } catch {
    return false;
  }
}

/** Whether the port can be bound right now (nobody listens on it). */
function bindable(): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

beforeAll(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'mcpvisor-pm2-'));
  port = await freePort();
  config = writeConfig(fixtureConfig({ thread: false, process: { callTimeoutMs: 30_000 } }));
  ecosystem = path.join(home, 'ecosystem.config.js');
  const real = JSON.stringify(path.join(ROOT, 'ecosystem.config.js'));
  writeFileSync(ecosystem, `module.exports = { apps: require(${real}).apps.map((app) => ({ ...app, cwd: ${JSON.stringify(ROOT)}, pmx: false })) };\n`);
}, 30_000);

afterAll(async () => {
  await pm2('kill').catch(() => undefined);
  if (orphan !== undefined && isAlive(orphan)) process.kill(orphan, 'SIGKILL');
  rmSync(home, { recursive: true, force: true });
}, 60_000);

describe('the pm2 daemon killed under a running instance', () => {
  it('stops the orphaned supervisor and its workers, answering its running call, and frees the port for the next pm2 start', async () => {
    await pm2('start', ecosystem);
    expect(await eventually(healthy, 30_000)).toBe(true);
    const { pid } = await app();
    orphan = pid;
    const workers = descendants(pid);
    expect(workers.length).toBeGreaterThan(0);
    const client = new Client({ name: 'pm2-daemon-death', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
    const running = client.callTool({ name: 'sleep', arguments: { ms: 20_000 } }).then(
      (result) => JSON.stringify(result.content),
      (error: unknown) => `thrown: ${String(error)}`,
    );
    // Until the server runs it: a fixed pause lost the race on a busy machine.
    const inFlight = async () => ((await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as { inFlightCalls: number }).inFlightCalls > 0;
    expect(await eventually(inFlight, 10_000)).toBe(true);

    const god = Number(readFileSync(path.join(home, 'pm2.pid'), 'utf8'));
    process.kill(god, 'SIGKILL');
    expect(await eventually(() => !isAlive(god), 10_000)).toBe(true);

    // Well before the call's 20 s: the supervisor did not wait for it, nor go on serving.
    expect(await eventually(() => !isAlive(pid), 10_000)).toBe(true);
    expect(await running).toContain('SHUTTING_DOWN');
    expect(await eventually(() => workers.every((worker) => !isAlive(worker)), 10_000)).toBe(true);
    expect(await bindable()).toBe(true);
    await client.close().catch(() => undefined);

    // A new daemon starts the app on the same port at the first attempt.
    await pm2('start', ecosystem);
    expect(await eventually(healthy, 30_000)).toBe(true);
    expect(await app()).toMatchObject({ status: 'online', restarts: 0 });
  }, 90_000);
});
