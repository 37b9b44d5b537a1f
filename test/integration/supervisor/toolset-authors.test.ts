/**
 * An engineer's own toolsets, written from the README in a project of their own (`mcpvisor`
 * installed as a link to this checkout) and served by the built `mcpvisor` over stdio, the
 * transport where a toolset's mistakes cost the most: stdout carries JSON-RPC, and the SDK's
 * stdio client drops the connection on a message over 10 MiB.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { errorCodeOf } from '../../../protocol/results';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { eventually, ROOT, spawnBin } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

/** One module, served as a process toolset (`runWorker`) or a thread toolset (`threadWorker`). */
const TOOLS = `
const { runWorker, threadWorker, textResult } = require('mcpvisor');
const init = async () => ({
  tools: [
    { name: 'ok', inputSchema: { type: 'object' } },
    { name: 'chatty', inputSchema: { type: 'object', properties: { lines: { type: 'number' } } } },
    { name: 'big', inputSchema: { type: 'object', properties: { mb: { type: 'number' } } } },
    { name: 'crash', inputSchema: { type: 'object', properties: { how: { type: 'string' } }, required: ['how'] } },
    { name: 'throw', inputSchema: { type: 'object', properties: { what: { type: 'string' } }, required: ['what'] } },
  ],
  async handle(call) {
    if (call.tool === 'ok') return textResult('ok');
    if (call.tool === 'crash') {
      if (call.arguments.how === 'timer') setTimeout(() => { throw new Error('thrown from a timer'); }, 10);
      else Promise.reject(new Error('nobody handles me'));
      return new Promise(() => {});
    }
    if (call.tool === 'throw') {
      const thrown = {
        error: new Error('no widget 42'),
        coded: Object.assign(new Error('widget 42 is not yours'), { code: 'BLOCKED' }),
        string: 'widgets are down',
        undefined: undefined,
        object: { reason: 'quota', left: 0 },
      };
      throw thrown[call.arguments.what];
    }
    if (call.tool === 'chatty') {
      console.log('hello from ' + process.env.KIND);
      const line = 'x'.repeat(1023) + '\\n';
      for (let i = 0; i < call.arguments.lines; i++) process.stdout.write(line);
      console.error('a warning from ' + process.env.KIND);
      return textResult('chatted');
    }
    return textResult('y'.repeat(call.arguments.mb * 1024 * 1024));
  },
});
if (process.env.KIND === 'thread') module.exports = threadWorker(init); else runWorker(init);
`;

let server: StdioConnection;

beforeAll(async () => {
  const project = tempDir('toolset-author-');
  mkdirSync(path.join(project, 'node_modules'));
  symlinkSync(ROOT, path.join(project, 'node_modules', 'mcpvisor'));
  writeFileSync(path.join(project, 'tools.cjs'), TOOLS);
  writeFileSync(path.join(project, 'thread.cjs'), "process.env.KIND = 'thread';\nmodule.exports = require('./tools.cjs');\n");
  writeFileSync(path.join(project, 'process.cjs'), "process.env.KIND = 'process';\nrequire('./tools.cjs');\n");
  writeFileSync(
    path.join(project, 'config.yaml'),
    [
      'shell: { enabled: false }',
      'web: { enabled: false }',
      'customToolsets:',
      '  - { name: mine-proc, module: ./process.cjs, kind: process, namespace: p }',
      '  - { name: mine-thread, module: ./thread.cjs, kind: thread, namespace: t }',
      '',
    ].join('\n'),
  );
  server = await connectStdio('mcpvisor', ['--config', path.join(project, 'config.yaml')]);
}, 30_000);
afterAll(async () => {
  await server?.close();
});

const call = (name: string, args: Record<string, unknown> = {}) => server.client.callTool({ name, arguments: args }, undefined, { timeout: 20_000 });

/** The server's stderr as JSON log lines. */
const logLines = () =>
  server
    .stderr()
    .split('\n')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });

describe.each([
  ['process', 'p', 'mine-proc'],
  ['thread', 't', 'mine-thread'],
])('a %s toolset', (kind, prefix, pool) => {
  it('writing megabytes to stdout keeps the session, and its output becomes bounded log lines naming the toolset', async () => {
    // 4 MB: a thread's stdout was the supervisor's (the client read "xxx…" as JSON-RPC), a process's went to stderr raw.
    expect(textOf(await call(`${prefix}-chatty`, { lines: 4096 }))).toBe('chatted');
    expect(textOf(await call(`${prefix}-ok`))).toBe('ok');
    expect(await eventually(() => logLines().some((line) => line.pool === pool && /^the \w+ wrote over 65536 characters of output in 10000 ms: dropping the rest/.test(String(line.msg))))).toBe(true);
    const lines = logLines();
    expect(lines).toContainEqual(expect.objectContaining({ pool, stream: 'stdout', msg: `hello from ${kind}` }));
    // Nothing of it raw: every line of the server's stderr is a log line, and the 4 MB are cut to the bound.
    expect(server.stderr().split('\n').filter((line) => line !== '' && !line.startsWith('{'))).toEqual([]);
    expect(lines.filter((line) => line.pool === pool && line.stream === 'stdout').length).toBeLessThanOrEqual(64);
  });

  it.each([
    ['an Error', 'error', 'INTERNAL', 'no widget 42'],
    ['an Error with a code of ours', 'coded', 'BLOCKED', 'widget 42 is not yours'],
    ['a string', 'string', 'INTERNAL', 'widgets are down'],
    // They said "INTERNAL: undefined" and "INTERNAL: [object Object]", naming neither tool nor toolset.
    ['undefined', 'undefined', 'INTERNAL', 'undefined was thrown (a rejection without a reason?), not an Error with a message'],
    ['an object', 'object', 'INTERNAL', 'an object was thrown, not an Error: {"reason":"quota","left":0}'],
  ])('what its handler throws (%s) is an error result naming the tool and the toolset', async (_what, what, code, message) => {
    const result = await call(`${prefix}-throw`, { what });
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe(code);
    expect(textOf(result)).toBe(`${code} (tool ${prefix}-throw, toolset ${pool}): ${message}`);
  });

  it('a result over the 8 MiB cap answers OUTPUT_TRUNCATED naming the tool, its size and the cap, and the session goes on', async () => {
    const result = await call(`${prefix}-big`, { mb: 11 });
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('OUTPUT_TRUNCATED');
    expect(textOf(result)).toMatch(new RegExp(`^OUTPUT_TRUNCATED \\(tool ${prefix}-big\\): the tool of toolset ${pool} returned 11534\\d{3} bytes \\(11 MiB\\), over the 8388608-byte \\(8 MiB\\) cap on one result \\(pools\\.maxResultBytes\\)`));
    expect(textOf(await call(`${prefix}-big`, { mb: 7 }))).toHaveLength(7 * 1024 * 1024);
    expect(textOf(await call(`${prefix}-ok`))).toBe('ok');
  }, 30_000);
});

describe('a process toolset whose code throws outside a call', () => {
  it.each([
    ['timer', 'an exception thrown outside a call (a timer, an event) ended the worker running this call: thrown from a timer'],
    ['rejection', 'a promise rejection nobody handled ended the worker running this call: nobody handles me'],
  ])('answers WORKER_CRASHED naming the error (%s; it said "worker exited with code 1"), and a new worker serves the next call', async (how, message) => {
    const result = await call('p-crash', { how });
    expect(errorCodeOf(result)).toBe('WORKER_CRASHED');
    expect(textOf(result)).toBe(`WORKER_CRASHED (tool p-crash, toolset mine-proc): ${message}`);
    expect(textOf(await call('p-ok'))).toBe('ok');
  });
});

describe('a toolset module that does not load', () => {
  it.each([
    ['process', 'a syntax error', 'const widgets = ;\n', /worker of broken exited with exit code 1 before it was ready: SyntaxError: Unexpected token ';' \(at \S+broken\.cjs:1\)\n/],
    ['process', 'a package not installed', "require('no-such-widget-package');\n", /worker of broken exited with exit code 1 before it was ready: Error: Cannot find module 'no-such-widget-package'/],
    ['thread', 'a syntax error', 'const widgets = ;\n', /the broken threads failed to start: SyntaxError: Unexpected token ';' \(loading \S+broken\.cjs\)\n/],
  ])('stops the start naming the toolset and Node\'s error (%s toolset, %s; it said only "exited with exit code 1")', async (kind, _what, source, message) => {
    const project = tempDir('toolset-author-broken-');
    writeFileSync(path.join(project, 'broken.cjs'), source);
    writeFileSync(path.join(project, 'config.json'), JSON.stringify({ shell: { enabled: false }, web: { enabled: false }, customToolsets: [{ name: 'broken', module: './broken.cjs', kind }] }));
    const server = spawnBin('mcpvisor', ['--config', path.join(project, 'config.json')]);
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toContain('mcpvisor: failed to start: toolset broken (customToolsets.0): ');
    expect(server.stderr()).toMatch(message);
  });
});

describe('a toolset whose init never finishes', () => {
  it.each([
    ['process', 'runWorker(() => new Promise(() => {}));', 'worker of slow did not become ready within 1500 ms (pools.startTimeoutMs): its init has not finished'],
    // It held the whole start without end.
    ['thread', 'module.exports = threadWorker(() => new Promise(() => {}));', 'the slow threads did not become ready within 1500 ms (pools.startTimeoutMs): its init has not finished'],
  ])('stops the start at pools.startTimeoutMs, naming the toolset (%s toolset)', async (kind, source, message) => {
    const project = tempDir('toolset-author-slow-');
    mkdirSync(path.join(project, 'node_modules'));
    symlinkSync(ROOT, path.join(project, 'node_modules', 'mcpvisor'));
    writeFileSync(path.join(project, 'slow.cjs'), `const { runWorker, threadWorker } = require('mcpvisor');\n${source}\n`);
    const config = { shell: { enabled: false }, web: { enabled: false }, pools: { startTimeoutMs: 1500 }, customToolsets: [{ name: 'slow', module: './slow.cjs', kind }] };
    writeFileSync(path.join(project, 'config.json'), JSON.stringify(config));
    const server = spawnBin('mcpvisor', ['--config', path.join(project, 'config.json')]);
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toContain(`mcpvisor: failed to start: toolset slow (customToolsets.0): ${message}\n`);
  }, 15_000);
});
