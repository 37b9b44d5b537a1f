/** The little of `ws` (puppeteer's dependency; no types installed) used here. */
interface Socket {
  on(event: 'message', listener: (data: unknown) => void): void;
  once(event: 'open' | 'error', listener: (error?: Error) => void): void;
  send(data: string): void;
  close(): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const WebSocket = require('ws') as new (url: string, options: { maxPayload: number }) => Socket;

/** Objects of one kind in a heap snapshot: how many, and their own bytes. */
export type Histogram = Map<string, { count: number; bytes: number }>;

/**
 * The supervisor's heap through its inspector (started with `--inspect=127.0.0.1:0`): heap used
 * after a full GC, and a histogram of a heap snapshot by constructor, to compare a quiet server
 * before and after hours of load without changing production code.
 */
export class Inspector {
  #ws: Socket;
  #next = 1;
  #pending = new Map<number, { resolve: (value: Record<string, unknown>) => void; reject: (error: Error) => void }>();
  #chunks: string[] = [];

  private constructor(ws: Socket) {
    this.#ws = ws;
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: number; result?: Record<string, unknown>; error?: { message: string }; method?: string; params?: { chunk?: string } };
      if (message.method === 'HeapProfiler.addHeapSnapshotChunk') this.#chunks.push(message.params!.chunk!);
      if (message.id === undefined) return;
      const waiter = this.#pending.get(message.id);
      this.#pending.delete(message.id);
      if (message.error) waiter?.reject(new Error(message.error.message));
      else waiter?.resolve(message.result ?? {});
    });
  }

  static async connect(url: string): Promise<Inspector> {
    const ws = new WebSocket(url, { maxPayload: 1 << 30 });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new Inspector(ws);
  }

  send(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Heap used in MB after a full GC. */
  async heapUsedAfterGc(): Promise<number> {
    await this.send('HeapProfiler.collectGarbage');
    const { result } = (await this.send('Runtime.evaluate', { expression: 'process.memoryUsage().heapUsed', returnByValue: true })) as { result: { value: number } };
    return result.value / 1e6;
  }

  /** A heap snapshot (which collects garbage first), counted by kind: `object Foo`, `closure bar`, or the node type. */
  async histogram(): Promise<Histogram> {
    this.#chunks = [];
    await this.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    const snapshot = JSON.parse(this.#chunks.join('')) as {
      snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
      nodes: number[];
      strings: string[];
    };
    this.#chunks = [];
    const fields = snapshot.snapshot.meta.node_fields;
    const types = snapshot.snapshot.meta.node_types[0];
    const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field));
    const histogram: Histogram = new Map();
    for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
      const type = types[snapshot.nodes[i + typeAt]];
      const key = type === 'object' || type === 'closure' || type === 'native' ? `${type} ${snapshot.strings[snapshot.nodes[i + nameAt]].slice(0, 60)}` : type;
      const entry = histogram.get(key) ?? { count: 0, bytes: 0 };
      entry.count++;
      entry.bytes += snapshot.nodes[i + sizeAt];
      histogram.set(key, entry);
    }
    return histogram;
  }

  close(): void {
    this.#ws.close();
  }
}

/** The kinds that grew most between two histograms, by bytes, as text. */
export function histogramGrowth(before: Histogram, after: Histogram, top = 15): string {
  const rows = [...after].map(([key, entry]) => {
    const was = before.get(key) ?? { count: 0, bytes: 0 };
    return { key, count: entry.count - was.count, bytes: entry.bytes - was.bytes, total: entry.count };
  });
  rows.sort((a, b) => b.bytes - a.bytes);
  return rows
    .slice(0, top)
    .map((row) => `  ${row.key.padEnd(64)} ${(row.count >= 0 ? '+' : '') + row.count} objects (${row.total} now), ${(row.bytes >= 0 ? '+' : '') + (row.bytes / 1e3).toFixed(1)} KB`)
    .join('\n');
}
