import { linkSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  checkWritable,
  CODE_REASON,
  CONFIG_REASON,
  dependencyDirs,
  findPackageRoot,
  protectedPaths,
  readOnlyMountArgs,
  type ProtectedPath,
} from '../../../workers/shell/protected-paths';
import { linkedStores, storeDirOf } from '../../../workers/shell/linked-stores';
import { ROOT } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

/** A package directory with a package.json (and `files`, path → content) under `dir`. */
function pkg(dir: string, manifest: Record<string, unknown>, files: Record<string, string> = {}): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest));
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

/** The server package's fixture: depends on a plain package, one whose `exports` hide package.json, and one never installed. */
const MANIFEST = { name: 'mcpvisor', dependencies: { plain: '1', hidden: '1', 'never-installed': '1' } };
/** A Node binary outside every workspace of these tests. */
const NODE_OUTSIDE = '/usr/bin/node';

let root: string;
let ws: string;
beforeEach(() => {
  root = realpathSync(tempDir('protected-'));
  ws = path.join(root, 'ws');
  mkdirSync(ws);
});

/** Installs the two resolvable dependencies in `modules` (a node_modules directory). */
function installDeps(modules: string): void {
  pkg(path.join(modules, 'plain'), { name: 'plain', main: 'index.js' }, { 'index.js': '' });
  pkg(path.join(modules, 'hidden'), { name: 'hidden', exports: { '.': './lib/main.js' } }, { 'lib/main.js': '' });
}

const paths = (found: ProtectedPath[]) => found.map((entry) => entry.path);

describe('protectedPaths', () => {
  test('a project-local install in the workspace protects its whole node_modules: the package, hoisted dependencies and .bin links', () => {
    const modules = path.join(ws, 'node_modules');
    const packageRoot = pkg(path.join(modules, 'mcpvisor'), MANIFEST);
    installDeps(modules);
    expect(protectedPaths({ workspace: ws, packageRoot, execPath: NODE_OUTSIDE })).toEqual([{ path: modules, reason: CODE_REASON }]);
  });

  test('a checkout in a directory of the workspace is protected whole; its dependencies inside it are not listed again', () => {
    const packageRoot = pkg(path.join(ws, 'mcpvisor'), MANIFEST);
    installDeps(path.join(packageRoot, 'node_modules'));
    expect(paths(protectedPaths({ workspace: ws, packageRoot, execPath: NODE_OUTSIDE }))).toEqual([packageRoot]);
  });

  test('a workspace that is the package root itself is read-only whole', () => {
    pkg(ws, MANIFEST);
    expect(paths(protectedPaths({ workspace: ws, packageRoot: ws, execPath: NODE_OUTSIDE }))).toEqual([ws]);
  });

  test('nothing is protected when the package, its dependencies and Node are all outside the workspace', () => {
    const packageRoot = pkg(path.join(root, 'server'), MANIFEST);
    installDeps(path.join(packageRoot, 'node_modules'));
    expect(protectedPaths({ workspace: ws, packageRoot, execPath: NODE_OUTSIDE })).toEqual([]);
  });

  test('a dependency that resolves into the workspace from a package outside it is protected at its node_modules', () => {
    // Node looks for the package's dependencies in <root>/node_modules too, a link into the workspace here.
    const outside = pkg(path.join(root, 'server'), MANIFEST);
    installDeps(path.join(ws, 'node_modules'));
    symlinkSync(path.join(ws, 'node_modules'), path.join(root, 'node_modules'));
    expect(protectedPaths({ workspace: ws, packageRoot: outside, execPath: NODE_OUTSIDE })).toEqual([{ path: path.join(ws, 'node_modules'), reason: CODE_REASON }]);
  });

  test('paths are compared as real paths: a package reached through a symlink is protected where it really is, a link out of the workspace protects nothing', () => {
    const real = pkg(path.join(ws, 'real-app'), MANIFEST);
    symlinkSync(real, path.join(root, 'app-link'));
    expect(paths(protectedPaths({ workspace: ws, packageRoot: path.join(root, 'app-link'), execPath: NODE_OUTSIDE }))).toEqual([real]);

    const outside = pkg(path.join(root, 'outside-app'), MANIFEST);
    symlinkSync(outside, path.join(ws, 'app'));
    expect(protectedPaths({ workspace: ws, packageRoot: path.join(ws, 'app'), execPath: NODE_OUTSIDE })).toEqual([]);
  });

  test('a workspace reached through a symlink is taken by its real path', () => {
    symlinkSync(ws, path.join(root, 'ws-link'));
    const packageRoot = pkg(path.join(root, 'ws-link', 'app'), MANIFEST);
    expect(paths(protectedPaths({ workspace: realpathSync(path.join(root, 'ws-link')), packageRoot, execPath: NODE_OUTSIDE }))).toEqual([path.join(ws, 'app')]);
  });

  test('a workspace inside the package root is left writable, unless it is inside dist/ or node_modules/', () => {
    const packageRoot = pkg(path.join(root, 'checkout'), MANIFEST);
    const scratch = path.join(packageRoot, 'scratch');
    const dist = path.join(packageRoot, 'dist', 'workers');
    mkdirSync(scratch);
    mkdirSync(dist, { recursive: true });
    expect(protectedPaths({ workspace: scratch, packageRoot, execPath: NODE_OUTSIDE })).toEqual([]);
    expect(paths(protectedPaths({ workspace: dist, packageRoot, execPath: NODE_OUTSIDE }))).toEqual([dist]);
  });

  test('a workspace inside a dependency is read-only whole', () => {
    const packageRoot = pkg(path.join(root, 'server'), MANIFEST);
    installDeps(path.join(packageRoot, 'node_modules'));
    const inside = path.join(packageRoot, 'node_modules', 'hidden', 'lib');
    expect(paths(protectedPaths({ workspace: inside, packageRoot, execPath: NODE_OUTSIDE }))).toEqual([inside]);
  });

  test("Node's directory in the workspace is protected, with the global packages beside it (npm, npx)", () => {
    const node = path.join(ws, '.nvm', 'v20', 'bin', 'node');
    mkdirSync(path.dirname(node), { recursive: true });
    writeFileSync(node, '');
    mkdirSync(path.join(ws, '.nvm', 'v20', 'lib', 'node_modules', 'npm'), { recursive: true });
    expect(paths(protectedPaths({ workspace: ws, packageRoot: path.join(root, 'none'), execPath: node }))).toEqual([
      path.join(ws, '.nvm', 'v20', 'bin'),
      path.join(ws, '.nvm', 'v20', 'lib', 'node_modules'),
    ]);
  });

  test('the config file and custom toolset modules are protected when in the workspace; missing ones and those outside are not', () => {
    writeFileSync(path.join(ws, 'mcpvisor.yaml'), 'shell: {}');
    writeFileSync(path.join(ws, 'tool.js'), '');
    writeFileSync(path.join(root, 'outside.yaml'), '');
    const serverFiles = [
      { path: path.join(ws, 'mcpvisor.yaml'), kind: 'config' as const },
      { path: path.join(ws, 'tool.js'), kind: 'code' as const },
      { path: path.join(ws, 'gone.yaml'), kind: 'config' as const },
      { path: path.join(root, 'outside.yaml'), kind: 'config' as const },
    ];
    expect(protectedPaths({ workspace: ws, packageRoot: path.join(root, 'none'), execPath: NODE_OUTSIDE, serverFiles })).toEqual([
      { path: path.join(ws, 'tool.js'), reason: CODE_REASON },
      { path: path.join(ws, 'mcpvisor.yaml'), reason: CONFIG_REASON },
    ]);
  });

  test('by default the package root is found from the worker module: this checkout', () => {
    expect(findPackageRoot(path.join(ROOT, 'workers', 'shell'))).toBe(ROOT);
    expect(protectedPaths({ workspace: ws, execPath: NODE_OUTSIDE })).toEqual([]);
    expect(paths(protectedPaths({ workspace: realpathSync(ROOT), execPath: NODE_OUTSIDE }))).toEqual([realpathSync(ROOT)]);
  });
});

describe('dependencyDirs', () => {
  test('resolves each runtime dependency from the package root, one whose exports hide package.json included, and skips one that is not installed', () => {
    const packageRoot = pkg(path.join(root, 'server'), MANIFEST);
    installDeps(path.join(packageRoot, 'node_modules'));
    expect(dependencyDirs(packageRoot)).toEqual([path.join(packageRoot, 'node_modules', 'plain'), path.join(packageRoot, 'node_modules', 'hidden')]);
  });

  test('a package without a readable package.json has none', () => {
    expect(dependencyDirs(path.join(root, 'nowhere'))).toEqual([]);
  });
});

describe('readOnlyMountArgs', () => {
  test('binds each directory between the workspace and a protected path onto itself, outermost first, then the protected paths read-only', () => {
    const args = readOnlyMountArgs('/w', [
      { path: '/w/a/b/node_modules', reason: CODE_REASON },
      { path: '/w/a/c/config.yaml', reason: CONFIG_REASON },
    ]);
    expect(args).toEqual([
      '--bind', '/w/a', '/w/a',
      '--bind', '/w/a/b', '/w/a/b',
      '--bind', '/w/a/c', '/w/a/c',
      '--ro-bind', '/w/a/b/node_modules', '/w/a/b/node_modules',
      '--ro-bind', '/w/a/c/config.yaml', '/w/a/c/config.yaml',
    ]);
  });

  test('a protected workspace is one read-only bind', () => {
    expect(readOnlyMountArgs('/w', [{ path: '/w', reason: CODE_REASON }])).toEqual(['--ro-bind', '/w', '/w']);
  });
});

describe('checkWritable', () => {
  const readOnly = [{ path: '/w/node_modules', reason: CODE_REASON }];

  test('refuses a path at or under a protected one with BAD_INPUT naming it and why', () => {
    for (const target of ['/w/node_modules', '/w/node_modules/x/index.js']) {
      expect(() => checkWritable(target, 'given', readOnly)).toThrow(
        expect.objectContaining({ code: 'BAD_INPUT', message: "given: /w/node_modules holds the server's own code; it is read-only in sandbox mode" }),
      );
    }
  });

  test('allows a sibling that only shares a prefix, and anything when nothing is protected', () => {
    expect(() => checkWritable('/w/node_modules2/x', 'x', readOnly)).not.toThrow();
    expect(() => checkWritable('/w/node_modules/x', 'x', undefined)).not.toThrow();
  });
});

describe('linkedStores', () => {
  test("reads pnpm's storeDir plain, quoted or followed by a comment", () => {
    const dir = realpathSync(tempDir('linked-stores-'));
    const forms: Array<[string, string | undefined]> = [
      ['storeDir: /srv/pnpm store/v3\n', '/srv/pnpm store/v3'],
      ["layoutVersion: 5\nstoreDir: '/a b/v3'\n", '/a b/v3'],
      ['storeDir: "/c/v3"   # moved\n', '/c/v3'],
      ['virtualStoreDir: .pnpm\n', undefined],
      ['  storeDir: /nested/not/top\n', undefined],
    ];
    forms.forEach(([text, expected], i) => {
      const file = path.join(dir, `${i}.yaml`);
      writeFileSync(file, text);
      expect(storeDirOf(file)).toBe(expected);
    });
  });

  test('finds nothing for an install that is not hard-linked, whatever stores exist', () => {
    const dir = realpathSync(tempDir('linked-stores-'));
    const store = path.join(dir, 'store');
    mkdirSync(store);
    const own = pkg(path.join(dir, 'node_modules', 'mcpvisor'), { name: 'mcpvisor' });
    writeFileSync(path.join(dir, 'node_modules', '.modules.yaml'), `storeDir: ${store}\n`);
    expect(linkedStores([own], { BUN_INSTALL_CACHE_DIR: store })).toEqual([]);
    // Hard-linked: the store of the .modules.yaml above, and bun's cache when it exists.
    linkSync(path.join(own, 'package.json'), path.join(store, 'package.json'));
    const bun = path.join(dir, 'bun-cache');
    mkdirSync(bun);
    expect(linkedStores([own], { BUN_INSTALL_CACHE_DIR: bun })).toEqual([store, bun]);
    expect(linkedStores([own], { BUN_INSTALL: path.join(dir, 'nowhere') }, dir)).toEqual([store]);
  });
});
