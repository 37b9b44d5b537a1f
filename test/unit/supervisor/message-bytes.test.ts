import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { preserialized, serializeMessage, serializeMessageBytes } from '../../../supervisor/preserialized';

const LARGE = 70 * 1024;
const answer = (result: Record<string, unknown>, id: number | string = 7): JSONRPCMessage => ({ jsonrpc: '2.0', id, result } as JSONRPCMessage);

/** What the bytes must be: the message's JSON between its framing, as every transport wrote it. */
const expected = (message: JSONRPCMessage, prefix = '', suffix = '') => Buffer.from(`${prefix}${JSON.stringify(message)}${suffix}`);

describe('serializeMessageBytes', () => {
  it('writes large texts of every content kind byte for byte as JSON.stringify, in their places, with the framing', () => {
    const message = answer({
      content: [
        { type: 'text', text: `${'a'.repeat(LARGE)}é€😀` },
        { type: 'text', text: 'short' },
        { type: 'image', data: 'QUJD'.repeat(LARGE / 4), mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///x', text: `ü${'r'.repeat(LARGE)}` } },
        { type: 'resource', resource: { uri: 'file:///y', blob: 'Zm9v'.repeat(LARGE / 4), mimeType: 'application/octet-stream' } },
      ],
      structuredContent: { text: 'b'.repeat(LARGE) },
      isError: false,
    });
    const bytes = serializeMessageBytes(message, 'data: ', '\n\n');
    expect(bytes.equals(expected(message, 'data: ', '\n\n'))).toBe(true);
  });

  it('never makes a JSON text of the whole answer: its large texts go into the bytes as they are', () => {
    const message = answer({ content: [{ type: 'text', text: 'a'.repeat(4 * LARGE) }, { type: 'image', data: 'QUJD'.repeat(LARGE), mimeType: 'image/png' }] });
    const stringify = JSON.stringify;
    let longest = 0;
    const spy = jest.spyOn(JSON, 'stringify').mockImplementation((...args: Parameters<typeof JSON.stringify>) => {
      const text = stringify(...args);
      longest = Math.max(longest, text?.length ?? 0);
      return text;
    });
    let bytes: Buffer;
    try {
      bytes = serializeMessageBytes(message, '', '\n');
    } finally {
      spy.mockRestore();
    }
    expect(longest).toBeLessThan(LARGE);
    expect(bytes.equals(expected(message, '', '\n'))).toBe(true);
  });

  it('leaves to JSON.stringify the large texts it must escape: quotes, backslashes, control characters, a lone surrogate', () => {
    for (const odd of ['"', '\\', '\n', '\u0000', '\ud800']) {
      const message = answer({ content: [{ type: 'text', text: `${'x'.repeat(LARGE)}${odd}y` }, { type: 'text', text: 'z'.repeat(LARGE) }] });
      const bytes = serializeMessageBytes(message, '', '\n');
      expect(bytes.equals(expected(message, '', '\n'))).toBe(true);
      expect(JSON.parse(bytes.toString('utf8'))).toEqual(JSON.parse(JSON.stringify(message)));
    }
  });

  it('keeps a text that looks like another one in place, and leaves the message it was given as it was', () => {
    const text = 'q'.repeat(LARGE);
    const content = [{ type: 'text', text }, { type: 'text', text }, { type: 'text', text: '\u0000mcpvisor-' }];
    const message = answer({ content, _meta: { n: 1 } }, 'call-1');
    expect(serializeMessageBytes(message).equals(expected(message))).toBe(true);
    expect(content[0].text).toBe(text);
    expect((message as unknown as { result: { content: unknown } }).result.content).toBe(content);
  });

  it('writes messages without large texts, errors, notifications and a preserialized tool list as before', () => {
    const messages: JSONRPCMessage[] = [
      answer({ content: [{ type: 'text', text: 'hello "there"' }] }),
      { jsonrpc: '2.0', id: 3, error: { code: -32000, message: 'x'.repeat(LARGE) } } as JSONRPCMessage,
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } } as JSONRPCMessage,
      answer({ content: 'not an array' }),
      // A toJSON of the item's prototype (a thread's answer may hold such an object), which a copy would lose.
      answer({ content: [Object.assign(Object.create({ text: 'p'.repeat(LARGE) }), { type: 'text' }), Object.defineProperty({ type: 'text' }, 'text', { value: 'h'.repeat(LARGE) })] }),
      answer({ content: [Object.assign(Object.create({ toJSON: () => ({ type: 'text', text: 'as toJSON says' }) }), { type: 'text', text: 'w'.repeat(LARGE) })] }),
    ];
    for (const message of messages) expect(serializeMessageBytes(message, '[', ']').equals(expected(message, '[', ']'))).toBe(true);
    const tools = answer({ tools: preserialized(JSON.stringify([{ name: 'a', inputSchema: { type: 'object' } }])) });
    expect(serializeMessageBytes(tools).toString('utf8')).toBe(serializeMessage(tools));
  });
});
