import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { preserialized, serializeMessage } from '../../../supervisor/wire';

const tools = () => [
  { name: 'a', description: 'quote " and \\ and \u2028', inputSchema: { type: 'object', properties: { x: { type: 'string' } } } },
  { name: 'b', inputSchema: { type: 'object' } },
];

describe('serializeMessage', () => {
  it('writes a preserialized tool list from its text, with and without other result fields', () => {
    const json = JSON.stringify(tools());
    const list = preserialized(json);
    for (const message of [
      { jsonrpc: '2.0', id: 7, result: { tools: list } },
      { jsonrpc: '2.0', id: 'req-1', result: { tools: list, nextCursor: 'c2', _meta: { note: 'x' } } },
    ] as JSONRPCMessage[]) {
      const text = serializeMessage(message);
      expect(text).toContain(`"tools":${json}`);
      expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify({ ...message, result: { ...(message as { result: object }).result, tools: tools() } })));
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
});

describe('preserialized', () => {
  it('reads as the parsed array to anything but our transports: index, length, methods, spread, JSON.stringify', () => {
    const list = preserialized<{ name: string }>(JSON.stringify(tools()));
    expect(Array.isArray(list)).toBe(true);
    expect(list).toHaveLength(2);
    expect(list[1].name).toBe('b');
    expect(list.map((tool) => tool.name)).toEqual(['a', 'b']);
    expect([...list].map((tool) => tool.name)).toEqual(['a', 'b']);
    expect(JSON.parse(JSON.stringify({ tools: list }))).toEqual({ tools: tools() });
    expect(Object.keys(list)).toEqual(['0', '1']);
  });
});
