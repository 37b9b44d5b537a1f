/**
 * The library surface of mcpvisor: configuration, the protocol types a custom worker needs, and
 * the server itself. Toolset libraries are exported from their own folders under workers/.
 */
export { configSchema, ConfigError, DEFAULT_CONFIG, loadConfig, validateConfig } from './config';
export type { Config, ConfigInput } from './config';
export { ERROR_CODES, McpvisorError, errorCodeOf, errorResult, runWorker, textResult, threadWorker } from './protocol';
// What a custom toolset written in TypeScript names: its init, the logger it is given, a call's context.
export type { CallContext, ContentItem, ErrorCode, JsonObjectSchema, Pool, PoolStats, ToolCall, ToolDescriptor, ToolResult, WorkerHealth, WorkerInit, WorkerLogger, WorkerService } from './protocol';
export { runProfile, startServer } from './supervisor/profile';
export type { Profile, RunningServer } from './supervisor/profile';
