import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const FILE = path.join(__dirname, '..', '..', '..', 'ecosystem.config.js');

/** The apps of ecosystem.config.js, loaded afresh with these variables set. */
function appsWith(env: Record<string, string>): Array<{ name: string; args: string[]; kill_timeout: number }> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    let apps: Array<{ name: string; args: string[]; kill_timeout: number }> = [];
    jest.isolateModules(() => {
      apps = (require(FILE) as { apps: typeof apps }).apps;
    });
    return apps;
  } finally {
    for (const name of Object.keys(env)) delete process.env[name];
    Object.assign(process.env, saved);
  }
}

describe('ecosystem.config.js', () => {
  it('makes one app per instance, each on its own port from the base port', () => {
    expect(appsWith({}).map((app) => [app.name, app.args[3]])).toEqual([['mcpvisor', '3000']]);
    expect(appsWith({ MCPVISOR_INSTANCES: '2', MCPVISOR_BASE_PORT: '65534' }).map((app) => [app.name, app.args[3]])).toEqual([['mcpvisor-1', '65534'], ['mcpvisor-2', '65535']]);
    expect(appsWith({ MCPVISOR_INSTANCES: ' ', MCPVISOR_BASE_PORT: '' })).toHaveLength(1);
  });

  it('stops pm2 start naming a variable that is not a count or port: NaN gave no app, and pm2 started nothing and said nothing', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ MCPVISOR_INSTANCES: 'abc' }, "MCPVISOR_INSTANCES must be an integer from 1 to 64, got 'abc'"],
      [{ MCPVISOR_INSTANCES: '0' }, "MCPVISOR_INSTANCES must be an integer from 1 to 64, got '0'"],
      [{ MCPVISOR_INSTANCES: '1.5' }, "MCPVISOR_INSTANCES must be an integer from 1 to 64, got '1.5'"],
      [{ MCPVISOR_INSTANCES: '1e6' }, "MCPVISOR_INSTANCES must be an integer from 1 to 64, got '1e6'"],
      [{ MCPVISOR_BASE_PORT: 'abc' }, "MCPVISOR_BASE_PORT must be an integer from 1 to 65535, got 'abc'"],
      [{ MCPVISOR_BASE_PORT: '0' }, "MCPVISOR_BASE_PORT must be an integer from 1 to 65535, got '0'"],
      [{ MCPVISOR_INSTANCES: '2', MCPVISOR_BASE_PORT: '65535' }, "MCPVISOR_BASE_PORT must be an integer from 1 to 65534, got '65535'"],
    ];
    for (const [env, message] of cases) expect(() => appsWith(env)).toThrow(`ecosystem.config.js: ${message}`);
  });

  it("outwaits the config's drain before SIGKILL: kill_timeout is http.shutdownGraceMs + 5 s (it was 15 s whatever the config said)", () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mcpvisor-ecosystem-'));
    try {
      const yaml = path.join(dir, 'c.yaml');
      writeFileSync(yaml, 'http:\n  shutdownGraceMs: 30000\n');
      const json = path.join(dir, 'c.json');
      writeFileSync(json, JSON.stringify({ http: { shutdownGraceMs: 2000 } }));
      const huge = path.join(dir, 'huge.json');
      writeFileSync(huge, JSON.stringify({ http: { shutdownGraceMs: 3e9 } }));
      expect(appsWith({ MCPVISOR_CONFIG: yaml, MCPVISOR_INSTANCES: '2' }).map((app) => app.kill_timeout)).toEqual([35_000, 35_000]);
      expect(appsWith({ MCPVISOR_CONFIG: json })[0].kill_timeout).toBe(7_000);
      // pm2's timer would fire at once past 2^31 - 1 ms (the server refuses such a grace anyway).
      expect(appsWith({ MCPVISOR_CONFIG: huge })[0].kill_timeout).toBe(2 ** 31 - 1);
      // Unset, or a file the server will refuse naming why: the default drain.
      expect(appsWith({})[0].kill_timeout).toBe(15_000);
      expect(appsWith({ MCPVISOR_CONFIG: path.join(dir, 'missing.yaml') })[0].kill_timeout).toBe(15_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads MCPVISOR_CONFIG=~/… as a file in the home directory, as the server does (it passed <cwd>/~/…)', () => {
    const home = mkdtempSync(path.join(tmpdir(), 'ecosystem-home-'));
    try {
      writeFileSync(path.join(home, 'mcpvisor.json'), JSON.stringify({ http: { shutdownGraceMs: 20_000 } }));
      // In a process of its own: os.homedir() reads the process's real HOME, not jest's copy of the environment.
      const script = `process.stdout.write(JSON.stringify(require(${JSON.stringify(FILE)}).apps[0]))`;
      const app = JSON.parse(execFileSync(process.execPath, ['-e', script], { env: { ...process.env, HOME: home, MCPVISOR_CONFIG: '~/mcpvisor.json' }, encoding: 'utf8' })) as { args: string[]; kill_timeout: number };
      expect(app.args.slice(-2)).toEqual(['--config', path.join(home, 'mcpvisor.json')]);
      expect(app.kill_timeout).toBe(25_000);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
