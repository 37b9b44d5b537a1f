import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { homeInside, prepareSandboxHome, sandboxHomeDir } from '../../../workers/shell/sandbox-home';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sandbox-home-unit-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('homeInside', () => {
  test('is /home/sandbox unless the workspace is at, above or below it', () => {
    expect(homeInside('/srv/project')).toBe('/home/sandbox');
    expect(homeInside('/home/sandboxes')).toBe('/home/sandbox');
    for (const ws of ['/home', '/home/sandbox', '/home/sandbox/project']) expect([ws, homeInside(ws)]).toEqual([ws, '/sandbox-home']);
  });
});

describe('sandboxHomeDir', () => {
  test('one per workspace under an absolute XDG_STATE_HOME, else under ~/.local/state', () => {
    const a = sandboxHomeDir('/srv/my project', { XDG_STATE_HOME: '/var/state' })!;
    expect(a).toMatch(/^\/var\/state\/mcpvisor\/sandbox-home\/my_project-[0-9a-f]{16}$/);
    expect(sandboxHomeDir('/srv/other/my project', { XDG_STATE_HOME: '/var/state' })).not.toBe(a);
    expect(sandboxHomeDir('/srv/p', { XDG_STATE_HOME: 'relative' })).toMatch(new RegExp(`^${os.homedir()}/\\.local/state/mcpvisor/sandbox-home/p-`));
  });
});

describe('prepareSandboxHome', () => {
  test('makes the directory with mode 0700 and gives its real path', () => {
    const ws = path.join(dir, 'ws');
    mkdirSync(ws);
    const home = prepareSandboxHome(ws, { XDG_STATE_HOME: path.join(dir, 'state') });
    expect(home).toEqual({ inside: '/home/sandbox', host: expect.stringContaining(path.join(dir, 'state', 'mcpvisor', 'sandbox-home', 'ws-')) });
    expect(statSync(home.host!).mode & 0o777).toBe(0o700);
  });

  test('refuses a state directory that leads into the workspace through a symlink', () => {
    const ws = path.join(dir, 'ws');
    mkdirSync(ws);
    symlinkSync(ws, path.join(dir, 'state'));
    const home = prepareSandboxHome(ws, { XDG_STATE_HOME: path.join(dir, 'state') });
    expect(home.host).toBeUndefined();
    expect(home.problem).toContain(`would lie in the workspace ${ws}`);
  });

  test('refuses a home that is a symlink or a file, naming it', () => {
    const ws = path.join(dir, 'ws');
    mkdirSync(ws);
    const target = sandboxHomeDir(ws, { XDG_STATE_HOME: path.join(dir, 'state') })!;
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, '');
    expect(prepareSandboxHome(ws, { XDG_STATE_HOME: path.join(dir, 'state') })).toEqual({ inside: '/home/sandbox', problem: expect.stringMatching(new RegExp(`^${target} (cannot be made: EEXIST|is not a directory)`)) });
    // A link to a directory of the host: refused, and its target's mode left as it was.
    const elsewhere = path.join(dir, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o755 });
    rmSync(target);
    symlinkSync(elsewhere, target);
    expect(prepareSandboxHome(ws, { XDG_STATE_HOME: path.join(dir, 'state') })).toEqual({ inside: '/home/sandbox', problem: `${target} is a symlink` });
    expect(statSync(elsewhere).mode & 0o777).toBe(0o755);
  });
});
