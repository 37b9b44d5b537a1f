import path from 'node:path';
import { loadSpec } from '../../workers/openapi/load-spec';
import { buildUpstreamRequest, requestPlan, type BuiltRequest } from '../../workers/openapi/request';
import { ApiToolService } from '../../workers/openapi/service';
import { ToolsManager } from '../../workers/openapi/tools-manager';
import { startUpstream, type Upstream } from '../fixtures/openapi/upstream';

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

/**
 * An ApiToolService of the fixture `test/fixtures/openapi/<fixture>` calling a recording upstream
 * (`<upstream>/v1<query>`), set up and torn down around the calling file's tests. `sent` calls a
 * tool, expects no error, and gives the URL the upstream got.
 */
export function fixtureService(fixture: string, query = ''): { service(): ApiToolService; upstream(): Upstream; sent(tool: string, args: Record<string, unknown>): Promise<string> } {
  let upstream: Upstream;
  let service: ApiToolService;
  beforeAll(async () => {
    upstream = await startUpstream();
    service = await ApiToolService.create({ apiBaseUrl: `${upstream.url}/v1${query}`, openApiSpec: path.join(__dirname, '..', 'fixtures', 'openapi', fixture), specInputMethod: 'file', specCache: false });
  });
  afterAll(async () => {
    await service?.close();
    await upstream?.close();
  });
  return {
    service: () => service,
    upstream: () => upstream,
    async sent(tool, args) {
      const result = await service.handle(tool, args);
      expect(result.isError).toBeUndefined();
      return upstream.requests[upstream.requests.length - 1].url;
    },
  };
}
