import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { errorCodeOf } from '../../protocol/results';
import { itemTag } from './servers';

type Result = { content?: Array<{ type: string; text?: string }>; isError?: boolean; structuredContent?: Record<string, unknown>; _meta?: Record<string, unknown> };
/** Why an answer is wrong, or undefined when it is right. */
type Check = (result: Result) => string | undefined;

export interface Tally {
  calls: number;
  wrong: number;
  /** Answers WORKER_CRASHED / POOL_UNAVAILABLE within 20 s of a worker we killed. */
  crashedByKill: number;
  byKind: Map<string, { calls: number; wrong: number; examples: string[] }>;
  /** Flows (session churn, drops, cancels) that did not go as expected. */
  flowFailures: Map<string, { count: number; examples: string[] }>;
  flows: Map<string, number>;
  lastKillAt: number;
}

export function newTally(): Tally {
  return { calls: 0, wrong: 0, crashedByKill: 0, byKind: new Map(), flowFailures: new Map(), flows: new Map(), lastKillAt: 0 };
}

const text = (result: Result) => (result.content ?? []).filter((item) => item.type === 'text').map((item) => item.text ?? '').join('\n');
const rand = (n: number) => Math.floor(Math.random() * n);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const short = (value: string) => (value.length > 300 ? `${value.slice(0, 300)}…` : value);

/** Tool names of the API, found by the SOAK:<what> marker of their summaries. */
export type ApiTools = Record<'get' | 'post' | 'status' | 'slow' | 'big', string>;

export class Load {
  readonly tally = newTally();
  #mcpUrl: string;
  #baseUrl: string;
  #web: string;
  #api: ApiTools;
  #toolCount: number;

  constructor(options: { mcpUrl: string; baseUrl: string; web: string; api: ApiTools; toolCount: number }) {
    this.#mcpUrl = options.mcpUrl;
    this.#baseUrl = options.baseUrl;
    this.#web = options.web;
    this.#api = options.api;
    this.#toolCount = options.toolCount;
  }

  async streamable(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const transport = new StreamableHTTPClientTransport(new URL(this.#mcpUrl));
    const client = new Client({ name: 'soak', version: '1.0.0' });
    await client.connect(transport);
    return { client, transport };
  }

  async sse(): Promise<{ client: Client; transport: SSEClientTransport }> {
    const transport = new SSEClientTransport(new URL('/sse', this.#baseUrl));
    const client = new Client({ name: 'soak-sse', version: '1.0.0' });
    await client.connect(transport);
    return { client, transport };
  }

  /** Calls a tool, counts it and checks its answer. */
  async call(client: Client, kind: string, name: string, args: Record<string, unknown>, check: Check, options: Parameters<Client['callTool']>[2] = {}): Promise<Result | undefined> {
    const entry = this.tally.byKind.get(kind) ?? { calls: 0, wrong: 0, examples: [] };
    this.tally.byKind.set(kind, entry);
    this.tally.calls++;
    entry.calls++;
    let reason: string | undefined;
    let result: Result | undefined;
    try {
      result = (await client.callTool({ name, arguments: args }, undefined, { timeout: 90_000, ...options })) as Result;
      const code = errorCodeOf(result);
      if ((code === 'WORKER_CRASHED' || code === 'POOL_UNAVAILABLE') && Date.now() - this.tally.lastKillAt < 20_000) {
        this.tally.crashedByKill++;
        return result;
      }
      reason = check(result);
      if (reason) reason = `${reason}; got ${code ?? (result.isError ? 'error' : 'ok')}: ${short(text(result))}`;
    } catch (error) {
      reason = `threw ${(error as Error).message}`;
    }
    if (reason) {
      this.tally.wrong++;
      entry.wrong++;
      if (entry.examples.length < 3) entry.examples.push(reason);
    }
    return result;
  }

  #flow(name: string, failure?: string): void {
    this.tally.flows.set(name, (this.tally.flows.get(name) ?? 0) + 1);
    if (!failure) return;
    const entry = this.tally.flowFailures.get(name) ?? { count: 0, examples: [] };
    entry.count++;
    if (entry.examples.length < 3) entry.examples.push(short(failure));
    this.tally.flowFailures.set(name, entry);
  }

  /** One random tool call of the everyday mix, checked. */
  async op(client: Client): Promise<void> {
    const api = this.#api;
    const ok = (want: (t: string, r: Result) => boolean, what: string): Check => (r) => (r.isError || !want(text(r), r) ? `expected ${what}` : undefined);
    const fails = (code: string, also: (t: string) => boolean = () => true): Check => (r) => (r.isError && errorCodeOf(r) === code && also(text(r)) ? undefined : `expected ${code}`);
    const pick = rand(100);
    if (pick < 14) {
      const id = rand(1_000_000);
      await this.call(client, 'api ok', api.get, { id }, ok((t) => t.includes(itemTag(id)), itemTag(id)));
    } else if (pick < 18) {
      const n = rand(1000);
      await this.call(client, 'api post', api.post, { name: `n${n}`, n }, ok((t) => new RegExp(`"doubled":\\s*${n * 2}\\b`).test(t), `doubled ${n * 2}`));
    } else if (pick < 23) {
      const code = [400, 404, 500, 503][rand(4)];
      await this.call(client, 'api 4xx/5xx', api.status, { code }, fails('UPSTREAM_ERROR', (t) => t.includes(String(code))));
    } else if (pick < 25) {
      await this.call(client, 'api timeout', api.slow, { ms: 4000 }, fails('TIMEOUT'));
    } else if (pick < 27) {
      await this.call(client, 'api big body', api.big, { bytes: 1_500_000 }, ok((t) => t.includes('BIG-END'), 'the whole 1.5 MB body'));
    } else if (pick < 45) {
      const [a, b] = [rand(1000), rand(1000)];
      await this.call(client, 'exec short', 'exec', { command: `echo $((${a}+${b}))` }, ok((_t, r) => r.structuredContent?.stdout === `${a + b}\n` && r.structuredContent?.exitCode === 0, `${a + b}`));
    } else if (pick < 47) {
      await this.call(client, 'exec timeout', 'exec', { command: 'sleep 10' }, (r) => (r.structuredContent?.timedOut === true ? undefined : 'expected timedOut'));
    } else if (pick < 49) {
      await this.call(client, 'exec over cap', 'exec', { command: 'yes | head -c 3000000' }, (r) => (r.structuredContent?.stdoutTruncated === true ? undefined : 'expected stdoutTruncated'));
    } else if (pick < 52) {
      await this.call(client, 'exec background', 'exec', { command: 'sleep 30 >/dev/null 2>&1 & echo started' }, ok((_t, r) => r.structuredContent?.stdout === 'started\n', 'started'));
    } else if (pick < 64) {
      const file = `f-${rand(1e9)}.txt`;
      const content = `content ${rand(1e9)}\n`.repeat(1 + rand(50));
      await this.call(client, 'writeFile', 'writeFile', { path: file, content }, ok((_t, r) => r.structuredContent?.bytesWritten === Buffer.byteLength(content), 'bytesWritten'));
      await this.call(client, 'readFile', 'readFile', { path: file }, ok((_t, r) => r.structuredContent?.content === content, 'the content written'));
      await this.call(client, 'listDir', 'listDir', { path: '.' }, ok((_t, r) => (r.structuredContent?.entries as Array<{ name: string }> | undefined)?.some((e) => e.name === file) === true, file));
      await this.call(client, 'deleteFile', 'deleteFile', { path: file }, ok((_t, r) => r.structuredContent?.deleted === true, 'deleted'));
    } else if (pick < 80) {
      const n = rand(1e6);
      await this.call(client, 'fetch page', 'fetch_web_content', { url: `${this.#web}/page/${n}` }, ok((t) => t.includes(`number ${n}.`), `number ${n}`));
    } else if (pick < 84) {
      await this.call(client, 'fetch large', 'fetch_web_content', { url: `${this.#web}/large` }, ok((t) => t.includes('Section 1, paragraph 0') && t.includes('start_index'), 'the first 10,000 characters and a start_index note'));
    } else if (pick < 88) {
      const n = rand(1e6);
      await this.call(client, 'fetch slow', 'fetch_web_content', { url: `${this.#web}/slow/1200/${n}` }, ok((t) => t.includes(`number ${n}.`), `number ${n}`));
    } else if (pick < 93) {
      const n = rand(1e6);
      await this.call(client, 'fetch redirect', 'fetch_web_content', { url: `${this.#web}/redirect/3/${n}` }, ok((t) => t.includes(`number ${n}.`), `number ${n}`));
    } else if (pick < 95) {
      await this.call(client, 'fetch timeout', 'fetch_web_content', { url: `${this.#web}/slow/6000/1` }, fails('TIMEOUT'));
    } else {
      await this.call(client, 'api slow ok', api.slow, { ms: 300 }, ok((t) => /"waited":\s*300/.test(t), 'waited 300'));
    }
  }

  async search(client: Client, n: number): Promise<void> {
    await this.call(client, 'search', 'search', { query: `soak ${n}` }, (r) =>
      !r.isError && ((r.structuredContent?.results as unknown[] | undefined)?.length ?? 0) > 0 ? undefined : 'expected results');
  }

  /** A session created, listed, used and closed with DELETE. */
  async churn(): Promise<void> {
    const { client, transport } = await this.streamable();
    try {
      const { tools } = await client.listTools();
      if (tools.length !== this.#toolCount) this.#flow('churn', `listed ${tools.length} tools, expected ${this.#toolCount}`);
      for (let i = 0, n = 1 + rand(3); i < n; i++) await this.op(client);
      await transport.terminateSession();
      this.#flow('churn');
    } finally {
      await client.close();
    }
  }

  /** A session used once and left without DELETE: the server's idle policy must end it. */
  async abandon(): Promise<void> {
    const { client } = await this.streamable();
    await this.op(client);
    // close() aborts the GET stream and sends no DELETE: a client that went away.
    await client.close();
    this.#flow('abandon');
  }

  /** Clients left open by `leak`, closed at the end of the run. */
  readonly leaked: Client[] = [];

  /**
   * A session used once and dropped, its client left open (a gateway that opens one per
   * conversation and forgets it): its stream stays open, so only the server's
   * `connectedSessionIdleTimeoutMs` can end it.
   */
  async leak(legacy: boolean): Promise<void> {
    const { client } = legacy ? await this.sse() : await this.streamable();
    await this.op(client);
    // A legacy client's EventSource reconnects when the server ends its stream, and the server
    // gives it a new session, rightly: that client is alive. Ours gives up instead, so that what
    // stays open measures the server, not how many clients this run has left behind.
    if (legacy) client.onerror = () => void client.close().catch(() => undefined);
    this.leaked.push(client);
    this.#flow(legacy ? 'leak (sse, stream open)' : 'leak (stream open)');
  }

  /** A legacy SSE session, used and closed; or dropped in the middle of a call. */
  async sseSession(dropMidCall: boolean): Promise<void> {
    const { client } = await this.sse();
    if (!dropMidCall) {
      await this.op(client);
      await client.close();
      this.#flow('sse');
      return;
    }
    const pending = client.callTool({ name: 'exec', arguments: { command: 'sleep 1.5; echo late' } }).then(() => 'answered', () => 'rejected');
    await sleep(300);
    await client.close();
    const outcome = await pending;
    this.#flow('sse dropped mid-call', outcome === 'rejected' ? undefined : `the call was ${outcome} after the stream was dropped`);
  }

  /** A Streamable HTTP client that goes away while its call runs (its POST aborted). */
  async disconnectMidCall(): Promise<void> {
    const { client } = await this.streamable();
    const slow = rand(2) === 0 ? { name: 'exec', arguments: { command: 'sleep 1.5; echo late' } } : { name: this.#api.slow, arguments: { ms: 1500 } };
    const pending = client.callTool(slow).then(() => 'answered', () => 'rejected');
    await sleep(300);
    await client.close();
    const outcome = await pending;
    this.#flow('disconnect mid-call', outcome === 'rejected' ? undefined : `the call was ${outcome}`);
  }

  /** notifications/cancelled for a running call; the session answers the next call. */
  async cancel(client: Client): Promise<void> {
    const controller = new AbortController();
    const targets = [
      { name: 'exec', arguments: { command: 'sleep 1.5; echo late' } },
      { name: this.#api.slow, arguments: { ms: 1500 } },
      { name: 'fetch_web_content', arguments: { url: `${this.#web}/slow/1500/7` } },
    ];
    const pending = client.callTool(targets[rand(targets.length)], undefined, { signal: controller.signal }).then(() => 'answered', () => 'rejected');
    await sleep(200 + rand(200));
    controller.abort();
    const outcome = await pending;
    this.#flow('cancel', outcome === 'rejected' ? undefined : `the cancelled call was ${outcome}`);
  }

  /** A call with a progress token: progress comes while it runs, then the right answer. */
  async progress(client: Client): Promise<void> {
    let notes = 0;
    await this.call(client, 'exec with progress', 'exec', { command: 'sleep 2.2; echo done' }, (r) =>
      r.structuredContent?.stdout === 'done\n' && notes > 0 ? undefined : `expected done after progress (${notes} notifications)`,
    { onprogress: () => notes++, resetTimeoutOnProgress: true });
  }

  /** One virtual user: a steady session plus a random mix of flows, until `until`. */
  async user(until: number): Promise<void> {
    let steady: Awaited<ReturnType<Load['streamable']>> | undefined;
    while (Date.now() < until) {
      try {
        steady ??= await this.streamable();
        const pick = rand(100);
        if (pick < 72) await this.op(steady.client);
        else if (pick < 80) await this.churn();
        else if (pick < 85) await this.abandon();
        else if (pick < 86) await this.leak(rand(3) === 0);
        else if (pick < 89) await this.sseSession(false);
        else if (pick < 91) await this.sseSession(true);
        else if (pick < 94) await this.disconnectMidCall();
        else if (pick < 97) await this.cancel(steady.client);
        else await this.progress(steady.client);
      } catch (error) {
        this.#flow('errors thrown by a flow', (error as Error).message);
        await steady?.client.close().catch(() => undefined);
        steady = undefined;
        await sleep(500);
      }
      await sleep(20 + rand(60));
    }
    if (steady) {
      await steady.transport.terminateSession().catch(() => undefined);
      await steady.client.close();
    }
  }
}
