import type { JsonObjectSchema } from '../../protocol/tool';
import { packageVersion } from '../../protocol/version';
import type { ArgumentTarget, BodyInfo } from './input-schema';
import type { LoadedSpec } from './load-spec';
import type { JsonObject } from './refs';
import { planSpec } from './request';
import { buildEndpointTools, type EndpointTool } from './tools-manager';

/** Bump when CompiledApi's shape or the meaning of a field changes. */
export const COMPILED_FORMAT = 1;

/** One endpoint tool as stored: EndpointTool without the description's operation, plain JSON. */
export interface CompiledTool {
  name: string;
  description: string;
  summary?: string;
  inputSchema: JsonObjectSchema;
  tags?: string[];
  method: string;
  resourceName?: string;
  toolId: string;
  path: string;
  targets: Array<[string, ArgumentTarget]>;
  body?: BodyInfo;
  /** request.ts planSpec. */
  plan: JsonObject;
}

export interface CompiledWarning {
  message: string;
  fields?: Record<string, unknown>;
}

/**
 * What an api worker needs of a description to list and call its tools, before filters: built
 * once from the parsed description (compileApi), stored by spec-cache.ts, loaded instead of the
 * description on the next start. Warnings are replayed on load, so logs match a cold start.
 */
export interface CompiledApi {
  format: number;
  packageVersion: string;
  openapiVersion: string;
  isSwagger2: boolean;
  paths: number;
  operations: number;
  tools: CompiledTool[];
  warnings: CompiledWarning[];
}

/**
 * Builds every endpoint tool of `spec` and its request plan. `maxNameLength` is 64 less the
 * namespace prefix. Throws what buildEndpointTools throws (BAD_INPUT for names too long with
 * disableAbbreviation). The result holds no reference into `spec`.
 */
export function compileApi(spec: LoadedSpec, options: { disableAbbreviation: boolean; maxNameLength: number }): CompiledApi {
  const warnings: CompiledWarning[] = [];
  const built = buildEndpointTools(spec, options.disableAbbreviation, options.maxNameLength, (message, fields) => warnings.push(fields === undefined ? { message } : { message, fields }));
  const tools = built.map((tool): CompiledTool => ({
    name: tool.name,
    description: tool.description,
    ...(tool.summary !== undefined ? { summary: tool.summary } : {}),
    inputSchema: tool.inputSchema,
    tags: tool.tags,
    method: tool.method,
    ...(tool.resourceName !== undefined ? { resourceName: tool.resourceName } : {}),
    toolId: tool.toolId,
    path: tool.path,
    targets: [...tool.targets],
    ...(tool.body !== undefined ? { body: tool.body } : {}),
    plan: planSpec(tool.entry!, spec),
  }));
  return {
    format: COMPILED_FORMAT,
    packageVersion: packageVersion(),
    openapiVersion: spec.version,
    isSwagger2: spec.isSwagger2,
    paths: Object.keys(spec.root.paths as JsonObject).length,
    operations: tools.length,
    tools,
    warnings,
  };
}

/** The EndpointTool a ToolsManager serves for a compiled tool. */
export function fromCompiledTool(tool: CompiledTool): EndpointTool {
  const { targets, plan, ...rest } = tool;
  return { ...rest, targets: new Map(targets), planSpec: plan };
}

/**
 * True when `value` has CompiledApi's shape, format and this package's version. A light check
 * (tools are not validated in depth): artifacts are written by us into a 0700 directory.
 */
export function isCurrentCompiledApi(value: unknown): value is CompiledApi {
  const api = value as Partial<CompiledApi> | null;
  if (api === null || typeof api !== 'object' || api.format !== COMPILED_FORMAT || api.packageVersion !== packageVersion()) return false;
  if (typeof api.openapiVersion !== 'string' || typeof api.paths !== 'number' || !Array.isArray(api.tools) || !Array.isArray(api.warnings)) return false;
  if (!api.warnings.every((w) => w !== null && typeof w === 'object' && typeof w.message === 'string')) return false;
  return api.tools.every(
    (t) => t !== null && typeof t === 'object' && typeof t.name === 'string' && typeof t.toolId === 'string' && typeof t.path === 'string' && typeof t.method === 'string' && typeof t.inputSchema === 'object' && Array.isArray(t.targets) && typeof t.plan === 'object' && t.plan !== null,
  );
}
