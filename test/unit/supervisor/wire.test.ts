import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { preserialized, serializeMessage } from '../../../supervisor/preserialized';
import { paramsRefusal, toJsonRpcMessage } from '../../../supervisor/wire';

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

describe('toJsonRpcMessage', () => {
  // Each case's verdict must be the SDK schema's: the shortcut may only accept what zod accepts unchanged.
  const cases: unknown[] = [
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'a', arguments: { x: 1 } } },
    { jsonrpc: '2.0', id: 'r-1', method: 'tools/list' },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3, reason: 'stop' } },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'a', _meta: { progressToken: 'p' } } },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'a', _meta: { progressToken: 7 } } },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'a', _meta: {} } },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'a', _meta: { progressToken: 1.5 } } },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'a', _meta: { progressToken: null } } },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'a', _meta: { progressToken: { no: 1 } } } },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'a', _meta: { progressToken: 'p', note: 'x' } } },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'a', _meta: { 'io.modelcontextprotocol/related-task': { taskId: 7 } } } },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'a', _meta: [] } },
    { jsonrpc: '2.0', id: 1.5, method: 'tools/list' },
    { jsonrpc: '2.0', id: null, method: 'tools/list' },
    { jsonrpc: '2.0', id: 2 ** 53, method: 'tools/list' },
    { jsonrpc: '2.0', id: true, method: 'tools/list' },
    { jsonrpc: '1.0', id: 1, method: 'tools/list' },
    { jsonrpc: '2.0', id: 1, method: 7 },
    { jsonrpc: '2.0', id: 1, method: 'tools/list', extra: 1 },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: [1, 2] },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: 'x' },
    { jsonrpc: '2.0', id: 1, result: {} },
    { jsonrpc: '2.0', id: 1, error: { code: -1, message: 'no' } },
    JSON.parse('{"jsonrpc":"2.0","id":1,"method":"tools/list","__proto__":{"x":1}}'),
    [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }],
    null,
    'text',
    {},
  ];

  it.each(cases.map((value) => [JSON.stringify(value), value]))('judges %s as the SDK schema does', (_label, value) => {
    const parsed = JSONRPCMessageSchema.safeParse(value);
    const ours = toJsonRpcMessage(value);
    expect(ours !== undefined).toBe(parsed.success);
    if (parsed.success) expect(ours).toEqual(parsed.data);
  });

  it('takes params: null as no params, where the SDK schema refuses the message (a decision, wire.ts)', () => {
    expect(JSONRPCMessageSchema.safeParse({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: null }).success).toBe(false);
    expect(toJsonRpcMessage({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: null })).toEqual({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(toJsonRpcMessage({ jsonrpc: '2.0', method: 'notifications/initialized', params: null })).toEqual({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // Still no message: a null id, or params of the wrong kind.
    expect(toJsonRpcMessage({ jsonrpc: '2.0', id: null, method: 'tools/list', params: null })).toBeUndefined();
    expect(toJsonRpcMessage({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: 'x' })).toBeUndefined();
  });

  it('takes params._meta: null as no _meta, likewise', () => {
    const message = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'a', _meta: null } };
    expect(JSONRPCMessageSchema.safeParse(message).success).toBe(false);
    expect(toJsonRpcMessage(message)).toEqual({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'a' } });
  });
});

describe('paramsRefusal', () => {
  it.each([
    [{ progressToken: 1.5 }, 'Invalid params: _meta.progressToken: must be a string or an integer'],
    [{ progressToken: { no: 1 } }, 'Invalid params: _meta.progressToken: must be a string or an integer'],
    [[], 'Invalid params: _meta: Invalid input: expected object, received array'],
    [{ 'io.modelcontextprotocol/related-task': { taskId: 7 } }, 'Invalid params: _meta.io.modelcontextprotocol/related-task.taskId: Invalid input: expected string, received number'],
  ])('answers a request whose _meta is %j with -32602 under its id', (meta, message) => {
    expect(paramsRefusal({ jsonrpc: '2.0', id: 'r', method: 'tools/call', params: { name: 'a', _meta: meta } })).toEqual({ id: 'r', code: -32602, message });
  });

  it('answers positional params with -32602: JSON-RPC has them, MCP does not', () => {
    expect(paramsRefusal({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: [] })).toEqual({ id: 1, code: -32602, message: 'Invalid params: params must be an object (MCP has no positional params)' });
  });

  it('leaves what is no request to the invalid-request answer', () => {
    const meta = { _meta: { progressToken: 1.5 } };
    for (const value of [
      { jsonrpc: '2.0', method: 'notifications/progress', params: meta },
      { jsonrpc: '2.0', id: null, method: 'ping', params: meta },
      { jsonrpc: '2.0', id: 1.5, method: 'ping', params: meta },
      { jsonrpc: '1.0', id: 1, method: 'ping', params: meta },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: meta, extra: 1 },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: 'x' },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: {} },
      null,
    ]) {
      expect(paramsRefusal(value)).toBeUndefined();
    }
  });
});
