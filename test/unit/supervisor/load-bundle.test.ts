import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from '../../helpers/processes';

const LOADER = path.join(ROOT, 'dist', 'supervisor', 'cli', 'load-bundle.js');
const SERVERS = ['mcpvisor', 'openapi-mcp-server', 'shell-mcp-server', 'web-search-mcp'];

/** Loads `bundle` with the built loader in a fresh Node (the cache depends on V8's flags, jest's differ); prints the outcome. */
function load(bundle: string, after = ''): string {
  const code = `const outcome = require(${JSON.stringify(LOADER)}).loadBundle(${JSON.stringify(bundle)}, module); ${after} process.stdout.write(outcome);`;
  return execFileSync(process.execPath, ['-e', code], { encoding: 'utf8', timeout: 30_000 });
}

describe('loadBundle', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mcpvisor-bundle-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it.each(SERVERS)('runs the built %s bundle with the code cache made at build time, which V8 accepts', (name) => {
    expect(load(path.join(ROOT, 'dist', 'supervisor', 'cli', `${name}.bundle.js`))).toBe('used');
  });

  it.each(SERVERS)('builds %s as ASCII text wrapped as a CommonJS module, the source V8 keeps at one byte a character', (name) => {
    const text = readFileSync(path.join(ROOT, 'dist', 'supervisor', 'cli', `${name}.bundle.js`), 'utf8');
    expect(/[^\x00-\x7f]/.exec(text)).toBeNull();
    expect(text.replace(/^#!.*\n/, '').startsWith(Module.wrap('').split('\n')[0].trimEnd())).toBe(true);
  });

  it('runs a wrapped bundle as a CommonJS module of its own folder, shebang and all, without a cache', () => {
    const bundle = path.join(dir, 'demo.bundle.js');
    writeFileSync(path.join(dir, 'helper.js'), 'module.exports = 41;');
    writeFileSync(bundle, `#!/usr/bin/env node\n${Module.wrap("globalThis.seen = { value: require('./helper') + 1, dirname: __dirname, filename: __filename };")}\n`);
    const seen = JSON.stringify({ value: 42, dirname: dir, filename: bundle });
    expect(load(bundle, 'process.stdout.write(JSON.stringify(globalThis.seen) + " ");')).toBe(`${seen} none`);
  });

  it('falls back to compiling from source when the cache is not V8 data', () => {
    const bundle = path.join(dir, 'demo.bundle.js');
    writeFileSync(bundle, `${Module.wrap('globalThis.ran = true;')}\n`);
    writeFileSync(`${bundle}.cache`, 'not a code cache');
    expect(load(bundle, 'if (!globalThis.ran) throw new Error("did not run");')).toBe('rejected');
  });
});
