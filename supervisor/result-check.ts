/**
 * What is wrong with a worker's tool result by MCP's `CallToolResult`, as the SDK client parses
 * it, or undefined. Why: results pass to clients as the worker built them, and a custom toolset's
 * handler that returned a string left the SDK client waiting for its 60 s timeout (it drops an
 * answer it cannot parse), one that returned nothing got -32603 "Cannot read properties of
 * undefined", and a content item of another shape a zod dump. Checked by hand and shallowly
 * (types of the fields, not the text): it runs on every call.
 */
export function resultProblem(result: unknown): string | undefined {
  if (!isObject(result)) return `a result must be an object with 'content', not ${kind(result)}`;
  const { content, structuredContent, isError, _meta: meta } = result as Record<string, unknown>;
  if (content !== undefined) {
    if (!Array.isArray(content)) return `'content' must be an array of content items, not ${kind(content)}`;
    for (let i = 0; i < content.length; i++) {
      const problem = itemProblem(content[i]);
      if (problem) return `content[${i}]: ${problem}`;
    }
  }
  if (structuredContent !== undefined && !isObject(structuredContent)) return `'structuredContent' must be an object, not ${kind(structuredContent)}`;
  if (isError !== undefined && typeof isError !== 'boolean') return `'isError' must be a boolean, not ${kind(isError)}`;
  if (meta !== undefined && !isObject(meta)) return `'_meta' must be an object, not ${kind(meta)}`;
  return undefined;
}

/** The string fields each content type needs (MCP 2025-11-25 `ContentBlock`). */
const ITEM_FIELDS: Record<string, string[]> = {
  text: ['text'],
  image: ['data', 'mimeType'],
  audio: ['data', 'mimeType'],
  resource_link: ['uri', 'name'],
};

function itemProblem(item: unknown): string | undefined {
  if (!isObject(item)) return `a content item must be an object, not ${kind(item)}`;
  const type = (item as { type?: unknown }).type;
  if (type === 'resource') {
    const resource = (item as { resource?: unknown }).resource as Record<string, unknown> | undefined;
    if (!isObject(resource) || typeof resource!.uri !== 'string') return "a resource item needs 'resource' with a string 'uri'";
    if (typeof resource!.text !== 'string' && typeof resource!.blob !== 'string') return "a resource item's 'resource' needs a string 'text' or 'blob'";
    return undefined;
  }
  const fields = typeof type === 'string' ? ITEM_FIELDS[type] : undefined;
  if (!fields || !Object.hasOwn(ITEM_FIELDS, type as string)) return `'type' must be one of text, image, audio, resource_link, resource (it is ${kind(type)})`;
  const article = /^[aeiou]/.test(type as string) ? 'an' : 'a';
  for (const field of fields) if (typeof (item as Record<string, unknown>)[field] !== 'string') return `${article} ${type} item needs a string '${field}'`;
  return undefined;
}

function kind(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null || Array.isArray(value)) return value === null ? 'null' : 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function isObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
