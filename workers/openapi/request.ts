import { McpvisorError } from '../../protocol/errors';
import type { ArgumentTarget, BodyInfo } from './input-schema';
import type { OperationEntry } from './operations';
import { deref, type Json, type JsonObject, type RefContext } from './refs';
import { swaggerBuildRequest } from './lazy';

/** A request ready for undici. */
export interface BuiltRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer | FormData;
}

/** What request building needs of a tool; built once per tool, on its first call. */
export interface RequestPlan {
  spec: JsonObject;
  targets: Map<string, ArgumentTarget>;
  body?: BodyInfo;
}

/**
 * A one-operation description for swagger-client's builder: the operation with its parameters
 * and body resolved, under the synthetic operationId `op` (GitHub's `issues/create`-style ids are
 * not found by the builder, and a small spec keeps it fast).
 */
export function requestPlan(entry: OperationEntry, ctx: RefContext, targets: Map<string, ArgumentTarget>, body: BodyInfo | undefined): RequestPlan {
  const op = deref(entry.operation, ctx) as JsonObject;
  const parameters = entry.parameters.map((p) => deref(p as unknown as Json, ctx) as JsonObject);
  const operation: JsonObject = { ...op, operationId: 'op', parameters };
  delete operation.security;
  delete operation.servers;
  const spec: JsonObject = ctx.root.swagger
    ? { swagger: '2.0', consumes: ctx.root.consumes ?? null, produces: ctx.root.produces ?? null, paths: { [entry.path]: { [entry.method.toLowerCase()]: operation } } }
    : { openapi: ctx.root.openapi as string, paths: { [entry.path]: { [entry.method.toLowerCase()]: operation } } };
  if (spec.consumes === null) delete spec.consumes;
  if (spec.produces === null) delete spec.produces;
  return { spec, targets, body };
}

/**
 * Builds the upstream request from validated arguments with swagger-client's `buildRequest`
 * (path templating with encoding, query style/explode, headers, cookies, JSON, form and multipart
 * bodies). The URL is `baseUrl` + the templated path: decision, `apiBaseUrl` replaces the
 * description's `servers` (3.x) and `host`/`basePath` (2.0), as in the reference. A result outside
 * `baseUrl` (a path argument that tries to leave it) throws BLOCKED; a path argument `.` or `..`
 * throws BAD_INPUT. Errors of the builder (a missing required parameter) are BAD_INPUT.
 */
export function buildUpstreamRequest(plan: RequestPlan, args: Record<string, unknown>, baseUrl: string): BuiltRequest {
  const parameters: Record<string, unknown> = {};
  const bodyProps: Record<string, unknown> = {};
  let wholeBody: unknown;
  let hasBody = false;
  for (const [arg, value] of Object.entries(args)) {
    const target = plan.targets.get(arg);
    if (!target || value === undefined) continue;
    if (target.kind === 'parameter') {
      if (target.in === 'path' && (value === '.' || value === '..')) throw new McpvisorError('BAD_INPUT', `path argument '${arg}' may not be '.' or '..'`);
      parameters[`${target.in}.${target.name}`] = value;
    }
    else if (target.kind === 'bodyProperty') {
      bodyProps[target.name] = value;
      hasBody = true;
    } else {
      wholeBody = value;
      hasBody = true;
    }
  }
  const body = plan.body;
  const requestBody = body?.shape === 'whole' ? wholeBody : hasBody ? bodyProps : undefined;
  if (body?.swaggerBodyName !== undefined && requestBody !== undefined) parameters[`body.${body.swaggerBodyName}`] = requestBody;
  if (body?.swaggerForm) for (const [name, value] of Object.entries(bodyProps)) parameters[`formData.${name}`] = value;

  let req: { url: string; method: string; headers: Record<string, string>; body?: unknown };
  try {
    req = swaggerBuildRequest()({
      spec: plan.spec,
      operationId: 'op',
      parameters,
      requestBody: plan.spec.swagger ? undefined : requestBody,
      requestContentType: body?.contentType,
      baseURL: baseUrl.replace(/\/+$/, ''),
    }) as typeof req;
  } catch (error) {
    throw new McpvisorError('BAD_INPUT', `cannot build the request: ${(error as Error).message}`);
  }
  const url = checkUrl(req.url, baseUrl);

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers ?? {})) if (value !== undefined) headers[name.toLowerCase()] = String(value);
  let out: BuiltRequest['body'];
  if (req.body instanceof FormData) {
    // undici writes the boundary itself.
    delete headers['content-type'];
    out = req.body;
  } else if (req.body !== undefined && req.body !== null) {
    const type = headers['content-type'] ?? '';
    if (typeof req.body === 'string' && !/json/i.test(type)) out = req.body;
    else if (Buffer.isBuffer(req.body)) out = req.body;
    else out = JSON.stringify(req.body);
    if (!headers['content-type']) headers['content-type'] = 'application/json';
  }
  return { method: req.method, url, headers, body: out };
}

/** The normalised URL; BLOCKED unless it has the origin of `baseUrl` and stays under its path. */
export function checkUrl(url: string, baseUrl: string): string {
  const target = new URL(url);
  const base = new URL(baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  if (target.origin !== base.origin || !(target.pathname === basePath || target.pathname.startsWith(`${basePath}/`) || basePath === '')) {
    throw new McpvisorError('BLOCKED', `the request would leave the API base URL ${base.origin}${basePath}`);
  }
  return target.href;

}
