/**
 * Biggest description read from a URL or standard input, bytes (200 MiB). A module of its own:
 * openapi-mcp-server's supervisor reads standard input with it, and importing load-spec.ts there
 * loaded the worker's loader and its modules into every start (~8 ms).
 */
export const MAX_SPEC_BYTES = 200 * 1024 * 1024;
