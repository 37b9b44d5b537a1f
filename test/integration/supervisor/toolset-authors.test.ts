/**
 * An engineer's own toolsets, written from the README in a project of their own (`mcpvisor`
 * installed as a link to this checkout) and served by the built `mcpvisor` over stdio, the
 * transport where a toolset's mistakes cost the most: stdout carries JSON-RPC, and the SDK's
 * stdio client drops the connection on a message over 10 MiB.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { errorCodeOf } from '../../../protocol/results';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { eventually, logEntries, spawnBin } from '../../helpers/processes';
import { ownProject, PROCESS_ENTRY, THREAD_ENTRY } from '../../helpers/own-project';
import { tempDir } from '../../helpers/temp';

/** One module, served as a process toolset (`runWorker`) or a thread toolset (`threadWorker`). */
const TOOLS = `
const { runWorker, threadWorker, textResult } = require('mcpvisor');
// Jobs run by a timer of init's, outside any call's async context: what a call's code loses in some libraries (a connection pool's callbacks).
const detached = [];
const init = async () => {
  if (process.env.KIND === 'thread') setInterval(() => { for (const job of detached.splice(0)) job(); }, 20);
  return {
  tools: [
    { name: 'ok', inputSchema: { type: 'object' } },
    { name: 'chatty', inputSchema: { type: 'object', properties: { lines: { type: 'number' } } } },
    { name: 'big', inputSchema: { type: 'object', properties: { mb: { type: 'number' } } } },
    { name: 'crash', inputSchema: { type: 'object', properties: { how: { type: 'string' } }, required: ['how'] } },
    { name: 'throw', inputSchema: { type: 'object', properties: { what: { type: 'string' } }, required: ['what'] } },
    { name: 'later', inputSchema: { type: 'object', properties: { ms: { type: 'number' } }, required: ['ms'] } },
    { name: 'wait', inputSchema: { type: 'object', properties: { ms: { type: 'number' } }, required: ['ms'] } },
    { name: 'logs', inputSchema: { type: 'object' } },
  ],
  async handle(call, { log }) {
    if (call.tool === 'ok') return textResult('ok');
    if (call.tool === 'logs') {
      log.debug('a debug line from ' + process.env.KIND);
      log.info('an info line from ' + process.env.KIND);
      return textResult('logged');
    }
    if (call.tool === 'wait') {
      await new Promise((resolve) => setTimeout(resolve, call.arguments.ms));
      return textResult('waited');
    }
    // Answers at once; its timer rejects afterwards, with nobody to handle it.
    if (call.tool === 'later') {
      setTimeout(() => Promise.reject(new Error('rejected after its call was answered')), call.arguments.ms);
      return textResult('answered');
    }
    if (call.tool === 'crash') {
      if (call.arguments.how === 'timer') setTimeout(() => { throw new Error('thrown from a timer'); }, 10);
      else if (call.arguments.how === 'detached') detached.push(() => Promise.reject(new Error('rejected where no call is known')));
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
  };
};
if (process.env.KIND === 'thread') module.exports = threadWorker(init); else runWorker(init);
`;

let server: StdioConnection;

beforeAll(async () => {
  const project = ownProject('toolset-author-', { 'tools.cjs': TOOLS, 'thread.cjs': THREAD_ENTRY, 'process.cjs': PROCESS_ENTRY });
  writeFileSync(
    path.join(project, 'config.yaml'),
    [
      'shell: { enabled: false }',
      'web: { enabled: false }',
      // Debug: the supervisor's line about each call, and the toolsets' debug lines.
      'logLevel: debug',
      'customToolsets:',
      '  - { name: mine-proc, module: ./process.cjs, kind: process, namespace: p }',
      '  - { name: mine-thread, module: ./thread.cjs, kind: thread, namespace: t, concurrency: 4 }',
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
const logLines = () => logEntries(server.stderr());

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

  it('its log lines carry the callId of the call they were written in, debug ones included at logLevel debug', async () => {
    // A thread's lines had no callId and its debug lines were dropped; a process worker's had both.
    expect(textOf(await call(`${prefix}-logs`))).toBe('logged');
    expect(await eventually(() => logLines().some((line) => line.msg === 'tool call' && line.tool === `${prefix}-logs`))).toBe(true);
    const callId = logLines().find((line) => line.msg === 'tool call' && line.tool === `${prefix}-logs`)!.callId;
    expect(callId).toEqual(expect.any(String));
    // A thread writes its lines to stderr itself: they may follow the supervisor's.
    expect(await eventually(() => logLines().some((line) => line.msg === `an info line from ${kind}`))).toBe(true);
    const lines = logLines();
    expect(lines).toContainEqual(expect.objectContaining({ pool, level: 20, msg: `a debug line from ${kind}`, callId }));
    expect(lines).toContainEqual(expect.objectContaining({ pool, level: 30, msg: `an info line from ${kind}`, callId }));
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
    // Sent at once, while the ending worker still runs its last 50 ms: it went to that worker and
    // answered WORKER_CRASHED, never having run.
    expect(textOf(await call('p-wait', { ms: 200 }))).toBe('waited');
    expect(textOf(await call('p-ok'))).toBe('ok');
  });
});

describe('a thread toolset whose code throws outside a call', () => {
  const crashLines = () => logLines().filter((line) => line.pool === 'mine-thread' && line.level === 50);

  it.each([
    ['timer', 'an exception thrown outside a call (a timer, an event) ended the thread running this call: thrown from a timer'],
    ['rejection', 'a promise rejection nobody handled ended the thread running this call: nobody handles me'],
  ])('answers the call whose code it was WORKER_CRASHED naming the error (%s), and a new thread serves the next call', async (how, message) => {
    // It said "the thread running this call crashed (…)", not what happened.
    const result = await call('t-crash', { how });
    expect(errorCodeOf(result)).toBe('WORKER_CRASHED');
    expect(textOf(result)).toBe(`WORKER_CRASHED (tool t-crash, toolset mine-thread): ${message}`);
    expect(textOf(await call('t-ok'))).toBe('ok');
  });

  it("does not blame the call running when an answered call's timer rejects: it ends, the log names the toolset and the call", async () => {
    // The rejection comes 300 ms into the wait, on the same thread; the wait was answered WORKER_CRASHED.
    expect(textOf(await call('t-later', { ms: 300 }))).toBe('answered');
    expect(textOf(await call('t-wait', { ms: 1000 }))).toBe('waited');
    expect(await eventually(() => crashLines().some((line) => /^a promise rejection nobody handled in toolset mine-thread, from the code of call \S+ \(tool later\), answered already, ended the thread; 0 call\(s\) answered WORKER_CRASHED; it is replaced once its 1 other call\(s\) end: rejected after its call was answered$/.test(String(line.msg))))).toBe(true);
    expect(textOf(await call('t-ok'))).toBe('ok');
  });

  it('logs a rejection on an idle thread when it comes, naming the toolset, and the next call is not blamed', async () => {
    const before = crashLines().length;
    expect(textOf(await call('t-later', { ms: 200 }))).toBe('answered');
    // Asleep in Atomics.wait, the thread saw it only when the next call woke it, and that call was answered WORKER_CRASHED.
    expect(await eventually(() => crashLines().slice(before).some((line) => /^a promise rejection nobody handled in toolset mine-thread, from the code of call \S+ \(tool later\), answered already, on an idle thread, ended the thread; 0 call\(s\) answered WORKER_CRASHED; it is replaced: rejected after its call was answered$/.test(String(line.msg))))).toBe(true);
    expect(textOf(await call('t-ok'))).toBe('ok');
  });

  it('answers every running call WORKER_CRASHED, saying which one it came from cannot be told, when it came from no call\'s code', async () => {
    const waits = [call('t-wait', { ms: 10_000 }), call('t-wait', { ms: 10_000 })];
    await new Promise((resolve) => setTimeout(resolve, 300));
    const results = await Promise.all([call('t-crash', { how: 'detached' }), ...waits]);
    for (const [index, result] of results.entries()) {
      expect(errorCodeOf(result)).toBe('WORKER_CRASHED');
      expect(textOf(result)).toBe(
        `WORKER_CRASHED (tool ${index === 0 ? 't-crash' : 't-wait'}, toolset mine-thread): a promise rejection nobody handled ended the thread running this call and 2 other(s); which of them it came from cannot be told: rejected where no call is known`,
      );
    }
    expect(textOf(await call('t-ok'))).toBe('ok');
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
    expect(server.stderr()).toContain('mcpvisor: failed to start: toolset broken (customToolsets[0]): ');
    expect(server.stderr()).toMatch(message);
  });
});

describe('a toolset whose init never finishes', () => {
  it.each([
    ['process', 'runWorker(() => new Promise(() => {}));', 'worker of slow did not become ready within 1500 ms (pools.startTimeoutMs): its init has not finished'],
    // It held the whole start without end.
    ['thread', 'module.exports = threadWorker(() => new Promise(() => {}));', 'the slow threads did not become ready within 1500 ms (pools.startTimeoutMs): its init has not finished'],
  ])('stops the start at pools.startTimeoutMs, naming the toolset (%s toolset)', async (kind, source, message) => {
    const project = ownProject('toolset-author-slow-', { 'slow.cjs': `const { runWorker, threadWorker } = require('mcpvisor');\n${source}\n` });
    const config = { shell: { enabled: false }, web: { enabled: false }, pools: { startTimeoutMs: 1500 }, customToolsets: [{ name: 'slow', module: './slow.cjs', kind }] };
    writeFileSync(path.join(project, 'config.json'), JSON.stringify(config));
    const server = spawnBin('mcpvisor', ['--config', path.join(project, 'config.json')]);
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toContain(`mcpvisor: failed to start: toolset slow (customToolsets[0]): ${message}\n`);
  }, 15_000);
});
