import { McpvisorError } from './errors';
import type { ToolResult } from './tool';

/**
 * Where `value` cannot be written as JSON, as a path (`structuredContent.n is a BigInt`), or
 * undefined. JSON.stringify throws on a BigInt and on an object that contains itself, both of
 * which a thread's answer carries (structured clone copies them); thrown on the supervisor's
 * way out, the call was never answered and its client waited for its own timeout. Objects with
 * a `toJSON` (Date, Buffer) are written by it and not looked into.
 */
export function unserialisableAt(value: unknown): string | undefined {
  const ancestors = new Set<object>();
  const path: Array<string | number> = [];
  const visit = (node: unknown): string | undefined => {
    if (typeof node === 'bigint') return 'is a BigInt';
    if (node === null || typeof node !== 'object' || typeof (node as { toJSON?: unknown }).toJSON === 'function') return undefined;
    if (ancestors.has(node)) return 'is an object that contains itself';
    ancestors.add(node);
    const keys: Array<string | number> = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
    for (const key of keys) {
      const problem = visit((node as Record<string | number, unknown>)[key]);
      if (problem) {
        path.unshift(key);
        return problem;
      }
    }
    ancestors.delete(node);
    return undefined;
  };
  const problem = visit(value);
  return problem && `${path.length > 0 ? path.join('.') : 'the result'} ${problem}`;
}

/**
 * A thread's result as JSON will carry it, for its trip to the supervisor by structured clone:
 * that clone carries a BigInt or a cycle, which no JSON answer can then hold (the call was never
 * answered), and throws on a function, which ended the thread with its other calls inside
 * piscina. Functions and undefined fields are dropped, as a process worker's JSON IPC drops
 * them. Whether the rest is a tool result MCP clients accept is the supervisor's check
 * (supervisor/result-check.ts). Throws McpvisorError INTERNAL naming the tool and where.
 */
export function jsonResult(tool: string, value: unknown): ToolResult {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new McpvisorError('INTERNAL', `the tool ${tool} returned a result that cannot be written as JSON: ${unserialisableAt(value) ?? (error as Error).message}`);
  }
  return (json === undefined ? undefined : JSON.parse(json)) as ToolResult;
}
