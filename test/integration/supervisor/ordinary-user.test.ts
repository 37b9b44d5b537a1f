/**
 * Files an ordinary user's server cannot read (nobody's when the tests run as root): each error
 * names the file or the directory that refuses, its owner and mode, and the server's uid.
 */
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { ordinaryUserDir, ORDINARY_UID, runAsOrdinaryUser } from '../../helpers/ordinary-user';
import { fixtureConfig } from '../../helpers/config';
import { bin, ROOT } from '../../helpers/processes';

let dir: string;
beforeAll(() => {
  dir = ordinaryUserDir('ordinary-files-');
});
/** Opens the directories the test closed, so that a test run that is not root can remove them. */
function reopen(...dirs: string[]): void {
  for (const closed of dirs) chmodSync(closed, 0o700);
}

/** A file with `text` that nobody but root may read (mode 000; its owner, when not root, neither). */
function unreadable(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  chmodSync(file, 0o000);
  return file;
}

/** A readable file with `text` in a directory no one but root may enter (mode 000). */
function behindClosedDirectory(name: string, text: string): { file: string; closed: string } {
  const closed = path.join(dir, `closed-${name}`);
  mkdirSync(closed);
  const file = path.join(closed, name);
  writeFileSync(file, text, { mode: 0o644 });
  chmodSync(closed, 0o000);
  return { file, closed };
}

describe('a config file the server user cannot read', () => {
  test('is refused at start (exit 2) naming the file, its owner and mode, and the uid', async () => {
    const file = unreadable('config.json', '{"transport":"stdio"}');
    const { code, stderr } = await runAsOrdinaryUser([process.execPath, bin('mcpvisor'), '--config', file]);
    expect(code).toBe(2);
    expect(stderr).toContain(`mcpvisor: cannot read config file ${file}: permission denied (EACCES): ${file} (owner uid ${process.getuid!()}, gid ${process.getgid!()}, mode 0000) is not readable by this server's user (uid ${ORDINARY_UID}); make it readable`);
  });

  test('in a directory it may not enter, names that directory', async () => {
    const { file, closed } = behindClosedDirectory('config.json', '{"transport":"stdio"}');
    const { code, stderr } = await runAsOrdinaryUser([process.execPath, bin('shell-mcp-server')], { MCPVISOR_CONFIG: file });
    reopen(closed);
    expect(code).toBe(2);
    expect(stderr).toContain(`shell-mcp-server: MCPVISOR_CONFIG: cannot read config file ${file}: permission denied (EACCES): the directory ${closed} (owner uid ${process.getuid!()}, gid ${process.getgid!()}, mode 0000) does not let this server's user (uid ${ORDINARY_UID}) through`);
  });
});

describe('an OpenAPI description the server user cannot read', () => {
  const petstore = path.join(ROOT, 'test', 'fixtures', 'openapi', 'petstore-3.0.yaml');

  test('fails the start as BAD_INPUT naming the permission, not as NOT_FOUND', async () => {
    const file = path.join(dir, 'petstore.yaml');
    copyFileSync(petstore, file);
    chmodSync(file, 0o000);
    const { code, stderr } = await runAsOrdinaryUser([process.execPath, bin('openapi-mcp-server'), '--api-base-url', 'http://127.0.0.1:9', '--openapi-spec', file]);
    expect(code).toBe(1);
    expect(stderr).toContain(`openapi-mcp-server: failed to start: failed to load the OpenAPI spec from ${file}: permission denied (EACCES): ${file} (owner uid ${process.getuid!()}`);
    expect(stderr).toContain(`is not readable by this server's user (uid ${ORDINARY_UID})`);
    expect(stderr).toContain('"code":"BAD_INPUT"');
  });
});

describe('an OpenAPI spec cache the server user cannot write', () => {
  test('without a home (nobody\'s /nonexistent) the server starts, and the warning says what to set', async () => {
    const file = path.join(dir, 'cached-petstore.yaml');
    copyFileSync(path.join(ROOT, 'test', 'fixtures', 'openapi', 'petstore-3.0.yaml'), file);
    chmodSync(file, 0o644);
    const { code, stderr } = await runAsOrdinaryUser([process.execPath, bin('openapi-mcp-server'), '--api-base-url', 'http://127.0.0.1:9', '--openapi-spec', file], { HOME: '/nonexistent' });
    expect(code).toBe(0);
    expect(stderr).toMatch(/"msg":"spec cache not written to \/nonexistent\/\.cache\/mcpvisor\/openapi: (EACCES|ENOENT); the next start parses the description again \(give the server's user a cache directory it can write: specCache in the config, --spec-cache <dir> or XDG_CACHE_HOME; or turn the cache off: --spec-cache off\)"/);
  });
});

describe('a shell workspace the server user cannot use', () => {
  test('below a directory it may not enter: refused at start naming that directory (it said "does not exist")', async () => {
    const closed = path.join(dir, 'closed-ws');
    mkdirSync(path.join(closed, 'workspace'), { recursive: true });
    chmodSync(closed, 0o000);
    const workspace = path.join(closed, 'workspace');
    const { code, stderr } = await runAsOrdinaryUser([process.execPath, bin('shell-mcp-server')], { SHELL_WORKSPACE: workspace });
    reopen(closed);
    expect(code).toBe(2);
    expect(stderr).toContain(`shell-mcp-server: SHELL_WORKSPACE (shell.workspace): ${workspace}: permission denied (EACCES): the directory ${closed} (owner uid ${process.getuid!()}`);
    expect(stderr).not.toContain('does not exist');
  });

  test('that it may not enter: refused at start (it started, and every exec said bubblewrap was unavailable)', async () => {
    const workspace = path.join(dir, 'shut-ws');
    mkdirSync(workspace, { mode: 0o000 });
    chmodSync(workspace, 0o000);
    const shell = await runAsOrdinaryUser([process.execPath, bin('shell-mcp-server')], { SHELL_WORKSPACE: workspace });
    expect(shell.code).toBe(2);
    expect(shell.stderr).toContain(`shell-mcp-server: SHELL_WORKSPACE (shell.workspace): permission denied (EACCES): ${workspace} (owner uid ${process.getuid!()}, gid ${process.getgid!()}, mode 0000) cannot be entered and listed by this server's user (uid ${ORDINARY_UID})`);

    const config = path.join(dir, 'shut-ws.json');
    writeFileSync(config, JSON.stringify({ shell: { workspace }, web: { enabled: false } }), { mode: 0o644 });
    const mcpvisor = await runAsOrdinaryUser([process.execPath, bin('mcpvisor'), '--config', config]);
    reopen(workspace);
    expect(mcpvisor.code).toBe(2);
    expect(mcpvisor.stderr).toContain(`mcpvisor: shell.workspace in ${config}: permission denied (EACCES): ${workspace} (owner uid ${process.getuid!()}`);
  });

  test('that it may not write: starts, and says so once per worker with the fix', async () => {
    const workspace = path.join(dir, 'read-only-ws');
    mkdirSync(workspace);
    chmodSync(workspace, 0o555);
    const { code, stderr } = await runAsOrdinaryUser([process.execPath, bin('shell-mcp-server')], { SHELL_WORKSPACE: workspace, SANDBOX_MODE: 'false' });
    expect(code).toBe(0);
    const warnings = stderr.split('\n').filter((line) => line.includes('is not writable by'));
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(`the workspace ${workspace} (owner uid ${process.getuid!()}, gid ${process.getgid!()}, mode 0555) is not writable by this server's user (uid ${ORDINARY_UID}) (EACCES): commands and writeFile cannot write there`);
  });
});

describe('an HTTP port the server user cannot open', () => {
  /** mcpvisor over HTTP on `port`, serving the fixture workers, as the ordinary user. */
  function listenOn(port: number) {
    const config = path.join(dir, `http-${port}.json`);
    writeFileSync(config, JSON.stringify(fixtureConfig({ thread: false })), { mode: 0o644 });
    return runAsOrdinaryUser([process.execPath, bin('mcpvisor'), '--config', config, '--transport', 'http', '--host', '127.0.0.1', '--port', String(port)]);
  }

  test('below net.ipv4.ip_unprivileged_port_start: names the setting and the ways out (it said only "permission denied")', async () => {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8'));
    const { code, stderr } = await listenOn(first - 1);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `mcpvisor: failed to start: cannot listen on host "127.0.0.1", port ${first - 1} (http.host, http.port): listen EACCES: permission denied 127.0.0.1:${first - 1}; ports below ${first} (net.ipv4.ip_unprivileged_port_start) take root or the capability CAP_NET_BIND_SERVICE: use a port from there up (--port, MCPVISOR_PORT, http.port) behind a reverse proxy`,
    );
  });

  test('taken by another user: says another process listens there and how to pick another', async () => {
    const other = createServer();
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const port = (other.address() as AddressInfo).port;
      const { code, stderr } = await listenOn(port);
      expect(code).toBe(1);
      expect(stderr).toContain(`listen EADDRINUSE: address already in use 127.0.0.1:${port}; another process listens there, perhaps another user's: choose another port (--port, MCPVISOR_PORT, http.port; 0 picks a free one)`);
    } finally {
      other.close();
    }
  });
});
