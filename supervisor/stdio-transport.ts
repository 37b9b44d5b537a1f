import { isUtf8 } from 'node:buffer';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { serializeMessage, serializeMessageBytes } from './preserialized';
import { batchesAllowed, hasUnsafeId, paramsRefusal, toJsonRpcMessage } from './wire';

/** How much of an over-long line's end is kept, to find its id. */
const SKIPPED_TAIL_CHARS = 256;

/**
 * Newline-delimited JSON-RPC over stdin/stdout. Unlike the SDK's stdio transport, which drops a
 * line it cannot parse, every bad line gets the JSON-RPC 2.0 answer: -32700 for text that is not
 * JSON, -32600 for JSON that is not a JSON-RPC message, or for a batch where the negotiated
 * revision has none (wire.ts batchesAllowed). A batch that is allowed is answered as JSON-RPC
 * says: one array of its answers, written when the last one is ready (#batches). A line longer
 * than `maxLineBytes` is skipped as it arrives, so the buffer stays bounded, and answered -32600
 * when it ends, with its id when the line ends with one (the SDK client writes `id` last), so the
 * caller is not left waiting for its timeout.
 *
 * Backpressure: while more than `maxWaitingBytes` of output waits for a client that does not
 * read stdout, no further line is taken and stdin is not read (the rest of a chunk already read is
 * held), until the output drains. Before, a client that wrote calls and read nothing had every
 * answer kept here (100 answers of 1 MB: RSS 67 to 160 MB); now it is the client's writes that
 * wait, in stdin's pipe, as they do for any program on a pipe. What may wait beyond the bound is
 * the answers of calls already running (at most maxConcurrentCallsPerSession of them).
 * Decisions: a notifications/cancelled written meanwhile waits in the pipe with the rest (it
 * cannot be read past what comes before it); stdin's end is told (`oninputend`) only once every
 * line before it has been taken, so a call the client wrote before closing stdin is still run.
 */
export class LineStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #input: NodeJS.ReadableStream;
  #output: NodeJS.WritableStream;
  #maxLineBytes: number;
  /** The pieces of the line not yet ended, as bytes, and their size. */
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** While an over-long line is being dropped: its last characters, where its id usually is. */
  #skippedTail: string | undefined;
  #closed = false;
  /** The revision initialize negotiated (mcp-session.ts tells it). */
  #protocolVersion: string | undefined;
  /** Batches being answered: the ids still to answer, and the answers so far. */
  #batches: Array<{ waiting: Set<RequestId>; answers: JSONRPCMessage[] }> = [];
  /** Resolves at the output's next `drain`, while writes wait for one. */
  #drained: Promise<void> | undefined;
  #maxWaitingBytes: number;
  /** Reading stopped: the output waits past `maxWaitingBytes` (resumed at its drain). */
  #paused = false;
  /** What was read of stdin but not yet taken, while paused. */
  #held: Buffer | undefined;
  /** stdin ended while lines were held: told once they are taken. */
  #inputEndWaits = false;
  #inputEndTold = false;
  #onpause: ((waitingBytes: number) => void) | undefined;
  /** Called once stdin has ended and every line before its end has been taken. */
  oninputend?: () => void;

  /**
   * `maxWaitingBytes` (default 4 MiB): output waiting past it stops the reading of input until it
   * drains; `maxLineBytes` (default 4 MiB): a longer line is answered -32600.
   */
  constructor(options: { input?: NodeJS.ReadableStream; output?: NodeJS.WritableStream; maxLineBytes?: number; maxWaitingBytes?: number; onpause?: (waitingBytes: number) => void } = {}) {
    this.#onpause = options.onpause;
    this.#input = options.input ?? process.stdin;
    this.#output = options.output ?? process.stdout;
    this.#maxLineBytes = options.maxLineBytes ?? 4 * 1024 * 1024;
    this.#maxWaitingBytes = options.maxWaitingBytes ?? 4 * 1024 * 1024;
  }

  async start(): Promise<void> {
    // Read as bytes, not with setEncoding('utf8'): its decoder made bytes that are not UTF-8
    // U+FFFD silently (a writeFile wrote them); a line now is checked whole (#lineEnds).
    this.#input.on('data', this.#onData);
    this.#input.on('error', this.#onError);
    this.#input.once('end', this.#onInputEnd);
    this.#input.once('close', this.#onInputEnd);
  }

  /** Whether the reading of input is stopped until the output drains. */
  get paused(): boolean {
    return this.#paused;
  }

  setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const id = (message as { id?: RequestId | null }).id;
    if (id !== undefined && id !== null && !('method' in message) && this.#collect(id, message)) return Promise.resolve();
    return this.#write(serializeMessageBytes(message, '', '\n'));
  }

  /** Writes one line: `chunk` ends with its newline when it is bytes (serializeMessageBytes), not when text. */
  #write(chunk: string | Buffer): Promise<void> {
    if (this.#output.write(typeof chunk === 'string' ? `${chunk}\n` : chunk)) return Promise.resolve();
    this.#pauseIfFull();
    // One wait for every write made while the client is not reading: a listener per write passed
    // Node's limit of 10 (a MaxListenersExceededWarning, outside the JSON log, on stderr) when a
    // client read slower than a batch of calls answered.
    this.#drained ??= new Promise((resolve) =>
      this.#output.once('drain', () => {
        this.#drained = undefined;
        resolve();
      }),
    );
    return this.#drained;
  }

  /** Holds the answer `id` if a batch waits for it; writes the batch's array once it is complete. True when held. */
  #collect(id: RequestId, answer: JSONRPCMessage | undefined): boolean {
    const at = this.#batches.findIndex((batch) => batch.waiting.has(id));
    if (at === -1) return false;
    const batch = this.#batches[at];
    batch.waiting.delete(id);
    if (answer) batch.answers.push(answer);
    if (batch.waiting.size === 0) {
      this.#batches.splice(at, 1);
      if (batch.answers.length > 0) void this.#write(`[${batch.answers.map((one) => serializeMessage(one)).join(',')}]`);
    }
    return true;
  }

  /**
   * Stops reading while the output waits past the bound. Only once a write has been refused
   * (`writableNeedDrain`), so that a 'drain' is sure to come and resume it.
   */
  #pauseIfFull(): void {
    const output = this.#output as NodeJS.WritableStream & { writableLength?: number; writableNeedDrain?: boolean };
    if (this.#paused || this.#closed || !output.writableNeedDrain || (output.writableLength ?? 0) <= this.#maxWaitingBytes) return;
    this.#paused = true;
    this.#input.pause();
    this.#onpause?.(output.writableLength ?? 0);
    this.#output.once('drain', this.#onDrain);
  }

  #onDrain = () => {
    if (this.#closed) return;
    this.#paused = false;
    const held = this.#held;
    this.#held = undefined;
    // May stop again before the held lines are all taken: the rest stays held.
    if (held) this.#onData(held);
    if (this.#paused) return;
    this.#input.resume();
    if (this.#inputEndWaits) this.#onInputEnd();
  };

  #onInputEnd = () => {
    if (this.#held !== undefined) {
      this.#inputEndWaits = true;
      return;
    }
    if (this.#inputEndTold) return;
    this.#inputEndTold = true;
    this.oninputend?.();
  };

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#input.off('data', this.#onData);
    this.#input.off('error', this.#onError);
    this.#input.off('end', this.#onInputEnd);
    this.#input.off('close', this.#onInputEnd);
    this.#output.off('drain', this.#onDrain);
    this.#held = undefined;
    this.onclose?.();
  }

  #onError = (error: Error) => this.onerror?.(error);

  /** While paused, keeps `rest` (what follows the line just taken) for the drain; true when it did. */
  #holdIfPaused(rest: Buffer): boolean {
    if (!this.#paused) return false;
    if (rest.length > 0) this.#held = this.#held ? Buffer.concat([this.#held, rest]) : rest;
    return true;
  }

  /**
   * Each chunk is scanned once and the pieces of an unfinished line kept apart until its end:
   * appending to one string and searching it from the start made a line read in 64 KiB chunks
   * cost its length squared (a 40 MB writeFile took 14.5 s, 10 MB 1.1 s).
   */
  #onData = (data: Buffer | string) => {
    const chunk = typeof data === 'string' ? Buffer.from(data) : data;
    // A chunk the stream emitted as it was paused: after what is held, in order.
    if (this.#holdIfPaused(chunk)) return;
    // A 0x0A byte is never part of a longer UTF-8 sequence: splitting bytes there is safe.
    let start = 0;
    let at = chunk.indexOf(0x0a);
    if (at < 0) return this.#keep(chunk);
    this.#lineEnds(chunk.subarray(0, at));
    start = at + 1;
    if (this.#holdIfPaused(chunk.subarray(start))) return;
    const last = chunk.lastIndexOf(0x0a);
    // The whole lines after the first, when all are UTF-8 and none can be too long (the usual
    // case): decoded at once and split as text, one Buffer and one check for all of them.
    if (last > start && last - start <= this.#maxLineBytes && isUtf8(chunk.subarray(start, last))) {
      const lines = chunk.toString('utf8', start, last).split('\n');
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i];
        this.#text(line.endsWith('\r') ? line.slice(0, -1) : line);
        // The lines not taken go back to bytes: valid UTF-8, so the same bytes.
        if (this.#paused && this.#holdIfPaused(i + 1 < lines.length ? Buffer.concat([Buffer.from(lines.slice(i + 1).join('\n')), chunk.subarray(last)]) : chunk.subarray(last + 1))) return;
      }
      start = last + 1;
    }
    while ((at = chunk.indexOf(0x0a, start)) >= 0) {
      this.#lineEnds(chunk.subarray(start, at));
      start = at + 1;
      if (this.#holdIfPaused(chunk.subarray(start))) return;
    }
    this.#keep(chunk.subarray(start));
  };

  /** Takes the unfinished line's next piece; past the limit, only the line's tail is kept. */
  #keep(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.#skippedTail !== undefined) {
      this.#skippedTail = (this.#skippedTail + tailText(piece)).slice(-SKIPPED_TAIL_CHARS);
      return;
    }
    this.#pending.push(piece);
    this.#pendingBytes += piece.length;
    if (this.#pendingBytes > this.#maxLineBytes) {
      // Dropped as it arrives, so memory stays bounded; answered when the line ends.
      this.#skippedTail = tailText(Buffer.concat(this.#pending)).slice(-SKIPPED_TAIL_CHARS);
      this.#pending = [];
      this.#pendingBytes = 0;
    }
  }

  /** A line ends with `last`: answered as too long, or handled. */
  #lineEnds(last: Buffer): void {
    if (this.#skippedTail !== undefined) {
      const tail = (this.#skippedTail + tailText(last).replace(/\r$/, '')).slice(-SKIPPED_TAIL_CHARS);
      this.#skippedTail = undefined;
      return this.#tooLong(tail);
    }
    const raw = this.#pending.length === 0 ? last : Buffer.concat([...this.#pending, last]);
    const bytes = raw.length > 0 && raw[raw.length - 1] === 0x0d ? raw.subarray(0, -1) : raw;
    this.#pending = [];
    this.#pendingBytes = 0;
    if (bytes.length > this.#maxLineBytes) return this.#tooLong(tailText(bytes).slice(-SKIPPED_TAIL_CHARS));
    if (!isUtf8(bytes)) return this.#reply(null, -32700, 'Parse error: the line is not valid UTF-8 (JSON-RPC messages are UTF-8)');
    this.#text(bytes.toString('utf8'));
  }

  /** A whole line as text, its line break gone. */
  #text(line: string): void {
    // A byte order mark before the first line (a Windows client's UTF-8 writer) is no JSON: read past it.
    const text = line.charCodeAt(0) === 0xfeff ? line.slice(1) : line;
    if (text.trim() !== '') this.#handle(text);
  }

  #handle(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return this.#reply(null, -32700, 'Parse error: the line is not valid JSON');
    }
    if (!Array.isArray(value)) {
      const message = this.#message(value);
      if (message) this.#deliver(message);
      return;
    }
    if (!batchesAllowed(this.#protocolVersion)) {
      const revision = this.#protocolVersion === undefined ? 'before initialize' : `under protocol revision ${this.#protocolVersion}`;
      return this.#reply(null, -32600, `Invalid Request: JSON-RPC batches are not accepted ${revision} (MCP has them in 2025-03-26 only); send one message per line`);
    }
    if (value.length === 0) return this.#reply(null, -32600, 'Invalid Request: an empty batch');
    // The requests' answers go out together; a bad member is answered in the array too.
    const batch = { waiting: new Set<RequestId>(), answers: [] as JSONRPCMessage[] };
    const messages = value.map((raw) => {
      const message = toJsonRpcMessage(raw);
      if (!message) batch.answers.push(invalid(raw));
      else if ('method' in message && 'id' in message) batch.waiting.add(message.id);
      return message;
    });
    if (batch.waiting.size > 0) this.#batches.push(batch);
    else if (batch.answers.length > 0) void this.#write(`[${batch.answers.map((one) => serializeMessage(one)).join(',')}]`);
    for (const message of messages) if (message) this.#deliver(message);
  }

  /** `value` as a message, or undefined after answering why it is not one. */
  #message(value: unknown): JSONRPCMessage | undefined {
    const message = toJsonRpcMessage(value);
    if (!message) void this.send(invalid(value));
    return message;
  }

  #deliver(message: JSONRPCMessage): void {
    // A cancelled request gets no answer: its batch stops waiting for one.
    if ('method' in message && message.method === 'notifications/cancelled') {
      const requestId = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (requestId !== undefined) this.#collect(requestId, undefined);
    }
    this.onmessage?.(message);
  }

  #tooLong(tail: string): void {
    // Named, since nothing else tells a stdio user that an http.* key sets it (a 5 MB writeFile).
    this.#reply(trailingId(tail), -32600, `Invalid Request: message longer than ${this.#maxLineBytes} bytes (the limit http.maxBodyBytes sets, on stdio too)`);
  }

  #reply(id: string | number | null, code: number, message: string): void {
    void this.send({ jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage);
  }
}

/** The last characters of `bytes` as text, for trailingId: a character cut at its start does not matter there. */
function tailText(bytes: Buffer): string {
  return bytes.subarray(Math.max(0, bytes.length - SKIPPED_TAIL_CHARS * 4)).toString('utf8');
}

/** The -32600 answer to a value that is not a JSON-RPC message: with its id when that is usable. */
function invalid(value: unknown): JSONRPCMessage {
  const refused = paramsRefusal(value);
  if (refused) return { jsonrpc: '2.0', id: refused.id, error: { code: refused.code, message: refused.message } } as JSONRPCMessage;
  const id = (value as { id?: unknown } | null)?.id;
  const usable = typeof id === 'string' || Number.isSafeInteger(id);
  const message = hasUnsafeId(value)
    ? 'Invalid Request: a numeric id must be an integer within ±(2^53 - 1), which JSON parsers keep exact; use a string id'
    : 'Invalid Request: not a JSON-RPC 2.0 message';
  return { jsonrpc: '2.0', id: usable ? (id as RequestId) : null, error: { code: -32600, message } } as unknown as JSONRPCMessage;
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
