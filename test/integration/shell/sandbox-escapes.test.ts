import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { errorCodeOf } from '../../../protocol/results';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { eventually } from '../../helpers/processes';
import { call, processesMatching, shellWorkerPids } from './helpers';

/** This suite's memory limit per sandboxed process. */
const MEMORY_LIMIT = 256 * 1024 * 1024;
let root: string;
let ws: string;
let outside: string;
let server: StdioConnection;
let http: Server;
let hits = 0;
let port: number;

beforeAll(async () => {
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'shell-escape-')));
  ws = path.join(root, 'ws');
  outside = path.join(root, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'secret.txt'), 'secret');
  symlinkSync(outside, path.join(ws, 'link-dir'));
  symlinkSync(path.join(outside, 'secret.txt'), path.join(ws, 'link-file'));
  const config = path.join(root, 'config.json');
  writeFileSync(config, JSON.stringify({ shell: { sandboxMaxFileBytes: 1_048_576, sandboxMaxMemoryBytes: MEMORY_LIMIT } }));
  http = createServer((_req, res) => {
    hits++;
    res.end('reached');
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  port = (http.address() as AddressInfo).port;
  server = await connectStdio('shell-mcp-server', ['--config', config], { SANDBOX_MODE: 'true', SHELL_WORKSPACE: ws });
});
afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => http?.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

const exec = async (command: string) => (await call(server, 'exec', { command })).structuredContent as { stdout: string; stderr: string; exitCode: number | null };

describe('sandbox mode confines commands', () => {
  test('each command gets a sandbox of its own, also when one was started ahead of it', async () => {
    // Sequential commands: each takes the sandbox prepared while the previous one ran.
    const first = await exec('echo left-behind > /tmp/mark; cat /tmp/mark');
    expect(first.stdout).toBe('left-behind\n');
    const second = await exec('cat /tmp/mark 2>/dev/null || echo clean; read -r line; echo "stdin=$?"');
    expect(second.stdout).toBe('clean\nstdin=1\n');
  });

  test('a command cannot write outside the workspace', async () => {
    const result = await exec(
      `echo x > ${outside}/written.txt; echo "outside=$?"; touch /usr/escape-test; echo "usr=$?"; touch /etc/escape-test; echo "etc=$?"; echo x > ${root}/escape.txt`,
    );
    expect(result.stdout).toMatch(/^outside=[1-9]\d*\nusr=[1-9]\d*\netc=[1-9]\d*\n$/);
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    expect(existsSync('/usr/escape-test')).toBe(false);
    expect(existsSync('/etc/escape-test')).toBe(false);
    expect(existsSync(path.join(root, 'escape.txt'))).toBe(false);
  });

  test('a command cannot read the host outside the workspace, even through a symlink', async () => {
    const result = await exec(`cat ${outside}/secret.txt link-dir/secret.txt link-file; cat /etc/shadow /etc/shadow- /etc/gshadow-`);
    expect(result.stdout).toBe('');
    expect(result.exitCode).not.toBe(0);
  });

  test('a process that allocates past the memory limit fails by itself, saying so, and one under it runs', async () => {
    // perl is part of every Debian system (perl-base). A 400 MB string is past the 256 MiB limit.
    const over = await call(server, 'exec', { command: 'perl -e \'my $s = "a" x 400_000_000; print length $s\'' });
    const result = over.structuredContent as { stdout: string; stderr: string; exitCode: number | null };
    expect(result.stdout).toBe('');
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('Out of memory!');
    expect(textOf(over)).toContain('each process in the sandbox may use at most 256 MiB of memory (shell.sandboxMaxMemoryBytes)');
    expect(await exec('perl -e \'my $s = "a" x 40_000_000; print length $s\'')).toMatchObject({ stdout: '40000000', exitCode: 0 });
  });

  test('kernel settings cannot be written, also when the server runs as root', async () => {
    // The value written is the one already there, so a failing run changes nothing on the host.
    const result = await exec('v=$(cat /proc/sys/kernel/printk_ratelimit); echo "$v" > /proc/sys/kernel/printk_ratelimit; echo "sys=$?"; echo 1 > /proc/sys/vm/drop_caches; echo "caches=$?"');
    expect(result.stdout).toMatch(/^sys=[1-9]\d*\ncaches=[1-9]\d*\n$/);
    expect(result.stderr).toMatch(/Read-only file system|Permission denied/);
  });

  test('its /tmp is private', async () => {
    await exec('echo private > /tmp/sandbox-private-marker');
    expect(existsSync('/tmp/sandbox-private-marker')).toBe(false);
  });

  test('a command cannot reach a network address the host can', async () => {
    // perl-base is Essential in Debian, so this runs wherever the sandbox does.
    const connect = `perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:${port}", Timeout => 3) or exit 7; print $s "GET / HTTP/1.0\\r\\n\\r\\n"; print "connected"'`;
    // Control: the same command from the host connects (async: this process is the server).
    expect((await promisify(execFile)('/bin/sh', ['-c', connect], { encoding: 'utf8' })).stdout).toBe('connected');
    expect(await eventually(() => hits > 0, 3000)).toBe(true);
    const before = hits;
    const result = await exec(connect);
    expect(result.exitCode).toBe(7);
    expect(result.stdout).toBe('');
    expect(hits).toBe(before);
  });

  test('a command can neither see nor signal the supervisor or its workers', async () => {
    const pids = [server.pid()!, ...shellWorkerPids(server.pid()!)];
    expect(pids.length).toBeGreaterThan(1);
    const result = await exec(`for p in ${pids.join(' ')}; do kill -0 $p 2>/dev/null && echo "signalled $p"; test -e /proc/$p && echo "sees $p"; done; ls /proc | grep -c '^[0-9]'`);
    expect(result.stdout).not.toMatch(/signalled|sees/);
    // bwrap's init, the shell and ls: nothing of the host.
    expect(Number(result.stdout.trim())).toBeLessThan(6);
  });

  test('a double-forked daemon dies with its command', async () => {
    const result = await exec('(setsid sleep 4301 >/dev/null 2>&1 &); echo started');
    expect(result.stdout).toBe('started\n');
    expect(await eventually(() => processesMatching('sleep 4301').length === 0, 3000)).toBe(true);
  });

  test('a command cannot fill host memory through /dev: it is read-only, and /dev/shm is capped at 64 MiB', async () => {
    // `cd` first: the blocked pattern "> /dev/" is a guardrail, not the boundary tested here. Files
    // of 1 MB, under this suite's file size limit: some 60-odd fit in 64 MiB (pages are rounded up).
    const result = await exec(
      'cd /dev && { echo x > fill; echo "dev=$?"; } 2>/dev/null; i=0; while [ $i -lt 80 ] && head -c 1000000 zero > shm/f$i; do i=$((i+1)); done; echo "files=$i"; rm shm/f*; echo y > shm/small && cat shm/small && echo ok > stdout',
    );
    expect(result.stdout).toMatch(/^dev=[1-9]\d*\nfiles=6\d\ny\nok\n$/);
    expect(result.stderr).toMatch(/No space left on device/);
  });

  test('resource limits hold: a file cannot grow past the configured size', async () => {
    const result = await exec('head -c 2000000 /dev/zero > big.bin; echo "status $?"; wc -c < big.bin');
    expect(result.stdout).toBe('status 153\n1048576\n');
  });
});

describe('sandbox mode confines file tools', () => {
  test.each([
    ['readFile', { path: 'link-file' }],
    ['readFile', { path: 'link-dir/secret.txt' }],
    ['readFile', { path: '../outside/secret.txt' }],
    ['writeFile', { path: 'link-file', content: 'overwritten' }],
    ['writeFile', { path: 'link-dir/new.txt', content: 'x' }],
    ['writeFile', { path: 'link-dir/deeper/new.txt', content: 'x' }],
    ['writeFile', { path: '../outside/new.txt', content: 'x' }],
    ['deleteFile', { path: 'link-dir/secret.txt' }],
    ['deleteFile', { path: '../outside/secret.txt' }],
    ['listDir', { path: 'link-dir' }],
    ['listDir', { path: '..' }],
  ])('%s %j is refused with BLOCKED', async (tool, args) => {
    const result = await call(server, tool, args);
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('BLOCKED');
    expect(textOf(result)).toContain('outside the workspace');
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('secret');
  });
});

describe('sandbox mode with SANDBOX_NETWORK=true', () => {
  let networked: StdioConnection;
  let dir: string;

  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'shell-net-')));
    networked = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE: 'true', SANDBOX_NETWORK: 'true', SHELL_WORKSPACE: dir });
  });
  afterAll(async () => {
    await networked?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a command reaches the host\'s network, and is still confined to the workspace', async () => {
    const before = hits;
    const connect = `perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:${port}", Timeout => 3) or exit 7; print $s "GET / HTTP/1.0\\r\\n\\r\\n"; print "connected"'`;
    const result = (await call(networked, 'exec', { command: `${connect}; echo x > ${outside}/net-written.txt; echo " outside=$?"` })).structuredContent as { stdout: string };
    expect(result.stdout).toMatch(/^connected outside=[1-9]\d*\n$/);
    expect(await eventually(() => hits > before, 3000)).toBe(true);
    expect(existsSync(path.join(outside, 'net-written.txt'))).toBe(false);
    const info = await call(networked, 'getSystemInfo');
    expect((info.structuredContent!.sandbox as { limits: { network: boolean } }).limits.network).toBe(true);
    expect(textOf(info)).toContain("/tmp of 512 MiB, the host's network");
  });
});

describe('sandbox mode without a working bubblewrap', () => {
  let noBwrap: StdioConnection;
  let dir: string;

  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'shell-nobwrap-')));
    const config = path.join(dir, 'config.yaml');
    writeFileSync(config, 'shell:\n  bwrapPath: /nonexistent/bwrap\n');
    noBwrap = await connectStdio('shell-mcp-server', ['--config', config], { SANDBOX_MODE: 'true', SHELL_WORKSPACE: dir });
  });
  afterAll(async () => {
    await noBwrap?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('exec refuses, names the bubblewrap package and runs nothing', async () => {
    const result = await call(noBwrap, 'exec', { command: 'touch ran.txt' });
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('BLOCKED');
    expect(textOf(result)).toContain('`bubblewrap`');
    expect(textOf(result)).toContain('/nonexistent/bwrap is not installed');
    expect(existsSync(path.join(dir, 'ran.txt'))).toBe(false);
  });

  test('getSystemInfo says the sandbox is on but unavailable', async () => {
    const result = await call(noBwrap, 'getSystemInfo');
    expect(result.structuredContent!.sandbox).toMatchObject({ enabled: true, available: false, tool: 'bubblewrap' });
  });
});
