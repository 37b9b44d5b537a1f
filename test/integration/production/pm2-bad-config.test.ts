/**
 * `pm2 start ecosystem.config.js` with a configuration the server refuses (a typo in
 * MCPVISOR_CONFIG's file, as a `pm2 reload` after an edit meets it): pm2 must see the process
 * exit with code 2 and, after its failed starts, show the app `errored`. pm2 runs with its own
 * PM2_HOME in a temporary folder, so no pm2 daemon of the machine is used.
 *
 * `pm2 start` itself waits for the `ready` no failed start sends, up to listen_timeout (60 s):
 * the test reads `pm2 jlist` meanwhile, and stops that command once it knows.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeConfig } from '../../helpers/config';
import { ROOT, eventually } from '../../helpers/processes';
import { freePort, PM2, pm2Runner } from './cluster';

let home: string;
let port: number;
let config: string;
let ecosystem: string;

function pm2Env(): NodeJS.ProcessEnv {
  return { ...process.env, PM2_HOME: home, MCPVISOR_INSTANCES: '1', MCPVISOR_BASE_PORT: String(port), MCPVISOR_CONFIG: config };
}

const pm2 = pm2Runner(pm2Env);

interface App {
  pid: number;
  status: string;
  exitCode?: number;
}

async function apps(): Promise<App[]> {
  const { stdout } = await pm2('jlist');
  return (JSON.parse(stdout) as Array<{ pid: number; pm2_env: { status: string; exit_code?: number } }>).map(({ pid, pm2_env: env }) => ({ pid, status: env.status, exitCode: env.exit_code }));
}

beforeAll(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'mcpvisor-pm2-'));
  port = await freePort();
  config = writeConfig({ shell: { workers: 'two' } });
  ecosystem = path.join(home, 'ecosystem.config.js');
  const real = JSON.stringify(path.join(ROOT, 'ecosystem.config.js'));
  writeFileSync(ecosystem, `module.exports = { apps: require(${real}).apps.map((app) => ({ ...app, cwd: ${JSON.stringify(ROOT)} })) };\n`);
}, 30_000);

afterAll(async () => {
  await pm2('kill').catch(() => undefined);
  rmSync(home, { recursive: true, force: true });
}, 60_000);

describe('pm2 start with a configuration the server refuses', () => {
  it('ends errored after its failed starts, each an exit with code 2, instead of a live process with no port shown online', async () => {
    // The daemon first: a `pm2 jlist` typed while `pm2 start` launches it saw no daemon yet.
    await pm2('ping');
    const starting = execFile(PM2, ['start', ecosystem], { cwd: ROOT, env: pm2Env() }, () => undefined);
    let last: App[] = [];
    const errored = await eventually(async () => {
      last = await apps().catch(() => last);
      return last[0]?.status === 'errored';
    }, 40_000);
    expect({ errored, last }).toEqual({ errored: true, last: [{ pid: 0, status: 'errored', exitCode: 2 }] });
    starting.kill();
  }, 90_000);
});
