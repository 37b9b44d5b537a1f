/** The openapi toolset's library surface (spec 000). */
export { OpenAPIServer } from './server';
export { ApiToolService } from './service';
export type { ApiServiceOptions, ServerStats } from './service';
export { ApiClient } from './api-client';
export type { ApiClientOptions, ApiResponse } from './api-client';
export { StaticAuthProvider, isAuthError } from './auth';
export type { AuthErrorInfo, IAuthProvider } from './auth';
export { ToolsManager, createToolFromOperation } from './tools-manager';
export type { EndpointTool, ITool, ToolFilter } from './tools-manager';
export { createMetaTools } from './meta-tools';
export type { MetaTool } from './meta-tools';
export { generateToolId, parseToolId, isValidToolId, isValidHttpMethod, extractResourceName, HTTP_METHODS } from './tool-id';
export type { HttpMethod } from './tool-id';
export { generateToolName, isValidToolName, MAX_TOOL_NAME_LENGTH } from './tool-name';
export { validateConfig, validateConfig as validateOpenApiConfig, DEFAULT_CONFIG, DEFAULT_CONFIG as DEFAULT_OPENAPI_CONFIG, openApiConfigSchema } from './config';
export type { OpenApiConfig, OpenApiConfigInput } from './config';
export { loadSpec } from './load-spec';
export type { LoadSpecOptions, LoadedSpec, SpecInputMethod } from './load-spec';
