import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { LineStdioTransport } from '../../../supervisor/stdio-transport';

/** A transport on in-memory streams: what it received, and the lines it wrote. */
async function harness(maxLineBytes: number) {
  const input = new PassThrough();
  const output = new PassThrough();
  const transport = new LineStdioTransport({ input, output, maxLineBytes });
  const received: JSONRPCMessage[] = [];
  transport.onmessage = (message) => received.push(message);
  await transport.start();
  let written = '';
  output.setEncoding('utf8');
  output.on('data', (chunk: string) => (written += chunk));
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { input, received, settle, answers: () => written.split('\n').filter(Boolean).map((line) => JSON.parse(line)) };
}

const call = (id: number | string, text: string) => JSON.stringify({ method: 'tools/call', params: { name: 't', arguments: { text } }, jsonrpc: '2.0', id });

describe('LineStdioTransport', () => {
  it('answers an over-long line -32600 with the id at its end, and reads the next line', async () => {
    const h = await harness(1000);
    // Written in pieces, as a pipe delivers it.
    const long = call(42, 'x'.repeat(5000));
    for (let at = 0; at < long.length; at += 700) h.input.write(long.slice(at, at + 700));
    h.input.write(`\n${call('next', 'short')}\n`);
    await h.settle();
    expect(h.answers()).toEqual([{ jsonrpc: '2.0', id: 42, error: { code: -32600, message: 'Invalid Request: message longer than 1000 bytes (the limit http.maxBodyBytes sets, on stdio too)' } }]);
    expect(h.received).toEqual([JSON.parse(call('next', 'short'))]);
  });

  it('answers with id null when the over-long line does not end with a top-level id', async () => {
    const h = await harness(100);
    h.input.write(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"text":"${'y'.repeat(300)}","id":9}}}\n`);
    h.input.write(`{"jsonrpc":"2.0","method":"x","params":{"text":"${'z'.repeat(300)}\\"id\\":5}"}}\n`);
    await h.settle();
    expect(h.answers().map((answer) => answer.id)).toEqual([null, null]);
  });

  it('answers text that is not JSON -32700 and JSON that is not JSON-RPC -32600 with its id', async () => {
    const h = await harness(1000);
    h.input.write('not json\n{"id":3,"hello":true}\n');
    await h.settle();
    expect(h.answers()).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the line is not valid JSON' } },
      { jsonrpc: '2.0', id: 3, error: { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message' } },
    ]);
  });

  it('counts a line in UTF-8 bytes across pieces, without its CRLF: at the limit it is read, one byte over it is refused', async () => {
    const h = await harness(1000);
    const fits = call(1, 'é'.repeat(500));
    const text = 'é'.repeat(500 - (Buffer.byteLength(fits) - 1000) / 2);
    const exact = call(1, text);
    expect(Buffer.byteLength(exact)).toBe(1000);
    const over = call(2, `${text}x`);
    // Pieces that split the CR from its LF, and lines that end inside a piece.
    const stream = `${exact}\r\n${over}\r\n${call(3, 'after')}\n`;
    for (let at = 0; at < stream.length; at += 333) h.input.write(stream.slice(at, at + 333));
    await h.settle();
    expect(h.received).toEqual([JSON.parse(exact), JSON.parse(call(3, 'after'))]);
    expect(h.answers()).toEqual([{ jsonrpc: '2.0', id: 2, error: { code: -32600, message: expect.stringContaining('longer than 1000 bytes') } }]);
  });

  it('answers a line that is not UTF-8 -32700 saying so, instead of reading its bytes as U+FFFD, and reads the next line', async () => {
    const h = await harness(1000);
    const [head, tail] = call(4, 'caf\u0000').split('\\u0000');
    h.input.write(Buffer.concat([Buffer.from(head), Buffer.from([0xe9]), Buffer.from(`${tail}\n`)]));
    h.input.write(`${call(5, 'fine')}\n`);
    // Between good lines of one piece, with a byte order mark before one of them.
    h.input.write(Buffer.concat([Buffer.from(`${call(8, 'a')}\n`), Buffer.from(head), Buffer.from([0xff]), Buffer.from(`${tail}\n\uFEFF${call(9, 'b')}\r\n`)]));
    await h.settle();
    const notUtf8 = { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the line is not valid UTF-8 (JSON-RPC messages are UTF-8)' } };
    expect(h.answers()).toEqual([notUtf8, notUtf8]);
    expect(h.received).toEqual([JSON.parse(call(5, 'fine')), JSON.parse(call(8, 'a')), JSON.parse(call(9, 'b'))]);
  });

  it('reads past a byte order mark before a line, and keeps a character whose bytes come in two pieces', async () => {
    const h = await harness(1000);
    h.input.write(`\uFEFF${call(6, 'bom')}\n`);
    const euro = Buffer.from(`${call(7, '€ and 😀')}\n`);
    const at = euro.indexOf(Buffer.from('😀')) + 2;
    h.input.write(euro.subarray(0, at));
    h.input.write(euro.subarray(at));
    await h.settle();
    expect(h.answers()).toEqual([]);
    expect(h.received).toEqual([JSON.parse(call(6, 'bom')), JSON.parse(call(7, '€ and 😀'))]);
  });

  it('writes a large answer as one chunk of bytes, newline included, with the text of its JSON line', async () => {
    const output = new PassThrough();
    const chunks: Array<string | Buffer> = [];
    const write = output.write.bind(output);
    output.write = ((chunk: string | Buffer, ...rest: never[]) => (chunks.push(chunk), write(chunk, ...rest))) as typeof output.write;
    output.resume();
    const transport = new LineStdioTransport({ input: new PassThrough(), output });
    const message = { jsonrpc: '2.0', id: 4, result: { content: [{ type: 'text', text: `${'é'.repeat(100_000)}.` }] } } as JSONRPCMessage;
    await transport.send(message);
    expect(chunks).toHaveLength(1);
    // A Buffer the stream keeps as it is: a string was joined to its newline, then copied again by the stream.
    expect(Buffer.isBuffer(chunks[0])).toBe(true);
    expect(chunks[0].toString()).toBe(`${JSON.stringify(message)}\n`);
  });
});

describe('LineStdioTransport backpressure', () => {
  it('takes no further line while its output waits past maxWaitingBytes, holds the rest of the chunk, and takes it in order at each drain, its end last', async () => {
    const input = new PassThrough();
    const output = new PassThrough({ highWaterMark: 16 });
    const transport = new LineStdioTransport({ input, output, maxWaitingBytes: 100 });
    const received: Array<string | number> = [];
    let ended = 0;
    // Each message answered at once, from the second on with 300 bytes: past the bound after each.
    transport.onmessage = (message) => {
      const id = (message as { id: number }).id;
      received.push(id);
      void transport.send({ jsonrpc: '2.0', id, result: { text: 'a'.repeat(id === 1 ? 1 : 300) } } as unknown as JSONRPCMessage);
    };
    transport.oninputend = () => ended++;
    await transport.start();
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    // One chunk of five lines (those after the first taken together as text), the last cut in two:
    // it stops after the second, in the middle of the text.
    const lines = [1, 2, 3, 4, 5].map((id) => call(id, `é${id}`));
    input.write(`${lines.join('\n').slice(0, -10)}`);
    input.write(`${lines[4].slice(-10)}\n`);
    input.end();
    await settle();
    expect(received).toEqual([1, 2]);
    expect(transport.paused).toBe(true);
    expect(ended).toBe(0);
    let written = '';
    output.setEncoding('utf8');
    output.on('data', (chunk: string) => (written += chunk));
    for (let turn = 0; turn < 20 && ended === 0; turn++) await settle();
    expect(received).toEqual([1, 2, 3, 4, 5]);
    expect(written.split('\n').filter(Boolean).map((line) => JSON.parse(line).id)).toEqual([1, 2, 3, 4, 5]);
    expect(ended).toBe(1);
    expect(transport.paused).toBe(false);
  });
});
