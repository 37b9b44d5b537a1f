import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { errorResult } from './results';
import type { ToolDescriptor, ToolResult } from './tool';

export type { Transport };

/** What `serveTools` needs of an in-process tool service. */
export interface ToolSource {
  name: string;
  version: string;
  listTools(): ToolDescriptor[];
  callTool(name: string, args: Record<string, unknown>, options: { signal: AbortSignal }): Promise<ToolResult>;
}

/**
 * Serves `source`'s tools on one SDK transport (stdio, Streamable HTTP, in-memory) with the SDK's
 * own Server, in this process: for library users who run a service without the supervisor. A
 * thrown error is an `isError` result with its code, an unknown tool a JSON-RPC -32602, as the
 * supervisor answers them. Resolves once connected; the returned function closes it.
 */
export async function serveTools(source: ToolSource, transport: Transport): Promise<() => Promise<void>> {
  const server = new Server({ name: source.name, version: source.version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: source.listTools() }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    if (!source.listTools().some((tool) => tool.name === name)) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    try {
      return (await source.callTool(name, request.params.arguments ?? {}, { signal: extra.signal })) as Record<string, unknown> & ToolResult;
    } catch (error) {
      return errorResult(error) as Record<string, unknown> & ToolResult;
    }
  });
  await server.connect(transport);
  return () => server.close();
}
