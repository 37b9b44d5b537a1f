import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { serializeMessage, toJsonRpcMessage } from './wire';

/** How much of an over-long line's end is kept, to find its id. */
const SKIPPED_TAIL_CHARS = 256;

/**
 * Newline-delimited JSON-RPC over stdin/stdout. Unlike the SDK's stdio transport, which drops a
 * line it cannot parse, every bad line gets the JSON-RPC 2.0 answer: -32700 for text that is not
 * JSON, -32600 for JSON that is not a JSON-RPC message (or a batch, which MCP no longer has). A
 * line longer than `maxLineBytes` is skipped as it arrives, so the buffer stays bounded, and
 * answered -32600 when it ends, with its id when the line ends with one (the SDK client writes
 * `id` last), so the caller is not left waiting for its timeout.
 */
export class LineStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #input: NodeJS.ReadableStream;
  #output: NodeJS.WritableStream;
  #maxLineBytes: number;
  #buffer = '';
  /** While an over-long line is being dropped: its last characters, where its id usually is. */
  #skippedTail: string | undefined;
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
      if (this.#skippedTail !== undefined) {
        const tail = (this.#skippedTail + line).slice(-SKIPPED_TAIL_CHARS);
        this.#skippedTail = undefined;
        this.#tooLong(tail);
        continue;
      }
      if (this.#over(line)) {
        this.#tooLong(line.slice(-SKIPPED_TAIL_CHARS));
      } else if (line.trim() !== '') this.#handle(line);
    }
    if (this.#skippedTail !== undefined) {
      this.#skippedTail = (this.#skippedTail + this.#buffer).slice(-SKIPPED_TAIL_CHARS);
      this.#buffer = '';
    } else if (this.#over(this.#buffer)) {
      // Dropped as it arrives, so memory stays bounded; answered when the line ends.
      this.#skippedTail = this.#buffer.slice(-SKIPPED_TAIL_CHARS);
      this.#buffer = '';
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
    const message = toJsonRpcMessage(value);
    if (!message) {
      const id = (value as { id?: unknown } | null)?.id;
      return this.#reply(typeof id === 'string' || typeof id === 'number' ? id : null, -32600, 'Invalid Request: not a JSON-RPC 2.0 message');
    }
    this.onmessage?.(message);
  }

  /** Longer than the limit in UTF-8 (a UTF-16 unit is at most 3 bytes: most lines skip the count). */
  #over(text: string): boolean {
    return text.length * 3 > this.#maxLineBytes && Buffer.byteLength(text) > this.#maxLineBytes;
  }

  #tooLong(tail: string): void {
    this.#reply(trailingId(tail), -32600, `Invalid Request: message longer than ${this.#maxLineBytes} bytes`);
  }

  #reply(id: string | number | null, code: number, message: string): void {
    void this.send({ jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage);
  }
}

/** The id of a JSON-RPC message whose last member is a top-level `"id"`, from the message's end. */
function trailingId(tail: string): string | number | null {
  // One closing brace after the id: a nested object's `id` would be followed by two or more.
  const match = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/.exec(tail);
  if (!match) return null;
  try {
    const id = JSON.parse(match[1]) as unknown;
    return typeof id === 'number' || typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}
