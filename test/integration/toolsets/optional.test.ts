/**
 * Custom toolsets with `affectsHealth: false` (README, Configuration): one that cannot start is
 * left out, the others are served, and it comes in by itself once it can start; a required one
 * that cannot start still stops the start, naming itself and why. Real modules of an operator's
 * own project (`mcpvisor` linked to this checkout), the built `mcpvisor`, the SDK client.
 */
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectHttp, startHttp, textOf } from '../../helpers/mcp';
import { spawnBin } from '../../helpers/processes';
import { ownProject, PROCESS_ENTRY, THREAD_ENTRY } from '../../helpers/own-project';

/** Tools of a process toolset (`runWorker`) or a thread toolset (`threadWorker`); init fails while the file `DOWN` names exists. */
const TOOLS = `
const { existsSync } = require('node:fs');
const { runWorker, threadWorker, textResult } = require('mcpvisor');
const init = async (config) => {
  if (config && config.down && existsSync(config.down)) throw new Error('database unreachable: connect ECONNREFUSED 127.0.0.1:5432');
  return { tools: [{ name: 'hello', inputSchema: { type: 'object' } }], handle: async () => textResult('hello from ' + process.env.KIND) };
};
if (process.env.KIND === 'thread') module.exports = threadWorker(init); else runWorker(init);
`;

function project(): string {
  return ownProject('own-toolsets-', { 'tools.cjs': TOOLS, 'steady.cjs': PROCESS_ENTRY, 'thread.cjs': THREAD_ENTRY });
}

type Health = { status: string; pools: Array<{ name: string; state: string; lastError?: string }> };

describe('a custom toolset with affectsHealth: false that cannot start', () => {
  it('is left out while the others are served, /health 200 naming why, and comes in with notifications/tools/list_changed once it can start', async () => {
    const dir = project();
    const down = path.join(dir, 'database-down');
    writeFileSync(down, '');
    writeFileSync(
      path.join(dir, 'config.yaml'),
      [
        'shell: { enabled: false }',
        'web: { enabled: false }',
        'customToolsets:',
        '  - { name: steady, module: ./steady.cjs, namespace: s }',
        // Deployed after the server started.
        '  - { name: late, module: ./late.cjs, namespace: l, affectsHealth: false }',
        `  - { name: db, module: ./thread.cjs, kind: thread, namespace: d, affectsHealth: false, config: { down: ${JSON.stringify(down)} } }`,
        '',
      ].join('\n'),
    );
    const server = await startHttp('mcpvisor', ['--config', path.join(dir, 'config.yaml')]);
    const { client } = await connectHttp(server.mcpUrl);
    try {
      expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['s-hello']);
      expect(textOf(await client.callTool({ name: 's-hello', arguments: {} }))).toBe('hello from process');
      const health = await fetch(`${server.baseUrl}/health`);
      expect(health.status).toBe(200);
      const body = (await health.json()) as Health;
      expect(body.status).toBe('ok');
      expect(body.pools).toEqual([
        expect.objectContaining({ name: 'steady', state: 'ready' }),
        expect.objectContaining({ name: 'late', state: 'failed', lastError: expect.stringContaining(`Cannot find module '${path.join(dir, 'late.cjs')}'`) }),
        expect.objectContaining({ name: 'db', state: 'failed', lastError: expect.stringContaining('database unreachable: connect ECONNREFUSED') }),
      ]);
      const stderr = server.server.stderr();
      expect(stderr).toContain('late could not start and is left out (it does not affect health)');
      expect(stderr).toContain('db could not start and is left out (it does not affect health): database unreachable');

      let changes = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
      writeFileSync(path.join(dir, 'late.cjs'), "process.env.KIND = 'process';\nrequire('./tools.cjs');\n");
      rmSync(down);
      // Tried again 5 s after the start; bounded so that code without the retry fails, not hangs.
      const deadline = Date.now() + 25_000;
      while (changes < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(changes).toBe(2);
      expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['d-hello', 'l-hello', 's-hello']);
      expect(textOf(await client.callTool({ name: 'l-hello', arguments: {} }))).toBe('hello from process');
      expect(textOf(await client.callTool({ name: 'd-hello', arguments: {} }))).toBe('hello from thread');
      const after = (await (await fetch(`${server.baseUrl}/health`)).json()) as Health;
      expect(after.pools.map((pool) => pool.state)).toEqual(['ready', 'ready', 'ready']);
    } finally {
      await client.close();
      await server.stop();
    }
  }, 45_000);
});

describe('a required custom toolset that cannot start', () => {
  it.each([
    ['process', 'a module missing', './missing.cjs', /^mcpvisor: customToolsets\[1\]\.module in .*config\.yaml: .*missing\.cjs cannot be read \(ENOENT\)$/m, 2],
    ['process', 'an init that fails', './proc-down.cjs', /^mcpvisor: failed to start: toolset broken \(customToolsets\[1\]\): database unreachable: connect ECONNREFUSED 127\.0\.0\.1:5432$/m, 1],
    ['thread', 'an init that fails', './thread.cjs', /^mcpvisor: failed to start: toolset broken \(customToolsets\[1\]\): database unreachable: connect ECONNREFUSED 127\.0\.0\.1:5432$/m, 1],
    ['process', 'a module that throws as it loads', './throws.cjs', /^mcpvisor: failed to start: toolset broken \(customToolsets\[1\]\): worker of broken exited with exit code 1 before it was ready: Error: MY_KEY is not set \(at .*throws\.cjs:1\)$/m, 1],
    ['thread', 'a module that throws as it loads', './throws.cjs', /^mcpvisor: failed to start: toolset broken \(customToolsets\[1\]\): the broken threads failed to start: MY_KEY is not set \(loading .*throws\.cjs\)$/m, 1],
  ])('stops the start (a %s toolset, %s) naming the toolset and why, beside an optional one that is left out', async (kind, _what, module, message, code) => {
    const dir = project();
    const down = path.join(dir, 'down');
    writeFileSync(down, '');
    writeFileSync(path.join(dir, 'proc-down.cjs'), PROCESS_ENTRY);
    writeFileSync(path.join(dir, 'throws.cjs'), "throw new Error('MY_KEY is not set');\n");
    writeFileSync(
      path.join(dir, 'config.yaml'),
      [
        'shell: { enabled: false }',
        'web: { enabled: false }',
        'customToolsets:',
        '  - { name: optional, module: ./gone.cjs, namespace: o, affectsHealth: false }',
        `  - { name: broken, module: ${module}, kind: ${kind}, namespace: b, config: { down: ${JSON.stringify(down)} } }`,
        '',
      ].join('\n'),
    );
    const server = spawnBin('mcpvisor', ['--config', path.join(dir, 'config.yaml')]);
    server.child.stdin!.end();
    expect(await server.exited).toBe(code);
    expect(server.stderr()).toMatch(message);
    // Only the required one is the start's failure.
    expect(server.stderr()).not.toMatch(/^mcpvisor: .*optional/m);
  }, 30_000);
});
