import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { serializeMessage, serializeOnce } from '../../../supervisor/wire';

const tools = () => [
  { name: 'a', description: 'quote " and \\ and \u2028', inputSchema: { type: 'object', properties: { x: { type: 'string' } } } },
  { name: 'b', inputSchema: { type: 'object' } },
];

describe('serializeMessage', () => {
  it('writes the same JSON value as JSON.stringify for a kept tool list, with and without other result fields', () => {
    const list = tools();
    serializeOnce(list);
    for (const message of [
      { jsonrpc: '2.0', id: 7, result: { tools: list } },
      { jsonrpc: '2.0', id: 'req-1', result: { tools: list, nextCursor: 'c2', _meta: { note: 'x' } } },
    ] as JSONRPCMessage[]) {
      const text = serializeMessage(message);
      expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(message)));
      // Twice: the second write comes from the kept text.
      expect(serializeMessage(message)).toBe(text);
    }
  });

  it('serialises every other message as JSON.stringify does', () => {
    const messages = [
      { jsonrpc: '2.0', id: 1, result: { tools: tools() } },
      { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'hi' }] } },
      { jsonrpc: '2.0', id: 3, error: { code: -32602, message: 'bad' } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } },
    ] as JSONRPCMessage[];
    for (const message of messages) expect(serializeMessage(message)).toBe(JSON.stringify(message));
  });

  it('keeps the text of a list, so the list must not change after it is marked (the catalogue makes a new one)', () => {
    const list = tools();
    serializeOnce(list);
    const first = serializeMessage({ jsonrpc: '2.0', id: 1, result: { tools: list } } as JSONRPCMessage);
    const fresh = [...list, { name: 'c', inputSchema: { type: 'object' } }];
    serializeOnce(fresh);
    const second = serializeMessage({ jsonrpc: '2.0', id: 1, result: { tools: fresh } } as JSONRPCMessage);
    expect(JSON.parse(first).result.tools).toHaveLength(2);
    expect(JSON.parse(second).result.tools).toHaveLength(3);
  });
});
