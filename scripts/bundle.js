// Bundles each MCP server command after tsc: dist/supervisor/cli/<name>.bundle.js holds the
// command's module, the supervisor code and its dependencies, tree-shaken from their ES module
// builds; dist/supervisor/cli/<name>.js (the `bin`) becomes a launcher that loads it.
//
// Why: a client that spawns a server over stdio waits for Node to load its modules, and loading
// them one file at a time from node_modules cost more than running them: zod + the SDK's server
// load in ~64 ms bundled vs ~143 ms (zod's locales alone 27 ms), with ~6 MB less peak RSS
// (2-core development machine). Why a launcher: V8 compiles a bundle whole before running its
// first line (~28 ms for 1.8 MB here), and openapi-mcp-server forks its api worker before that.
//
// Left out of the bundles, loaded from dist/ by path as before: workers/ (run in forked processes
// and threads, and loaded by path), the spare worker modules (the launcher and the pool must share
// one instance), `web-search` (it runs worker code in-process), and packages that find files of
// their own at run time or load only in HTTP mode. The bundles sit beside tsc's output, so
// `__dirname` and relative paths resolve as before.
//
// Each bundle gets a V8 code cache, <bundle>.cache, made and read by supervisor/cli/load-bundle.ts.
//
// One more bundle, of no command: dist/workers/openapi/deps.bundle.js, the packages an api
// worker's calls need (see bundleWorkerDeps). It has no code cache: workers may not import
// supervisor/, where the loader lives, and it is compiled once per worker, after `ready`.
const { spawnSync } = require('node:child_process');
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');

const ROOT = path.join(__dirname, '..');
const CLI = path.join(ROOT, 'supervisor', 'cli');
const OUT = path.join(ROOT, 'dist', 'supervisor', 'cli');
const SERVERS = ['mcpvisor', 'openapi-mcp-server', 'shell-mcp-server', 'web-search-mcp'];
/** Required by a launcher before its bundle: started as early as possible. */
const FIRST = { 'openapi-mcp-server': './api-worker-spare' };
const EXTERNAL = ['piscina', 'express', 'prom-client', 'undici', 'puppeteer-core', 'puppeteer-cluster', 'tree-kill'];
const OUTSIDE = [path.join(ROOT, 'workers') + path.sep, path.join(ROOT, 'supervisor', 'pools', 'spare-worker'), path.join(CLI, 'api-worker-spare')];

const [WRAPPER_START, WRAPPER_END] = Module.wrap('\0').split('\0');

/** Imports of code left outside stay requires of dist/…, relative to the bundle. */
const leaveOutside = {
  name: 'leave-outside',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\// }, (args) => {
      const target = path.resolve(args.resolveDir, args.path);
      if (!OUTSIDE.some((prefix) => target.startsWith(prefix))) return undefined;
      const fromBundle = path.relative(CLI, target).split(path.sep).join('/');
      return { path: fromBundle.startsWith('.') ? fromBundle : `./${fromBundle}`, external: true };
    });
  },
};

async function main() {
  const result = await esbuild.build({
    entryPoints: SERVERS.map((name) => path.join(CLI, `${name}.ts`)),
    entryNames: '[name].bundle',
    outdir: OUT,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    mainFields: ['module', 'main'],
    external: EXTERNAL,
    plugins: [leaveOutside],
    sourcemap: true,
    legalComments: 'none',
    // Whitespace and comments out, non-ASCII escaped: V8 keeps a bundle's source for as long as
    // the process runs, and one character above U+00FF (an em dash in a comment) doubles it to
    // two bytes per character. Names are kept, so stack traces stay readable.
    minifyWhitespace: true,
    charset: 'ascii',
    // Wrapped as Node wraps a CommonJS module, at build time: the loader compiles the file's
    // text as it is, without a wrapped copy of 2 MB (load-bundle.ts).
    banner: { js: WRAPPER_START },
    footer: { js: WRAPPER_END },
    logLevel: 'warning',
    metafile: process.argv.includes('--meta'),
  });
  for (const name of SERVERS) {
    writeCodeCache(path.join(OUT, `${name}.bundle.js`));
    const first = FIRST[name] ? `require('${FIRST[name]}');\n` : '';
    const launcher = [
      '#!/usr/bin/env node',
      "'use strict';",
      `// ${name}: written by scripts/bundle.js; the command's code is in ${name}.bundle.js.`,
      `${first}require('./load-bundle').loadBundle(require('node:path').join(__dirname, '${name}.bundle.js'), module);`,
      '',
    ].join('\n');
    fs.writeFileSync(path.join(OUT, `${name}.js`), launcher, { mode: 0o755 });
    fs.rmSync(path.join(OUT, `${name}.js.map`), { force: true });
  }
  if (result.metafile) process.stdout.write(await esbuild.analyzeMetafile(result.metafile));
  await bundleWorkerDeps();
}

/**
 * dist/workers/openapi/deps.bundle.js: what an api worker's calls need (undici, swagger-client's
 * request builder, ajv with formats), as one file, each initialised on first read
 * (workers/openapi/lazy.ts). From their ~1,500 files they took ~355 ms to load and ~41 MB of RSS;
 * bundled, ~175 ms and ~27 MB (2-core development machine). It also exports the path-template
 * parser of the same module graph, which lazy.ts memoises: CommonJS builds only (`main`), so the
 * builder's require of the parser and ours are one module.
 */
async function bundleWorkerDeps() {
  const from = path.dirname(require.resolve('swagger-client/lib/execute/index.js'));
  const templating = require.resolve('openapi-path-templating', { paths: [from] });
  const parser = path.join(path.dirname(templating), 'parse', 'index.cjs');
  const contents = [
    'module.exports = {',
    "  get undici() { return require('undici'); },",
    "  get ajv() { return { Ajv: require('ajv/dist/2020').default, addFormats: require('ajv-formats').default }; },",
    "  get buildRequest() { return require('swagger-client/lib/execute/index.js').buildRequest; },",
    "  get oas3ParameterBuilders() { return require('swagger-client/lib/execute/oas3/parameter-builders.js'); },",
    `  get pathTemplateParser() { return require(${JSON.stringify(parser)}); },`,
    '};',
  ].join('\n');
  await esbuild.build({
    stdin: { contents, resolveDir: ROOT, sourcefile: 'api-worker-deps.js' },
    outfile: path.join(ROOT, 'dist', 'workers', 'openapi', 'deps.bundle.js'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    mainFields: ['main'],
    legalComments: 'none',
    minifyWhitespace: true,
    charset: 'ascii',
    logLevel: 'warning',
  });
}

/** Stores the bundle's V8 code cache, made in a child process by the loader tsc has just built. */
function writeCodeCache(bundle) {
  const loader = path.join(OUT, 'load-bundle.js');
  const maker = `require(${JSON.stringify(loader)}).writeCodeCache(process.argv[1], module); process.exit(0);`;
  const made = spawnSync(process.execPath, ['-e', maker, bundle], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000 });
  if (made.status !== 0) throw new Error(`code cache of ${path.basename(bundle)} not written: ${String(made.stderr).trim() || made.signal}`);
}

main().catch((error) => {
  process.stderr.write(`bundle: ${error.message}\n`);
  process.exit(1);
});
