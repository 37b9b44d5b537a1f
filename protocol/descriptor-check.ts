/**
 * What is wrong with a tool descriptor a worker announced as an object (a custom toolset's, the
 * shell's, the web's), by the MCP `Tool` schema as clients parse tools/list, or undefined. Why:
 * the SDK client parses the whole list and throws on one bad tool, so a custom toolset with one
 * `inputSchema` lacking `type: "object"` left Claude Desktop and every SDK client with no tools at
 * all and a zod dump naming `tools[1].inputSchema.type`. Checked by hand, not with the SDK's zod
 * schema: workers load this module, and zod would cost each of them its load time.
 * Descriptors announced as text (the api worker's, built by our own code) are not parsed here.
 */
export function descriptorProblem(tool: unknown): string | undefined {
  if (!isObject(tool)) return 'the tool is not an object';
  const { name, title, description, inputSchema, outputSchema, annotations, execution, icons, _meta: meta } = tool as Record<string, unknown>;
  if (typeof name !== 'string' || name === '') return "'name' must be a non-empty string";
  if (title !== undefined && typeof title !== 'string') return "'title' must be a string";
  if (description !== undefined && typeof description !== 'string') return "'description' must be a string";
  const input = objectSchemaProblem('inputSchema', inputSchema);
  if (input) return input;
  if (outputSchema !== undefined) {
    const output = objectSchemaProblem('outputSchema', outputSchema);
    if (output) return output;
  }
  if (annotations !== undefined) {
    if (!isObject(annotations)) return "'annotations' must be an object";
    for (const [key, value] of Object.entries(annotations as object)) {
      const wanted = ANNOTATION_TYPES.get(key);
      if (wanted && typeof value !== wanted && value !== undefined) return `'annotations.${key}' must be a ${wanted}`;
    }
  }
  if (execution !== undefined) {
    const support = isObject(execution) ? (execution as { taskSupport?: unknown }).taskSupport : null;
    if (support !== undefined && !['forbidden', 'optional', 'required'].includes(support as string)) return "'execution.taskSupport' must be 'forbidden', 'optional' or 'required'";
  }
  if (icons !== undefined && !(Array.isArray(icons) && icons.every((icon) => isObject(icon) && typeof (icon as { src?: unknown }).src === 'string'))) {
    return "'icons' must be an array of objects with a string 'src'";
  }
  if (meta !== undefined && !isObject(meta)) return "'_meta' must be an object";
  return undefined;
}

/** The annotations MCP defines, by type; clients drop others. */
const ANNOTATION_TYPES = new Map([
  ['title', 'string'],
  ['readOnlyHint', 'boolean'],
  ['destructiveHint', 'boolean'],
  ['idempotentHint', 'boolean'],
  ['openWorldHint', 'boolean'],
]);

/** MCP has a tool's input and output schemas be JSON Schema objects of `type: "object"`. */
function objectSchemaProblem(key: string, schema: unknown): string | undefined {
  if (!isObject(schema)) return `'${key}' must be a JSON Schema object`;
  const { type, properties, required } = schema as Record<string, unknown>;
  if (type !== 'object') return `'${key}.type' must be "object" (it is ${JSON.stringify(type) ?? 'missing'})`;
  if (properties !== undefined) {
    if (!isObject(properties)) return `'${key}.properties' must be an object`;
    for (const [property, value] of Object.entries(properties as object)) {
      // A boolean schema (`true`) is JSON Schema, but the SDK client's Tool schema takes objects only.
      if (value === null || typeof value !== 'object') return `'${key}.properties.${property}' must be a schema object (write {} for any value)`;
    }
  }
  if (required !== undefined && !(Array.isArray(required) && required.every((item) => typeof item === 'string'))) return `'${key}.required' must be an array of strings`;
  return undefined;
}

function isObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
