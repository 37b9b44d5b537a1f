import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { serializeMessage } from './wire';

/**
 * Newline-delimited JSON-RPC over stdin/stdout. Unlike the SDK's stdio transport, which drops a
 * line it cannot parse, every bad line gets the JSON-RPC 2.0 answer: -32700 for text that is not
 * JSON, -32600 for JSON that is not a JSON-RPC message (or a batch, which MCP no longer has). A
 * line longer than `maxLineBytes` is answered -32600 and skipped, so the buffer stays bounded.
 */
export class LineStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #input: NodeJS.ReadableStream;
  #output: NodeJS.WritableStream;
  #maxLineBytes: number;
  #buffer = '';
  #skipping = false;
  #closed = false;

  constructor(options: { input?: NodeJS.ReadableStream; output?: NodeJS.WritableStream; maxLineBytes?: number } = {}) {
    this.#input = options.input ?? process.stdin;
    this.#output = options.output ?? process.stdout;
    this.#maxLineBytes = options.maxLineBytes ?? 4 * 1024 * 1024;
  }

  async start(): Promise<void> {
    this.#input.setEncoding('utf8');
    this.#input.on('data', this.#onData);
    this.#input.on('error', this.#onError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.#output.write(`${serializeMessage(message)}\n`)) resolve();
      else this.#output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#input.off('data', this.#onData);
    this.#input.off('error', this.#onError);
    this.onclose?.();
  }

  #onError = (error: Error) => this.onerror?.(error);

  #onData = (chunk: string) => {
    this.#buffer += chunk;
    let at: number;
    while ((at = this.#buffer.indexOf('\n')) >= 0) {
      const line = this.#buffer.slice(0, at).replace(/\r$/, '');
      this.#buffer = this.#buffer.slice(at + 1);
      if (this.#skipping) {
        this.#skipping = false;
        continue;
      }
      if (line.trim() !== '') this.#handle(line);
    }
    if (!this.#skipping && Buffer.byteLength(this.#buffer) > this.#maxLineBytes) {
      this.#buffer = '';
      this.#skipping = true;
      this.#reply(null, -32600, `Invalid Request: message longer than ${this.#maxLineBytes} bytes`);
    }
  };

  #handle(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return this.#reply(null, -32700, 'Parse error: the line is not valid JSON');
    }
    if (Array.isArray(value)) return this.#reply(null, -32600, 'Invalid Request: batches are not supported');
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const id = (value as { id?: unknown } | null)?.id;
      return this.#reply(typeof id === 'string' || typeof id === 'number' ? id : null, -32600, 'Invalid Request: not a JSON-RPC 2.0 message');
    }
    this.onmessage?.(parsed.data);
  }

  #reply(id: string | number | null, code: number, message: string): void {
    void this.send({ jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage);
  }
}
