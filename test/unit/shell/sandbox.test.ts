import { mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GIT_NO_EDITOR } from '../../../workers/shell/command-env';
import { limitsPrelude, probeSandbox, resolverMountArgs, sandboxArgv, sandboxEnv, type SandboxOptions } from '../../../workers/shell/sandbox';

const base: SandboxOptions = {
  bwrapPath: '/usr/bin/bwrap',
  workspace: '/tmp/project',
  maxProcesses: 64,
  maxFileBytes: 1_000_000,
  cpuSeconds: 31,
  tmpBytes: 2_000_000,
};

/** The value that follows `flag` in argv (first occurrence). */
const after = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

describe('sandboxArgv', () => {
  const { file, args } = sandboxArgv('echo "$HOME" && ls', base);

  test('runs bwrap with every namespace unshared, dying with its parent, in a new session', () => {
    expect(file).toBe('/usr/bin/bwrap');
    for (const flag of ['--unshare-all', '--die-with-parent', '--new-session']) expect(args).toContain(flag);
    expect(args).not.toContain('--share-net');
    if (process.getuid?.() === 0) expect(after(args, '--cap-drop')).toBe('ALL');
  });

  test('with the network, binds what /etc/resolv.conf links to outside the system directories (systemd-resolved), so names resolve', () => {
    const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'resolv-')));
    try {
      writeFileSync(path.join(dir, 'stub-resolv.conf'), 'nameserver 127.0.0.53\n');
      symlinkSync(path.join(dir, 'stub-resolv.conf'), path.join(dir, 'resolv.conf'));
      expect(resolverMountArgs(path.join(dir, 'resolv.conf'))).toEqual(['--ro-bind', path.join(dir, 'stub-resolv.conf'), path.join(dir, 'stub-resolv.conf')]);
      expect(resolverMountArgs('/etc/passwd')).toEqual([]);
      expect(resolverMountArgs(path.join(dir, 'missing'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('shares the host\'s network only when asked, every other namespace still unshared', () => {
    const shared = sandboxArgv('true', { ...base, network: true }).args;
    expect(shared.slice(shared.indexOf('--unshare-all'), shared.indexOf('--unshare-all') + 2)).toEqual(['--unshare-all', '--share-net']);
  });

  test('binds system directories read-only and only the workspace read-write, after a private /tmp', () => {
    expect(args.filter((arg, i) => args[i - 1] === '--ro-bind' && arg === '/usr')).toEqual(['/usr']);
    expect(args.filter((_, i) => args[i - 1] === '--bind')).toEqual(['/tmp/project']);
    expect(args.indexOf('--tmpfs')).toBeLessThan(args.indexOf('--bind'));
    expect(after(args, '--size')).toBe('2000000');
    expect(after(args, '--chdir')).toBe('/tmp/project');
    expect(after(args, '--proc')).toBe('/proc');
    expect(after(args, '--dev')).toBe('/dev');
  });

  test('binds the protected paths read-only after the workspace, the directories between them bound onto themselves first', () => {
    const readOnly = [{ path: '/tmp/project/node_modules', reason: "holds the server's own code" }, { path: '/tmp/project/etc/mcpvisor.yaml', reason: "is the server's own configuration" }];
    const guarded = sandboxArgv('true', { ...base, readOnly }).args;
    const from = guarded.indexOf('/tmp/project') - 1;
    expect(guarded.slice(from, guarded.indexOf('--chdir'))).toEqual([
      '--bind', '/tmp/project', '/tmp/project',
      '--bind', '/tmp/project/etc', '/tmp/project/etc',
      '--ro-bind', '/tmp/project/node_modules', '/tmp/project/node_modules',
      '--ro-bind', '/tmp/project/etc/mcpvisor.yaml', '/tmp/project/etc/mcpvisor.yaml',
    ]);
  });

  test('makes /dev read-only but for a /dev/shm of at most 64 MiB, so no tmpfs of unset size is writable', () => {
    const dev = args.indexOf('--dev');
    expect(args.slice(dev, dev + 8)).toEqual(['--dev', '/dev', '--size', '2000000', '--tmpfs', '/dev/shm', '--remount-ro', '/dev']);
    const large = sandboxArgv('true', { ...base, tmpBytes: 1024 ** 3 }).args;
    expect(after(large, '--size')).toBe(String(64 * 1024 * 1024));
  });

  test('sets the process, file size, CPU and core limits in the shell, then evaluates the command passed as one argument', () => {
    const command = args.slice(args.indexOf('--') + 1);
    expect(command).toEqual(['/bin/sh', '-c', limitsPrelude(base), 'sh', 'echo "$HOME" && ls']);
    expect(limitsPrelude(base)).toBe(
      '{ ulimit -p 64 || ulimit -u 64; } 2>/dev/null; ulimit -f 1953; ulimit -t 31; ulimit -c 0; exec /bin/sh -c "$1" sh',
    );
  });

  test('sets the memory limit (RLIMIT_DATA, in KiB) when one is given', () => {
    expect(limitsPrelude({ ...base, maxMemoryBytes: 256 * 1024 * 1024 + 100 })).toBe(
      '{ ulimit -p 64 || ulimit -u 64; } 2>/dev/null; ulimit -f 1953; ulimit -t 31; ulimit -c 0; ulimit -d 262144; exec /bin/sh -c "$1" sh',
    );
  });

  test('gives the command a fixed environment with nothing of the host; without network, package managers do not retry', () => {
    const user = os.userInfo().username;
    const fixed = { PATH: expect.stringContaining('/usr/bin'), HOME: '/home/sandbox', XDG_CONFIG_HOME: '/home/sandbox/.config', XDG_DATA_HOME: '/home/sandbox/.local/share', XDG_STATE_HOME: '/home/sandbox/.local/state', USER: user, LOGNAME: user, TMPDIR: '/tmp', LANG: 'C.UTF-8', TERM: 'dumb', SHELL: '/bin/sh', PAGER: 'cat', GIT_PAGER: 'cat', GIT_EDITOR: GIT_NO_EDITOR, GIT_SEQUENCE_EDITOR: GIT_NO_EDITOR, XDG_CACHE_HOME: '/tmp/.cache', npm_config_cache: '/tmp/.npm', npm_config_update_notifier: 'false' };
    expect(sandboxEnv('/tmp/project', false, '/home/sandbox')).toEqual({ ...fixed, npm_config_fetch_retries: '0', PIP_RETRIES: '0' });
    expect(sandboxEnv('/tmp/project', true, '/home/sandbox')).toEqual(fixed);
  });

  test("binds the sandbox's home read-write at its own path, or without one mounts an empty tmpfs there the size of /tmp", () => {
    const kept = sandboxArgv('true', { ...base, home: { inside: '/home/sandbox', host: '/var/state/h' } }).args;
    expect(kept.join(' ')).toContain('--bind /var/state/h /home/sandbox');
    const empty = sandboxArgv('true', { ...base, home: { inside: '/home/sandbox' } }).args;
    expect(empty.join(' ')).toContain(`--size ${base.tmpBytes} --tmpfs /home/sandbox`);
  });
});

describe('probeSandbox', () => {
  let ws: string;
  beforeAll(() => {
    ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'shell-probe-')));
  });
  afterAll(() => rmSync(ws, { recursive: true, force: true }));

  test('finds bubblewrap working on this machine', async () => {
    expect(await probeSandbox({ ...base, workspace: ws })).toEqual({ available: true });
  });

  test('reports a missing binary with the path it looked at', async () => {
    const state = await probeSandbox({ ...base, workspace: ws, bwrapPath: '/nonexistent/bwrap' });
    expect(state).toMatchObject({ available: false, reason: '/nonexistent/bwrap is not installed or not executable', cause: 'not-installed' });
    expect(state.fix).toContain('apt-get install bubblewrap');
  });

  test('reports a binary that cannot build the sandbox', async () => {
    const state = await probeSandbox({ ...base, workspace: ws, bwrapPath: '/bin/false' });
    expect(state.available).toBe(false);
    expect(state.reason).toMatch(/^bwrap cannot create its sandbox here/);
  });
});
