import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { startHttp, textOf, type HttpServer } from '../../helpers/mcp';
import { eventually } from '../../helpers/processes';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy';
import { tempDir } from '../../helpers/temp';

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean };

/**
 * A call's SSE response stream cut mid-call (a network change, a proxy's timeout): the SDK client
 * resumes it by itself with GET and Last-Event-ID, and the answer and later progress come on the
 * resumed stream. Through a TCP proxy on 127.0.0.1 the test can cut.
 */
const config = (resumability: Record<string, unknown> = {}) =>
  writeConfig(
    fixtureConfig({
      thread: false,
      process: { callTimeoutMs: 30_000 },
      root: {
        pools: { cancelGraceMs: 300, progressIntervalMs: 200, restart: { maxRestarts: 3, windowMs: 60000, backoffBaseMs: 50, backoffMaxMs: 2000 } },
        http: { resumability },
      },
    }),
    'resumability.json',
  );

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'mcpvisor-resume-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

async function inFlight(server: HttpServer): Promise<number> {
  return ((await (await fetch(`${server.baseUrl}/health`)).json()) as { inFlightCalls: number }).inFlightCalls;
}

/** A long call whose stream is cut at its first progress notification; `whileCut` runs then. */
async function callCutAtFirstProgress(client: Client, proxy: TcpProxy, args: Record<string, unknown>, whileCut: () => Promise<void> = async () => undefined) {
  const progress: Progress[] = [];
  let cut: Promise<void> | undefined;
  const result = client.callTool({ name: 'sleep', arguments: args }, undefined, {
    timeout: 15_000,
    onprogress: (update) => {
      progress.push(update);
      if (cut) return;
      proxy.hold();
      proxy.sever();
      cut = whileCut().finally(() => proxy.release());
    },
  });
  const settled: { value?: Result; error?: Error } = await result.then((value) => ({ value: value as Result }), (error: Error) => ({ error }));
  await cut;
  return { ...settled, progress };
}

describe('a call whose Streamable HTTP response stream is cut mid-call', () => {
  let server: HttpServer;
  let proxy: TcpProxy;
  beforeAll(async () => {
    server = await startHttp('mcpvisor', ['--config', config({ maxBytes: 4096 })]);
    proxy = await startTcpProxy(server.baseUrl);
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
  });

  test('gets its answer on the resumed stream, also when the call ended while the stream was down', async () => {
    const client = await connect(`${proxy.origin}/mcp`);
    try {
      // Reconnections wait until the call has ended: its answer can only come from the store.
      const { value, error } = await callCutAtFirstProgress(client, proxy, { ms: 1000 }, async () => {
        expect(await eventually(async () => (await inFlight(server)) === 0)).toBe(true);
      });
      expect(error).toBeUndefined();
      expect(textOf(value)).toBe('slept 1000 ms');
    } finally {
      await client.close();
    }
  });

  test('goes on receiving progress after the resume, each value once, across two cuts', async () => {
    const client = await connect(`${proxy.origin}/mcp`);
    try {
      const progress: Progress[] = [];
      const cuts: number[] = [];
      const result = (await client.callTool({ name: 'sleep', arguments: { ms: 3000 } }, undefined, {
        timeout: 15_000,
        onprogress: (update) => {
          progress.push(update);
          // The first notification and the first after a resume: cut again.
          if (progress.length === 1 || (cuts.length === 1 && progress.length === cuts[0] + 2)) {
            cuts.push(progress.length);
            proxy.sever();
          }
        },
      })) as Result;
      expect(textOf(result)).toBe('slept 3000 ms');
      expect(cuts).toHaveLength(2);
      expect(progress.length).toBeGreaterThan(cuts[1]);
      for (let i = 1; i < progress.length; i++) expect(progress[i].progress).toBeGreaterThan(progress[i - 1].progress);
    } finally {
      await client.close();
    }
  });

  test('whose answer is over the store bound gets an error naming the bound, not a wait for its timeout', async () => {
    const client = await connect(`${proxy.origin}/mcp`);
    try {
      const { value, error } = await callCutAtFirstProgress(client, proxy, { ms: 1000, pad: 10_000 }, async () => {
        expect(await eventually(async () => (await inFlight(server)) === 0)).toBe(true);
      });
      expect(value).toBeUndefined();
      expect(error?.message).toMatch(/http\.resumability\.maxBytes \(4096\)/);
      // The session lives on: a call after it is answered.
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'after' } }))).toBe('after');
    } finally {
      await client.close();
    }
  });
});

describe('a cut stream not resumed within http.resumability.resumeWindowMs', () => {
  let server: HttpServer;
  let proxy: TcpProxy;
  beforeAll(async () => {
    server = await startHttp('mcpvisor', ['--config', config({ resumeWindowMs: 300 })]);
    proxy = await startTcpProxy(server.baseUrl);
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
  });

  test('has its call cancelled, and a resume after that reads an error saying so', async () => {
    const client = await connect(`${proxy.origin}/mcp`);
    try {
      // The call would run 20 s: only the window's end stops it before the reconnection goes through.
      const { value, error } = await callCutAtFirstProgress(client, proxy, { ms: 20_000 }, async () => {
        expect(await eventually(async () => (await inFlight(server)) === 0)).toBe(true);
      });
      expect(value).toBeUndefined();
      expect(error?.message).toMatch(/cancelled: its response stream was cut and not resumed within http\.resumability\.resumeWindowMs \(300 ms\)/);
    } finally {
      await client.close();
    }
  });
});

describe('with http.resumability.enabled false', () => {
  let server: HttpServer;
  let proxy: TcpProxy;
  beforeAll(async () => {
    server = await startHttp('mcpvisor', ['--config', config({ enabled: false })]);
    proxy = await startTcpProxy(server.baseUrl);
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
  });

  test('a cut stream cancels its call at once, as before', async () => {
    const client = await connect(`${proxy.origin}/mcp`);
    const marker = path.join(tempDir('mcpvisor-resume-'), 'marker');
    let cut = false;
    try {
      const call = client.callTool({ name: 'sleep', arguments: { ms: 20_000, marker } }, undefined, {
        timeout: 15_000,
        onprogress: () => {
          if (cut) return;
          cut = true;
          proxy.sever();
        },
      });
      call.catch(() => undefined);
      expect(await eventually(() => existsSync(marker))).toBe(true);
      expect(readFileSync(marker, 'utf8')).toMatch(/^cancelled:/);
    } finally {
      await client.close();
    }
  });
});

/** Initialises a session by hand; returns its id. */
async function session(url: string): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  });
  await response.text();
  return response.headers.get('mcp-session-id')!;
}

const headers = (id: string) => ({ 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25', 'content-type': 'application/json' });

describe('Last-Event-ID on a GET', () => {
  let server: HttpServer;
  beforeAll(async () => {
    server = await startHttp('mcpvisor', ['--config', config()]);
  });
  afterAll(async () => server?.stop());

  test('of another session, or made up, is refused with 400 naming it; one of the session resumes its stream', async () => {
    const [a, b] = [await session(server.mcpUrl), await session(server.mcpUrl)];
    // A call on b answered as a stream from the start (the client takes SSE only): its first event is the priming id.
    const post = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: { ...headers(b), accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 300 } } }),
    });
    const text = await post.text();
    const ids = [...text.matchAll(/^id: (.+)$/gm)].map((match) => match[1]);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/slept 300 ms/);

    for (const [sessionId, lastEventId] of [[a, ids[0]], [b, 'made-up'], [b, `${ids[0]}9`]]) {
      const response = await fetch(server.mcpUrl, { headers: { ...headers(sessionId), accept: 'text/event-stream', 'last-event-id': lastEventId } });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { message: string } };
      expect(body.error.message).toContain(`Last-Event-ID ${JSON.stringify(lastEventId)} is not an event id of this session`);
    }
    // b's own priming id: the answer again, then the stream ends.
    const resumed = await fetch(server.mcpUrl, { headers: { ...headers(b), accept: 'text/event-stream', 'last-event-id': ids[0] } });
    expect(resumed.status).toBe(200);
    expect(await resumed.text()).toMatch(/"id":7,"result".*slept 300 ms/);
  });

  test('resumed many times over, each resume takes the stream over and the last one gets the answer', async () => {
    const id = await session(server.mcpUrl);
    const controller = new AbortController();
    const post = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: { ...headers(id), accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 5000 } } }),
      signal: controller.signal,
    });
    const reader = post.body!.getReader();
    const priming = /^id: (.+)$/m.exec(new TextDecoder().decode((await reader.read()).value))![1];
    controller.abort();
    const bodies: Promise<string>[] = [];
    for (let i = 0; i < 20; i++) {
      const resumed = await fetch(server.mcpUrl, { headers: { ...headers(id), accept: 'text/event-stream', 'last-event-id': priming } });
      expect(resumed.status).toBe(200);
      bodies.push(resumed.text());
    }
    const texts = await Promise.all(bodies);
    // Every resume but the last was ended by the next one, without the answer; the last got it once.
    expect(texts.slice(0, -1).filter((text) => text.includes('"id":9'))).toEqual([]);
    expect(texts.at(-1)!.match(/"id":9,"result"/g)).toHaveLength(1);
  });
});
