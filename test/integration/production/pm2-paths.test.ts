/**
 * `pm2 start /path/to/ecosystem.config.js` typed in another directory than the checkout, as a
 * systemd unit or an operator in their home directory does, with MCPVISOR_CONFIG relative to that
 * directory. pm2 resolves a relative script against the directory it was typed in, so the app
 * must name its own. pm2 runs with its own PM2_HOME, so no pm2 daemon of the machine is used.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { ROOT, eventually } from '../../helpers/processes';
import { freePort } from './cluster';

const run = promisify(execFile);
const PM2 = path.join(ROOT, 'node_modules', '.bin', 'pm2');
let home: string;
let port: number;
let operatorDir: string;

/** pm2 typed in `cwd`: the operator's directory, except for the last `pm2 kill` (that directory is gone by then). */
function pm2(args: string[], cwd = operatorDir) {
  return run(PM2, args, {
    cwd,
    timeout: 60_000,
    env: { ...process.env, PM2_HOME: home, MCPVISOR_INSTANCES: '1', MCPVISOR_BASE_PORT: String(port), MCPVISOR_CONFIG: 'config.json' },
  });
}

beforeAll(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'mcpvisor-pm2-'));
  port = await freePort();
  operatorDir = path.dirname(writeConfig(fixtureConfig({ thread: false })));
}, 30_000);

afterAll(async () => {
  await pm2(['kill'], home).catch(() => undefined);
  rmSync(home, { recursive: true, force: true });
}, 60_000);

describe('pm2 start with the path of ecosystem.config.js, typed in another directory', () => {
  it('starts the checkout\'s mcpvisor in the checkout, with the config file relative to where pm2 was typed', async () => {
    const started = await pm2(['start', path.join(ROOT, 'ecosystem.config.js')]).then(
      () => 'started',
      (error: { stderr?: string }) => error.stderr ?? String(error),
    );
    const health = async () => {
      try {
        return (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as { status: string; pools: Array<{ name: string }> };
      } catch {
        return undefined;
      }
    };
    if (started === 'started') await eventually(async () => (await health())?.status === 'ok', 30_000);
    const { stdout } = await pm2(['jlist']);
    const apps = (JSON.parse(stdout) as Array<{ name: string; pm2_env: { status: string; pm_cwd: string; restart_time: number } }>).map(({ name, pm2_env: env }) => ({
      name,
      status: env.status,
      cwd: env.pm_cwd,
      restarts: env.restart_time,
    }));
    expect({ started, apps }).toEqual({ started: 'started', apps: [{ name: 'mcpvisor', status: 'online', cwd: ROOT, restarts: 0 }] });
    // The fixture config's only pool: the file in operatorDir was the one read.
    expect(await health()).toMatchObject({ status: 'ok', pools: [{ name: 'test' }] });
  }, 60_000);
});
