import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorCodeOf } from '../../../protocol/results';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, untilCallRunning, type HttpServer } from '../../helpers/mcp';
import { eventually, isAlive, spawnBin } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

type Result = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean; _meta?: Record<string, unknown> };

const call = (client: Client, name: string, args: Record<string, unknown> = {}, options: { signal?: AbortSignal; timeout?: number } = {}) =>
  client.callTool({ name, arguments: args }, undefined, options) as Promise<Result>;

const workerPid = async (client: Client) => Number((await call(client, 'echo', { text: 'pid?' })).structuredContent!.pid);
const marker = () => path.join(tempDir('mcpvisor-marker-'), 'cancel');
const readMarker = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};

describe('pool supervision', () => {
  let server: HttpServer;
  let client: Client;

  beforeAll(async () => {
    server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ process: { callTimeoutMs: 1500 } }))]);
    ({ client } = await connectHttp(server.mcpUrl));
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
  });

  it('fails a call whose worker is killed with -9 with WORKER_CRASHED, and the next call succeeds on a new worker', async () => {
    const pid = await workerPid(client);
    const pending = call(client, 'sleep', { ms: 60_000 });
    await untilCallRunning(server);
    process.kill(pid, 'SIGKILL');
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('WORKER_CRASHED');
    expect(textOf(result)).toMatch(/SIGKILL/);
    const next = await call(client, 'echo', { text: 'again' });
    expect(textOf(next)).toBe('again');
    expect(next.structuredContent!.pid).not.toBe(pid);
  });

  it('cancels a call at its deadline; a worker that honours the cancel keeps running', async () => {
    const pid = await workerPid(client);
    const file = marker();
    const result = await call(client, 'sleep', { ms: 60_000, marker: file });
    expect(errorCodeOf(result)).toBe('TIMEOUT');
    expect(textOf(result)).toMatch(/1500 ms deadline/);
    expect(await eventually(() => readMarker(file).startsWith('cancelled'))).toBe(true);
    expect(await workerPid(client)).toBe(pid);
  });

  it('kills and replaces a worker that ignores the cancel after its deadline', async () => {
    const pid = await workerPid(client);
    const result = await call(client, 'ignore-cancel', { ms: 30_000 });
    expect(errorCodeOf(result)).toBe('TIMEOUT');
    expect(await eventually(() => !isAlive(pid))).toBe(true);
    const next = await call(client, 'echo', { text: 'replaced' });
    expect(textOf(next)).toBe('replaced');
    expect(next.structuredContent!.pid).not.toBe(pid);
  });

  it('carries MCP cancellation (notifications/cancelled) to the worker', async () => {
    await workerPid(client);
    const file = marker();
    const controller = new AbortController();
    const pending = call(client, 'sleep', { ms: 60_000, marker: file }, { signal: controller.signal });
    await untilCallRunning(server);
    controller.abort('user pressed stop');
    await expect(pending).rejects.toThrow();
    expect(await eventually(() => readMarker(file) === 'cancelled:the call was cancelled')).toBe(true);
  });

  it('closes the response stream of a call cancelled with notifications/cancelled', async () => {
    const { transport } = await connectHttp(server.mcpUrl);
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': transport.sessionId!,
    };
    const file = marker();
    const response = await fetch(server.mcpUrl, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 77, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 60_000, marker: file } } }),
    });
    expect(response.status).toBe(200);
    const body = response.text();
    const cancel = await fetch(server.mcpUrl, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 77, reason: 'test' } }),
    });
    expect(cancel.status).toBe(202);
    // Bounded wait: the stream must end long before the 60 s sleep would.
    const ended = await Promise.race([body.then(() => 'ended'), new Promise((resolve) => setTimeout(() => resolve('still open'), 10_000))]);
    expect(ended).toBe('ended');
    expect(await eventually(() => readMarker(file).startsWith('cancelled'))).toBe(true);
    await transport.close();
  });

  it('keeps the answers of a batch when one of its calls is cancelled', async () => {
    // Batches exist in revision 2025-03-26 only: a raw session of that revision.
    const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: base,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    await init.text();
    const headers = { ...base, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-03-26' };
    await (await fetch(server.mcpUrl, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
    const file = marker();
    const batch = fetch(server.mcpUrl, {
      method: 'POST',
      headers,
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 60_000, marker: file } } },
        { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 300 } } },
      ]),
    });
    await untilCallRunning(server);
    const cancel = await fetch(server.mcpUrl, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } }) });
    expect(cancel.status).toBe(202);
    const body = await Promise.race([batch.then((res) => res.text()), new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 10_000))]);
    // As JSON (the batch answered at once) or as SSE events (headers sent earlier).
    type Answer = { id: number; result?: Result };
    const answers: Answer[] = /^\s*[[{]/.test(body)
      ? [JSON.parse(body)].flat()
      : body
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => JSON.parse(line.slice(5)) as Answer);
    expect(answers.map((answer) => answer.id)).toEqual([8]);
    expect(answers[0].result?.isError).toBeUndefined();
    expect(await eventually(() => readMarker(file).startsWith('cancelled'))).toBe(true);
    await fetch(server.mcpUrl, { method: 'DELETE', headers });
  });

  it('cancels the call in the worker when the client drops the HTTP request it was waiting on', async () => {
    const { transport } = await connectHttp(server.mcpUrl);
    const file = marker();
    const controller = new AbortController();
    const response = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': transport.sessionId! },
      body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 60_000, marker: file } } }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    controller.abort();
    expect(await eventually(() => readMarker(file).startsWith('cancelled'))).toBe(true);
    await transport.close();
  });

  it('answers and cancels a call with a progress token, and one with other _meta (the SDK path), as it does a plain call', async () => {
    const plain = await call(client, 'echo', { text: 'same' });
    const withToken = (await client.callTool({ name: 'echo', arguments: { text: 'same' } }, undefined, { onprogress: () => undefined })) as Result;
    const withMeta = (await client.callTool({ name: 'echo', arguments: { text: 'same' }, _meta: { note: 'x' } })) as Result;
    expect(textOf(plain)).toBe('same');
    expect(withToken).toEqual(plain);
    expect(withMeta).toEqual(plain);
    await expect(client.callTool({ name: 'no-such-tool', arguments: {}, _meta: { note: 'x' } })).rejects.toThrow(/-32602.*unknown tool 'no-such-tool'/);
    for (const options of [{ onprogress: () => undefined }, {}]) {
      const file = marker();
      const controller = new AbortController();
      const meta = 'onprogress' in options ? {} : { _meta: { note: 'x' } };
      const pending = client.callTool({ name: 'sleep', arguments: { ms: 60_000, marker: file }, ...meta }, undefined, { signal: controller.signal, ...options });
      await untilCallRunning(server);
      controller.abort('user pressed stop');
      await expect(pending).rejects.toThrow();
      expect(await eventually(() => readMarker(file) === 'cancelled:the call was cancelled')).toBe(true);
    }
  });

  it('cancels the running calls of a session ended with DELETE', async () => {
    const { transport } = await connectHttp(server.mcpUrl);
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': transport.sessionId! };
    const file = marker();
    // Not awaited: the answer's headers only come with the answer (or the first heartbeat).
    const response = fetch(server.mcpUrl, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 60_000, marker: file } } }),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const ended = await fetch(server.mcpUrl, { method: 'DELETE', headers });
    expect(ended.status).toBe(200);
    await eventually(() => readMarker(file) !== '');
    expect(readMarker(file)).toBe('cancelled:the call was cancelled');
    // The call is answered with an error, so the caller does not wait for its own timeout.
    expect(JSON.parse(await (await response).text())).toEqual({ jsonrpc: '2.0', id: 9, error: { code: -32000, message: 'the session was closed before this request was answered' } });
  });

  it('keeps worker errors as results with their stable code', async () => {
    const result = await call(client, 'fail', { code: 'UPSTREAM_ERROR' });
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('UPSTREAM_ERROR');
    expect(textOf(result)).toBe('UPSTREAM_ERROR (tool fail, toolset test): failed on purpose with UPSTREAM_ERROR');
  });

  it('answers arguments that fail the input schema with BAD_INPUT naming the argument', async () => {
    const result = await call(client, 'sleep', { ms: 'soon' });
    expect(errorCodeOf(result)).toBe('BAD_INPUT');
    expect(textOf(result)).toBe("BAD_INPUT (tool sleep): invalid arguments: argument 'ms' must be integer, got the string \"soon\"");
    const missing = await call(client, 'echo', {});
    expect(textOf(missing)).toBe("BAD_INPUT (tool echo): invalid arguments: missing required argument 'text'");
  });

  it('answers an unknown tool with a JSON-RPC invalid-params error', async () => {
    await expect(call(client, 'no-such-tool')).rejects.toThrow(/-32602.*unknown tool 'no-such-tool'/);
  });

  it('runs thread pool calls, stops a runaway thread at the deadline, and survives a thread crash', async () => {
    expect(textOf(await call(client, 'th-echo', { text: 'in a thread' }))).toBe('in a thread');
    expect(errorCodeOf(await call(client, 'th-crash'))).toBe('WORKER_CRASHED');
    expect(errorCodeOf(await call(client, 'th-spin', { ms: 30_000 }))).toBe('TIMEOUT');
    // A call sent now waits for the spinning thread's end and its replacement's start, within its
    // 2 s budget: on a loaded machine it may not fit, so the pool is asked until it answers.
    expect(await eventually(async () => textOf(await call(client, 'th-echo', { text: 'still here' })) === 'still here')).toBe(true);
  });
});

describe('pool limits and restart intensity', () => {
  it('answers BUSY at once when the queue is full', async () => {
    const server = await startHttp('mcpvisor', [
      '--config',
      writeConfig(fixtureConfig({ thread: false, process: { concurrency: 1 }, root: { pools: { maxQueue: 1 } } })),
    ]);
    const { client } = await connectHttp(server.mcpUrl);
    const calls = [0, 1, 2].map(() => call(client, 'sleep', { ms: 300 }));
    const codes = (await Promise.all(calls)).map((result) => errorCodeOf(result) ?? 'ok');
    expect(codes.sort()).toEqual(['BUSY', 'ok', 'ok']);
    await client.close();
    await server.stop();
  });

  it('runs a queued call once the worker has stopped the cancelled call ahead of it', async () => {
    // A deadline the queued call waited out beside an idle worker: nothing woke it.
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, process: { concurrency: 1, callTimeoutMs: 10_000 } }))]);
    const { client } = await connectHttp(server.mcpUrl);
    try {
      const controller = new AbortController();
      const running = call(client, 'sleep', { ms: 60_000 }, { signal: controller.signal });
      await untilCallRunning(server);
      const queued = call(client, 'echo', { text: 'my turn' });
      const queuedInPool = async () => ((await (await fetch(`${server.baseUrl}/health`)).json()) as { pools: Array<{ queued: number }> }).pools[0].queued === 1;
      expect(await eventually(queuedInPool)).toBe(true);
      controller.abort('stop');
      await expect(running).rejects.toThrow();
      const result = await queued;
      expect(errorCodeOf(result)).toBeUndefined();
      expect(textOf(result)).toBe('my turn');
    } finally {
      await client.close();
      await server.stop();
    }
  });

  it('marks a crash-looping pool degraded in /health while the supervisor stays up', async () => {
    // Replacements that cannot start: a crash loop no call causes (a crash per call is that call's
    // failure and does not degrade the pool: test/integration/toolsets/crashing-calls.test.ts).
    const marker = path.join(tempDir('mcpvisor-crash-loop-'), 'broken');
    const server = await startHttp('mcpvisor', [
      '--config',
      writeConfig(fixtureConfig({ thread: false, process: { config: { failInitOnceFileExists: marker } }, root: { pools: { restart: { maxRestarts: 2, windowMs: 60_000, backoffBaseMs: 20, backoffMaxMs: 500 } } } })),
    ]);
    const { client } = await connectHttp(server.mcpUrl);
    try {
      writeFileSync(marker, '');
      expect(errorCodeOf(await call(client, 'crash'))).toBe('WORKER_CRASHED');
      // Over the intensity (3 failed starts > 2 in the window) the pool is degraded.
      expect(await eventually(async () => (await fetch(`${server.baseUrl}/health`)).status === 503 && ((await (await fetch(`${server.baseUrl}/health`)).json()) as { pools: Array<{ restarts: number }> }).pools[0].restarts >= 3)).toBe(true);
      const health = await fetch(`${server.baseUrl}/health`);
      const body = (await health.json()) as { status: string; pools: Array<{ state: string; restarts: number; lastError: string }> };
      expect(body.status).toBe('degraded');
      expect(body.pools[0].state).toBe('degraded');
      expect(body.pools[0].lastError).toContain(`cannot start: ${marker} exists`);
      // While no worker is alive, its tools answer a clear error at once instead of waiting.
      const meanwhile = await call(client, 'echo', { text: 'back' });
      expect(errorCodeOf(meanwhile)).toBe('POOL_UNAVAILABLE');
      expect(textOf(meanwhile)).toContain(`cannot start: ${marker} exists`);
      // Slow retries go on: the pool comes back and serves again.
      rmSync(marker);
      expect(await eventually(async () => textOf(await call(client, 'echo', { text: 'back' })) === 'back')).toBe(true);
    } finally {
      await client.close();
      await server.stop();
    }
  });

  it('reports degraded in /health while a pool has no live worker, before its restart', async () => {
    const marker = path.join(tempDir('mcpvisor-no-worker-'), 'broken');
    const server = await startHttp('mcpvisor', [
      '--config',
      writeConfig(fixtureConfig({ thread: false, process: { config: { failInitOnceFileExists: marker } }, root: { pools: { restart: { maxRestarts: 5, windowMs: 60_000, backoffBaseMs: 3000, backoffMaxMs: 3000 } } } })),
    ]);
    const { client } = await connectHttp(server.mcpUrl);
    try {
      expect((await fetch(`${server.baseUrl}/health`)).status).toBe(200);
      writeFileSync(marker, '');
      expect(errorCodeOf(await call(client, 'crash'))).toBe('WORKER_CRASHED');
      // The replacement fails to start; the next try is 3 s away.
      expect(await eventually(async () => ((await (await fetch(`${server.baseUrl}/health`)).json()) as { pools: Array<{ lastError?: string }> }).pools[0].lastError?.includes('cannot start') === true)).toBe(true);
      rmSync(marker);
      const health = await fetch(`${server.baseUrl}/health`);
      const body = (await health.json()) as { status: string; pools: Array<{ state: string; alive: number }> };
      // The pool's own state says so too: a monitor may watch one pool rather than the status.
      expect(body.pools[0]).toMatchObject({ state: 'degraded', alive: 0 });
      expect(health.status).toBe(503);
      expect(body.status).toBe('degraded');
      // Once restarted, ok again.
      expect(await eventually(async () => (await fetch(`${server.baseUrl}/health`)).status === 200, 10_000)).toBe(true);
    } finally {
      await client.close();
      await server.stop();
    }
  });

  it('lists tools in the configuration\'s order, whichever pool gets ready first', async () => {
    const config = fixtureConfig({ thread: false, process: { namespace: 'slow', config: { initDelayMs: 800 } } });
    (config.customToolsets as Record<string, unknown>[]).push({ name: 'fast', namespace: 'fast', module: (config.customToolsets as Array<{ module: string }>)[0].module, workers: 1, callTimeoutMs: 5000 });
    const server = await startHttp('mcpvisor', ['--config', writeConfig(config)]);
    try {
      const { client } = await connectHttp(server.mcpUrl);
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      const firstFast = names.findIndex((name) => name.startsWith('fast-'));
      expect(names.slice(0, firstFast).every((name) => name.startsWith('slow-'))).toBe(true);
      expect(firstFast).toBeGreaterThan(0);
      await client.close();
    } finally {
      await server.stop();
    }
  });

  it('refuses to start when a worker fails to initialise, with its reason', async () => {
    const server = spawnBin('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, process: { config: { failInit: 'the API key is wrong' } } }))]);
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toContain('mcpvisor: failed to start: toolset test (customToolsets[0]): the API key is wrong');
  });

  it('refuses to start when a worker announces a malformed tool list', async () => {
    const server = spawnBin('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, process: { config: { malformedTools: true } } }))]);
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toContain("mcpvisor: failed to start: toolset test (customToolsets[0]): the worker announced a malformed tool list (tool 0, 'sleep')");
  });

  it('refuses to start when a worker announces a tool list JSON cannot hold, naming where (the worker crashed, "exited with code 1")', async () => {
    const server = spawnBin('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, process: { config: { bigintDefault: true } } }))]);
    expect(await server.exited).toBe(1);
    // The fixture's last tool, whatever its index.
    expect(server.stderr()).toMatch(/mcpvisor: failed to start: toolset test \(customToolsets\[0\]\): the worker's tool list cannot be written as JSON: \d+\.inputSchema\.properties\.n\.default is a BigInt\n/);
  });

  it('refuses to start when a thread toolset announces a tool list JSON cannot hold, naming where', async () => {
    const server = spawnBin('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: { config: { bigintDefault: true } } }))]);
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toMatch(/mcpvisor: failed to start: toolset threads \(customToolsets\[1\]\): .*the worker's tool list cannot be written as JSON: 0\.inputSchema\.properties\.n\.default is a BigInt/);
  });

  it.each([
    // The mistake a process worker's runWorker(init) invites: the service it answers holds a function, which cannot leave the thread.
    ['an init function whose service holds its handler', 'module.exports = async () => ({ tools: [], handle: async () => ({ content: [] }) });', 'its thread ended with an error that has no message (an answer it could not send, such as a function?)'],
    ['a function answering something else', 'module.exports = async () => ({ tools: [] });', "its function answered an object with 'tools', not a thread worker's answer"],
  ])("refuses to start when a thread toolset's module exports %s instead of threadWorker(init), saying what to export (it said 'undefined')", async (_what, source, why) => {
    const module = path.join(tempDir('mcpvisor-thread-module-'), 'not-thread-worker.js');
    writeFileSync(module, `${source}\n`);
    const server = spawnBin('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: { module } }))]);
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toContain(`mcpvisor: failed to start: toolset threads (customToolsets[1]): the threads threads failed to start: ${why}; ${module} must export threadWorker(init) from 'mcpvisor', as module.exports or the default export\n`);
  });

  it("refuses to start when a process toolset's module never calls runWorker, saying so (it said only 'exited with exit code 0')", async () => {
    const module = path.join(tempDir('mcpvisor-process-module-'), 'no-run-worker.js');
    writeFileSync(module, 'module.exports = async () => ({ tools: [], handle: async () => ({ content: [] }) });\n');
    const server = spawnBin('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, process: { module } }))]);
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toContain(`mcpvisor: failed to start: toolset test (customToolsets[0]): worker of test exited with exit code 0 before it was ready: ${module} ended without calling runWorker(init) from 'mcpvisor'\n`);
  });

  it('refuses to start when a custom worker announces a tool MCP clients refuse, naming it (the SDK client got no tools at all)', async () => {
    const extraTool = { name: 'loose', description: 'an input schema without its type', inputSchema: { properties: { a: { type: 'string' } } } };
    const server = spawnBin('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, process: { config: { extraTool } } }))]);
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toMatch(
      /mcpvisor: failed to start: toolset test \(customToolsets\[0\]\): the worker announced a tool MCP clients refuse \(tool \d+, 'loose'\): 'inputSchema\.type' must be "object" \(it is missing\); the SDK client refuses the whole tools\/list for it\n/,
    );
  });

  it('serves a tool whose name MCP advises against, and warns naming it', async () => {
    const extraTool = { name: 'has space', description: 'a name model APIs refuse', inputSchema: { type: 'object', properties: {} } };
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false, process: { config: { extraTool } } }))]);
    try {
      const { client } = await connectHttp(server.mcpUrl);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('has space');
      await client.close();
      expect(server.server.stderr()).toMatch(/"tools":\["has space"\],"count":1,"toolsets":\["test"\],"msg":"1 tool name\(s\) use characters or a length MCP advises against .*; rename them in their toolset \(test\)"/);
    } finally {
      await server.stop();
    }
  });
});
