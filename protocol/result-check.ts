import { McpvisorError } from './errors';
import { unserialisableAt } from './json-safe';
import type { ToolResult } from './tool';

/**
 * A tool's result as the client will get it: JSON, and the MCP `CallToolResult` shape (an object
 * whose `content` is an array of items with a string `type`, a text item with a string `text`).
 * Structured clone (a thread's answer) carries a BigInt or a cycle to the supervisor, where no
 * JSON can be written of it and the call was never answered, and throws on a function inside
 * piscina, which ended the thread with its other calls; a number or undefined became a protocol
 * error naming our code. Functions and undefined fields are dropped, as JSON IPC drops them.
 * Throws McpvisorError INTERNAL naming the tool and what it returned.
 */
export function jsonResult(tool: string, value: unknown): ToolResult {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new McpvisorError('INTERNAL', `the tool ${tool} returned a result that cannot be written as JSON: ${unserialisableAt(value) ?? (error as Error).message}`);
  }
  const result: unknown = json === undefined ? value : JSON.parse(json);
  checkResultShape(tool, result);
  return result as ToolResult;
}

/** Throws McpvisorError INTERNAL when `value` is not the MCP tool result shape (see jsonResult). */
export function checkResultShape(tool: string, value: unknown): asserts value is ToolResult {
  const wrong = shapeProblem(value);
  if (wrong) throw new McpvisorError('INTERNAL', `the tool ${tool} returned ${wrong}, not a tool result ({ content: [{ type: 'text', text }] })`);
}

function shapeProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return Array.isArray(value) ? 'an array' : `${value === null ? 'null' : typeof value}`;
  const content = (value as { content?: unknown }).content;
  if (!Array.isArray(content)) return 'an object without a content array';
  const bad = content.findIndex((item: { type?: unknown; text?: unknown } | null) =>
    item === null || typeof item !== 'object' || typeof item.type !== 'string' || (item.type === 'text' && typeof item.text !== 'string'));
  return bad === -1 ? undefined : `content[${bad}] that is not a content item with a string type (and text)`;
}
