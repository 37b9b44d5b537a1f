import { loadSpec } from '../../workers/openapi/load-spec';
import { buildUpstreamRequest, requestPlan, type BuiltRequest } from '../../workers/openapi/request';
import { ToolsManager } from '../../workers/openapi/tools-manager';

export const BASE = 'http://127.0.0.1:8080/api/v1';

export type BuildCall = (toolName: string, args: Record<string, unknown>, baseUrl?: string) => BuiltRequest;

/**
 * The requests the worker would send for an inline description: its tools made as at a start,
 * each call built by buildUpstreamRequest (the worker's code, nothing replaced).
 */
export async function requestBuilder(spec: Record<string, unknown>): Promise<BuildCall> {
  const loaded = await loadSpec({ specInputMethod: 'inline', openApiSpec: JSON.stringify(spec) });
  const manager = new ToolsManager({}, loaded);
  const warnings: string[] = [];
  manager.generateTools(false, { warn: (message) => warnings.push(message) });
  return (toolName, args, baseUrl = BASE) => {
    const tool = manager.getToolById(toolName, true);
    if (!tool) throw new Error(`no tool ${toolName}; warnings: ${warnings.join('; ')}`);
    return buildUpstreamRequest(requestPlan(tool.entry!, loaded, tool.targets, tool.body), args, baseUrl);
  };
}

/** A minimal OpenAPI 3.0 description of the given paths. */
export function oas3(paths: Record<string, unknown>, openapi = '3.0.3'): Record<string, unknown> {
  return { openapi, info: { title: 't', version: '1' }, paths };
}

export const OK = { 200: { description: 'ok' } };
