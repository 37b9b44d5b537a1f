/**
 * scripts/setup.sh, the README's first command, run for real with stand-ins for the commands that
 * would change the machine (`npm`, `apt-get`, `sudo`) and, where a test needs one, for `node`:
 * each stand-in records its arguments and does nothing else.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../../helpers/temp';

const ROOT = path.join(__dirname, '..', '..', '..');
const SETUP = path.join(ROOT, 'scripts', 'setup.sh');

/** A directory of stand-ins put first on PATH; `calls` holds one line per stand-in run. */
function standIns(nodeVersion?: string): { bin: string; calls: string } {
  const bin = tempDir('setup-bin-');
  const calls = path.join(bin, 'calls.log');
  const record = (name: string, extra = '') => {
    writeFileSync(path.join(bin, name), `#!/bin/sh\necho "${name} $*" >> '${calls}'\n${extra}exit 0\n`);
    chmodSync(path.join(bin, name), 0o755);
  };
  for (const name of ['npm', 'apt-get', 'sudo']) record(name);
  if (nodeVersion) record('node', `[ "$1" = --version ] && echo v${nodeVersion}\n`);
  return { bin, calls };
}

function runSetup(bin: string): { status: number | null; stderr: string } {
  const result = spawnSync('bash', [SETUP], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` }, encoding: 'utf8' });
  return { status: result.status, stderr: result.stderr };
}

const npmCalls = (calls: string) => (existsSync(calls) ? readFileSync(calls, 'utf8').split('\n').filter((line) => line.startsWith('npm ')) : []);

describe('scripts/setup.sh', () => {
  test("stops at once, saying what to install, when Node is older than package.json's engines (Debian 12's 18)", () => {
    const { bin, calls } = standIns('18.19.0');
    const { status, stderr } = runSetup(bin);
    const wanted = /^>=(.+)$/.exec((JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node)![1];
    expect(status).toBe(1);
    expect(stderr).toContain(`Node.js ${wanted} or later, with npm, is needed (found: node 18.19.0, npm present)`);
    expect(stderr).toContain('Debian 12 ships Node 18');
    expect(npmCalls(calls)).toEqual([]);
  });

  test('with the Node running these tests, goes on to npm ci and the build', () => {
    const { bin, calls } = standIns();
    const { status, stderr } = runSetup(bin);
    expect({ status, stderr }).toEqual({ status: 0, stderr: expect.not.stringContaining('is needed') });
    expect(npmCalls(calls)).toEqual(['npm ci --no-audit --no-fund', 'npm run build']);
  });

  test('runs npm with nothing that downloads from elsewhere than the registry: no browser for puppeteer, no report to scarf.sh', () => {
    const { bin, calls } = standIns();
    writeFileSync(path.join(bin, 'npm'), `#!/bin/sh\necho "npm $* PUPPETEER_SKIP_DOWNLOAD=$PUPPETEER_SKIP_DOWNLOAD SCARF_ANALYTICS=$SCARF_ANALYTICS" >> '${calls}'\n`);
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
    delete env.PUPPETEER_SKIP_DOWNLOAD;
    delete env.SCARF_ANALYTICS;
    const result = spawnSync('bash', [SETUP], { env, encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(npmCalls(calls)[0]).toBe('npm ci --no-audit --no-fund PUPPETEER_SKIP_DOWNLOAD=1 SCARF_ANALYTICS=false');
    // npm ci run without this script: @scarf/scarf reads the root package's scarfSettings.
    expect((JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scarfSettings?: unknown }).scarfSettings).toEqual({ enabled: false });
  });

  describe('with Debian packages missing (as root, or as a user with or without sudo)', () => {
    /** A PATH of only what the script needs (no chromium, bwrap…), `id -u` answering `uid`, and `sudo` when asked for. */
    function userPath(withSudo: boolean, uid = 1000): { bin: string; calls: string } {
      const { bin, calls } = standIns();
      writeFileSync(path.join(bin, 'id'), `#!/bin/sh\necho ${uid}\n`);
      chmodSync(path.join(bin, 'id'), 0o755);
      for (const tool of ['sed', 'sort', 'head', 'dirname', 'node']) {
        const found = spawnSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
        symlinkSync(found, path.join(bin, tool));
      }
      if (!withSudo) unlinkSync(path.join(bin, 'sudo'));
      return { bin, calls };
    }
    const run = (bin: string) => spawnSync('/bin/bash', [SETUP], { env: { ...process.env, PATH: bin }, encoding: 'utf8' });

    test('without sudo, stops saying which packages to install as root, before npm', () => {
      const { bin, calls } = userPath(false);
      const result = run(bin);
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(/setup: the Debian packages chromium bubblewrap .*are missing, and installing them needs root/);
      expect(existsSync(calls) ? readFileSync(calls, 'utf8') : '').toBe('');
    });

    test('with sudo, installs them through sudo', () => {
      const { bin, calls } = userPath(true);
      const result = run(bin);
      expect(result.status).toBe(0);
      expect(readFileSync(calls, 'utf8')).toMatch(/^sudo apt-get install -y -qq --no-install-recommends chromium bubblewrap/m);
      // libfaketime, which the clock-jump tests preload: CI gets it too.
      expect(readFileSync(calls, 'utf8')).toMatch(/^sudo apt-get install .* faketime$/m);
    });

    test('without apt-get (not Debian), stops naming the packages and saying so, before npm', () => {
      const { bin, calls } = userPath(false, 0);
      unlinkSync(path.join(bin, 'apt-get'));
      const result = run(bin);
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(/setup: the Debian packages chromium bubblewrap .*are missing and there is no apt-get here to install them/);
      expect(result.stderr).not.toContain('command not found');
      expect(npmCalls(calls)).toEqual([]);
    });

    test.each([
      ['update', /setup: apt-get update failed \(above\): the Debian mirrors must be reachable to install chromium bubblewrap/],
      ['install', /setup: apt-get could not install chromium bubblewrap .*\(its message is above\)/],
    ])('when apt-get %s fails, stops saying what it could not do, before npm', (step, message) => {
      const { bin, calls } = userPath(false, 0);
      writeFileSync(path.join(bin, 'apt-get'), `#!/bin/sh\necho "apt-get $*" >> '${calls}'\n[ "$1" = ${step} ] && { echo "E: Unable to locate package xvfb" >&2; exit 100; }\nexit 0\n`);
      const result = run(bin);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('E: Unable to locate package xvfb');
      expect(result.stderr).toMatch(message);
      expect(npmCalls(calls)).toEqual([]);
    });
  });
});
