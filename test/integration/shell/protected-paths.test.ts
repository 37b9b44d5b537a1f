import { cpSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { errorCodeOf } from '../../../protocol/results';
import type { ToolResult } from '../../../protocol/tool';
import { connectStdio, type StdioConnection } from '../../helpers/mcp';
import { ROOT } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';
import { call } from './helpers';
import { startShellWorker, type ShellWorker } from './worker-harness';

/**
 * The server installed in the workspace the way a project-local install puts it: the built shell
 * worker copied to <ws>/node_modules/mcpvisor/dist (so it finds its package root there, for real),
 * a runtime dependency hoisted beside it, a `.bin` link, and the config file in the workspace.
 */
let ws: string;
let modules: string;
let config: string;
let worker: ShellWorker;

/** Every entry under `dir` with its type and content (or link target): what must not change. */
function snapshot(dir: string): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const entry = path.join(at, name);
      const stat = lstatSync(entry);
      if (stat.isSymbolicLink()) found[entry] = `link ${readlinkSync(entry)}`;
      else if (stat.isDirectory()) {
        found[entry] = 'dir';
        walk(entry);
      } else found[entry] = `file ${readFileSync(entry, 'utf8')}`;
    }
  };
  walk(dir);
  return found;
}

beforeAll(async () => {
  ws = path.join(realpathSync(tempDir('shell-protect-')), 'project');
  modules = path.join(ws, 'node_modules');
  const own = path.join(modules, 'mcpvisor');
  for (const part of ['protocol', 'workers/shell', 'workers/common']) cpSync(path.join(ROOT, 'dist', part), path.join(own, 'dist', part), { recursive: true });
  // tree-kill: the one package the shell worker loads, hoisted as npm installs it.
  cpSync(realpathSync(path.join(ROOT, 'node_modules', 'tree-kill')), path.join(modules, 'tree-kill'), { recursive: true });
  writeFileSync(path.join(own, 'package.json'), JSON.stringify({ name: 'mcpvisor', dependencies: { 'fake-dep': '1.0.0', 'tree-kill': '1.2.2', 'never-installed': '1.0.0' } }));
  mkdirSync(path.join(modules, 'fake-dep'));
  writeFileSync(path.join(modules, 'fake-dep', 'package.json'), JSON.stringify({ name: 'fake-dep', main: 'index.js' }));
  writeFileSync(path.join(modules, 'fake-dep', 'index.js'), 'module.exports = 1;\n');
  mkdirSync(path.join(modules, '.bin'));
  symlinkSync('../mcpvisor/dist/workers/shell/worker.js', path.join(modules, '.bin', 'mcpvisor'));
  config = path.join(ws, 'mcpvisor.yaml');
  writeFileSync(config, 'shell:\n  sandbox: true\n');
  writeFileSync(path.join(ws, 'notes.txt'), 'mine\n');
  worker = await startShellWorker(
    { sandbox: true, workspace: ws, serverFiles: [{ path: config, kind: 'config' }] },
    { module: path.join(own, 'dist', 'workers', 'shell', 'worker.js') },
  );
});
afterAll(async () => {
  await worker?.stop();
});

const exec = async (command: string) => (await worker.call('exec', { command })).structuredContent as { stdout: string; stderr: string; exitCode: number | null };
const message = (result: ToolResult) => (result.content[0] as { text: string }).text;

describe("sandbox mode keeps the server's own code and config in the workspace read-only", () => {
  test('the worker says at its start which paths of the workspace are read-only', () => {
    const warning = worker.logs.find((entry) => entry.level === 'warn' && entry.msg.includes("the workspace holds the server's own code or config"));
    expect(warning?.fields).toEqual({ workspace: ws, readOnly: [modules, config] });
  });

  test('sandboxed commands cannot change, replace, delete or move them, and nothing else is hurt', async () => {
    const before = snapshot(modules);
    const configBefore = readFileSync(config, 'utf8');
    const attacks = [
      'echo evil > node_modules/mcpvisor/dist/workers/shell/worker.js',
      'echo evil >> node_modules/fake-dep/index.js',
      'echo evil > node_modules/mcpvisor/new.js',
      'mkdir node_modules/evil',
      'ln -sf /tmp/evil node_modules/.bin/mcpvisor',
      'rm -rf node_modules',
      'mv node_modules moved',
      'mv node_modules/mcpvisor moved',
      'echo evil > mcpvisor.yaml',
      'mv mcpvisor.yaml moved.yaml',
      'rm -f mcpvisor.yaml',
    ];
    const result = await exec(attacks.map((attack, i) => `${attack} 2>/dev/null; echo "${i}=$?"`).join('; '));
    expect(result.stdout.trim().split('\n')).toEqual(attacks.map((_, i) => expect.stringMatching(new RegExp(`^${i}=[1-9]\\d*$`))));
    expect(snapshot(modules)).toEqual(before);
    expect(readFileSync(config, 'utf8')).toBe(configBefore);
    // `mv` out of a read-only mount falls back to copy-then-delete: the copy is made, the delete fails.
    expect(existsSync(path.join(ws, 'moved.yaml'))).toBe(false);
    // The failed attempts broke nothing: the rest of the workspace is writable and reads work.
    const normal = await exec('echo ok > notes.txt && mkdir -p sub && echo y > sub/f && cat notes.txt sub/f node_modules/fake-dep/index.js mcpvisor.yaml');
    expect(normal).toMatchObject({ exitCode: 0, stdout: `ok\ny\nmodule.exports = 1;\n${configBefore}` });
  });

  test('the file tools refuse to write or delete them, naming the path and why; reads and other writes work', async () => {
    const refusals: Array<[string, Record<string, unknown>, string]> = [
      ['writeFile', { path: 'node_modules/mcpvisor/package.json', content: '{}' }, `node_modules/mcpvisor/package.json: ${modules} holds the server's own code; it is read-only in sandbox mode`],
      ['writeFile', { path: 'node_modules/new-dir/file.js', content: 'x' }, `node_modules/new-dir/file.js: ${modules} holds the server's own code; it is read-only in sandbox mode`],
      ['deleteFile', { path: 'node_modules/fake-dep/index.js' }, `node_modules/fake-dep/index.js: ${modules} holds the server's own code; it is read-only in sandbox mode`],
      ['writeFile', { path: 'mcpvisor.yaml', content: 'shell: { sandbox: false }' }, `mcpvisor.yaml: ${config} is the server's own configuration; it is read-only in sandbox mode`],
      ['deleteFile', { path: config }, `${config}: ${config} is the server's own configuration; it is read-only in sandbox mode`],
    ];
    const before = snapshot(modules);
    for (const [tool, args, text] of refusals) {
      const result = await worker.call(tool, args);
      expect({ isError: result.isError, code: errorCodeOf(result), text: message(result) }).toEqual({ isError: true, code: 'BAD_INPUT', text: `BAD_INPUT: ${text}` });
    }
    expect(snapshot(modules)).toEqual(before);
    expect(readFileSync(config, 'utf8')).toBe('shell:\n  sandbox: true\n');
    expect((await worker.call('readFile', { path: 'node_modules/fake-dep/index.js' })).structuredContent).toMatchObject({ content: 'module.exports = 1;\n' });
    expect((await worker.call('writeFile', { path: 'notes.txt', content: 'changed' })).isError).toBeFalsy();
    expect(readFileSync(path.join(ws, 'notes.txt'), 'utf8')).toBe('changed');
  });
});

describe('a workspace that is a checkout of the server (started there, SHELL_WORKSPACE unset)', () => {
  let checkout: string;
  let started: ShellWorker;
  beforeAll(async () => {
    checkout = realpathSync(tempDir('shell-protect-checkout-'));
    for (const part of ['protocol', 'workers/shell', 'workers/common']) cpSync(path.join(ROOT, 'dist', part), path.join(checkout, 'dist', part), { recursive: true });
    cpSync(realpathSync(path.join(ROOT, 'node_modules', 'tree-kill')), path.join(checkout, 'node_modules', 'tree-kill'), { recursive: true });
    writeFileSync(path.join(checkout, 'package.json'), JSON.stringify({ name: 'mcpvisor', dependencies: { 'tree-kill': '1.2.2' } }));
    started = await startShellWorker({ sandbox: true }, { module: path.join(checkout, 'dist', 'workers', 'shell', 'worker.js'), cwd: checkout });
  });
  afterAll(async () => {
    await started?.stop();
  });

  test('is read-only whole: commands still run and read, but write nothing, and the file tools refuse', async () => {
    const before = snapshot(checkout);
    const result = (await started.call('exec', { command: 'cat package.json >/dev/null && echo "read=$?"; echo x > new.txt; echo "write=$?"; rm -rf dist; echo "rm=$?"; echo x > /tmp/scratch && echo "tmp=$?"' })).structuredContent;
    expect(result).toMatchObject({ exitCode: 0, stdout: expect.stringMatching(/^read=0\nwrite=[1-9]\d*\nrm=[1-9]\d*\ntmp=0\n$/) });
    const written = await started.call('writeFile', { path: 'dist/workers/shell/worker.js', content: 'evil' });
    expect(message(written)).toBe(`BAD_INPUT: dist/workers/shell/worker.js: ${checkout} holds the server's own code; it is read-only in sandbox mode`);
    expect(snapshot(checkout)).toEqual(before);
  });
});

describe('an install whose files are hard links of a pnpm store in the workspace, the code itself outside it', () => {
  let home: string;
  let store: string;
  let installed: string;
  let linked: ShellWorker;
  const storeFile = () => path.join(store, 'files', '00', 'aa11-index');
  beforeAll(async () => {
    const top = realpathSync(tempDir('shell-protect-store-'));
    home = path.join(top, 'home');
    store = path.join(home, '.local', 'share', 'pnpm', 'store', 'v3');
    const modules = path.join(top, 'opt', 'app', 'node_modules');
    const own = path.join(modules, 'mcpvisor');
    for (const part of ['protocol', 'workers/shell', 'workers/common']) cpSync(path.join(ROOT, 'dist', part), path.join(own, 'dist', part), { recursive: true });
    cpSync(realpathSync(path.join(ROOT, 'node_modules', 'tree-kill')), path.join(modules, 'tree-kill'), { recursive: true });
    writeFileSync(path.join(own, 'package.json'), JSON.stringify({ name: 'mcpvisor', dependencies: { 'fake-dep': '1.0.0', 'tree-kill': '1.2.2' } }));
    // As pnpm installs a package: each file a hard link of one in the store.
    mkdirSync(path.join(store, 'files', '00'), { recursive: true });
    writeFileSync(storeFile(), 'module.exports = 1;\n');
    writeFileSync(path.join(store, 'files', '00', 'bb22-package.json'), JSON.stringify({ name: 'fake-dep', main: 'index.js' }));
    mkdirSync(path.join(modules, 'fake-dep'));
    linkSync(storeFile(), path.join(modules, 'fake-dep', 'index.js'));
    linkSync(path.join(store, 'files', '00', 'bb22-package.json'), path.join(modules, 'fake-dep', 'package.json'));
    writeFileSync(path.join(modules, '.modules.yaml'), `hoistPattern:\n  - '*'\nstoreDir: ${store}\nvirtualStoreDir: .pnpm\n`);
    installed = path.join(modules, 'fake-dep', 'index.js');
    linked = await startShellWorker({ sandbox: true, workspace: home }, { module: path.join(own, 'dist', 'workers', 'shell', 'worker.js') });
  });
  afterAll(async () => {
    await linked?.stop();
  });

  test('the store is read-only: a command or writeFile cannot change the installed code through it', async () => {
    const warning = linked.logs.find((entry) => entry.level === 'warn' && entry.msg.includes('hard links of that code'));
    expect(warning?.fields).toEqual({ workspace: home, readOnly: [store] });
    const relative = path.relative(home, storeFile());
    const result = (await linked.call('exec', { command: `echo evil >> ${relative}; echo "append=$?"; echo x > notes.txt; echo "other=$?"` })).structuredContent;
    expect(result).toMatchObject({ exitCode: 0, stdout: expect.stringMatching(/^append=[1-9]\d*\nother=0\n$/) });
    const written = await linked.call('writeFile', { path: relative, content: 'evil' });
    expect(message(written)).toBe(`BAD_INPUT: ${relative}: ${store} holds hard links of the server's own code (a package manager's store); it is read-only in sandbox mode`);
    expect(readFileSync(installed, 'utf8')).toBe('module.exports = 1;\n');
  });
});

describe('the server passes its config file to the shell workers', () => {
  let server: StdioConnection;
  let workspace: string;
  let file: string;
  beforeAll(async () => {
    workspace = realpathSync(tempDir('shell-protect-config-'));
    file = path.join(workspace, 'config.json');
    writeFileSync(file, JSON.stringify({ shell: { workers: 1 } }));
    server = await connectStdio('shell-mcp-server', ['--config', file], { SANDBOX_MODE: 'true', SHELL_WORKSPACE: workspace });
  });
  afterAll(async () => {
    await server?.close();
  });

  test('a config file in the workspace cannot be rewritten by a command or writeFile', async () => {
    const result = await call(server, 'exec', { command: 'echo "{}" > config.json; echo "write=$?"; mv config.json gone.json; echo "move=$?"; echo x > other.txt; echo "other=$?"' });
    expect(result.structuredContent?.stdout).toMatch(/^write=[1-9]\d*\nmove=[1-9]\d*\nother=0\n$/);
    const written = await call(server, 'writeFile', { path: 'config.json', content: '{"shell":{"sandbox":false}}' });
    expect(written.isError).toBe(true);
    expect(written.content[0]?.text).toBe(`BAD_INPUT: config.json: ${file} is the server's own configuration; it is read-only in sandbox mode`);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ shell: { workers: 1 } });
  });
});
