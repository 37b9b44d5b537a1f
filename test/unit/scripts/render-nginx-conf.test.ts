import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..', '..');
const RENDERER = path.join(ROOT, 'deploy', 'render-nginx-conf.js');
const ECOSYSTEM = path.join(ROOT, 'ecosystem.config.js');
const VARIABLES = ['MCPVISOR_INSTANCES', 'MCPVISOR_BASE_PORT', 'NGINX_UPSTREAMS'];

/** Runs `read` with exactly these of the layout variables set; the error's text after its `who: ` prefix when it throws. */
function withEnv<T>(env: Record<string, string>, read: () => T): T | { refused: string } {
  const saved = { ...process.env };
  for (const name of VARIABLES) delete process.env[name];
  Object.assign(process.env, env);
  try {
    return read();
  } catch (error) {
    return { refused: (error as Error).message.replace(/^[^:]+: /, '') };
  } finally {
    for (const name of VARIABLES) delete process.env[name];
    Object.assign(process.env, saved);
  }
}

/** The ports pm2 starts: each app's `--port`, read from ecosystem.config.js loaded afresh. */
function pm2Ports(env: Record<string, string>): string[] | { refused: string } {
  return withEnv(env, () => {
    let apps: Array<{ args: string[] }> = [];
    jest.isolateModules(() => {
      apps = (require(ECOSYSTEM) as { apps: typeof apps }).apps;
    });
    return apps.map((app) => app.args[app.args.indexOf('--port') + 1]);
  });
}

/** The ports nginx routes to: the shared upstream's servers in the rendered file. */
function nginxPorts(env: Record<string, string>): string[] | { refused: string } {
  return withEnv(env, () => {
    const { render } = require(RENDERER) as { render(options?: Record<string, unknown>): string };
    const shared = /upstream mcpvisor \{([\s\S]*?)\}/.exec(render())?.[1] ?? '';
    return [...shared.matchAll(/server [^:\s]+:(\S+) max_fails/g)].map((match) => match[1]);
  });
}

describe('deploy/render-nginx-conf.js', () => {
  it('routes to the ports ecosystem.config.js starts, and refuses what it refuses: it rendered port 0 for an empty MCPVISOR_BASE_PORT (pm2: 3000) and 127.0.0.1:NaN for abc', () => {
    const cases: Array<[Record<string, string>, string[] | { refused: string }]> = [
      [{}, ['3000']],
      [{ MCPVISOR_INSTANCES: '2', MCPVISOR_BASE_PORT: '3710' }, ['3710', '3711']],
      [{ MCPVISOR_INSTANCES: ' ', MCPVISOR_BASE_PORT: '' }, ['3000']],
      [{ MCPVISOR_INSTANCES: '2', MCPVISOR_BASE_PORT: '65534' }, ['65534', '65535']],
      [{ MCPVISOR_BASE_PORT: 'abc' }, { refused: "MCPVISOR_BASE_PORT must be an integer from 1 to 65535, got 'abc'" }],
      [{ MCPVISOR_BASE_PORT: '0' }, { refused: "MCPVISOR_BASE_PORT must be an integer from 1 to 65535, got '0'" }],
      [{ MCPVISOR_INSTANCES: '2.5' }, { refused: "MCPVISOR_INSTANCES must be an integer from 1 to 64, got '2.5'" }],
      [{ MCPVISOR_INSTANCES: '0' }, { refused: "MCPVISOR_INSTANCES must be an integer from 1 to 64, got '0'" }],
      [{ MCPVISOR_INSTANCES: '2', MCPVISOR_BASE_PORT: '65535' }, { refused: "MCPVISOR_BASE_PORT must be an integer from 1 to 65534, got '65535'" }],
    ];
    for (const [env, want] of cases) {
      expect({ env, nginx: nginxPorts(env) }).toEqual({ env, nginx: want });
      expect({ env, pm2: pm2Ports(env) }).toEqual({ env, pm2: want });
    }
  });

  it('leaves the two variables alone when NGINX_UPSTREAMS names the instances', () => {
    expect(nginxPorts({ NGINX_UPSTREAMS: '10.0.0.5:3000,10.0.0.6:3001', MCPVISOR_BASE_PORT: 'abc' })).toEqual(['3000', '3001']);
  });

  it('says a refusal in one line with exit code 1 and prints no file (it printed a stack trace)', () => {
    const run = spawnSync(process.execPath, [RENDERER], { env: { ...process.env, MCPVISOR_BASE_PORT: 'abc', MCPVISOR_INSTANCES: '', NGINX_UPSTREAMS: '' }, encoding: 'utf8' });
    expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({
      status: 1,
      stdout: '',
      stderr: "render-nginx-conf: MCPVISOR_BASE_PORT must be an integer from 1 to 65535, got 'abc'\n",
    });
  });
});
