/** What a worker tells the supervisor about one tool it serves (the MCP `Tool` shape, JSON only). */
export interface ToolDescriptor {
  name: string;
  title?: string;
  description: string;
  /** JSON Schema of the arguments; always `type: "object"`. */
  inputSchema: JsonObjectSchema;
  /** JSON Schema of `structuredContent`, when the tool returns it. */
  outputSchema?: JsonObjectSchema;
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
}

export interface JsonObjectSchema {
  type: 'object';
  properties?: Record<string, unknown>;
  required?: string[];
  [keyword: string]: unknown;
}

/** One call routed to a pool. `tool` is the worker's own name for it (no namespace prefix). */
export interface ToolCall {
  tool: string;
  arguments: Record<string, unknown>;
}

export type ContentItem =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'resource'; resource: { uri: string; mimeType?: string; text?: string; blob?: string } };

/** The MCP `CallToolResult` shape. Tool failures are results with `isError: true`. */
export interface ToolResult {
  content: ContentItem[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** A text-only result; the common case for workers. */
export function textResult(text: string, structuredContent?: Record<string, unknown>): ToolResult {
  return structuredContent === undefined
    ? { content: [{ type: 'text', text }] }
    : { content: [{ type: 'text', text }], structuredContent };
}
