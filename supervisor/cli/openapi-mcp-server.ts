#!/usr/bin/env node
// First: the api worker starts while the rest of the supervisor loads.
import './api-worker-spare';
import { readSync } from 'node:fs';
import { headerHint, parseBool, type EnvSpec, type FlagSpec } from '../../config/load';
import { ConfigError, type Config, type ConfigInput } from '../../config/validate';
import { SPEC_CACHE_OFF } from '../../config/openapi';
import { COMMON_FLAGS, runProfile, SERVER_ENV, SERVER_FLAGS, type Profile } from '../profile';
import { isCommand } from './command';
import { REFERENCE_SHORT_FLAGS, referenceArgv } from './reference-argv';
import { HEADER_NAME } from '../../protocol/http-headers';
import { MAX_SPEC_BYTES } from '../../workers/openapi/spec-limits';

type ApiInput = NonNullable<ConfigInput['apis']>[number];
const HTTP_METHOD = /^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)$/;

/**
 * spec 000's CLI: the supervisor with one openapi toolset (`apis[0]`), web and shell off.
 *
 * The flags and variables of one API all write into one object that every layer (environment,
 * command line) shares, because the config loader replaces arrays layer by layer and would
 * otherwise drop `API_BASE_URL` when `--openapi-spec` is given. That object completes the config
 * file's first API (`mergeByIndex`): a file can hold the API and `API_HEADERS` its token.
 * `--spec-input-method stdin` reads the description here, before the server starts, and hands
 * it to the worker inline; it is refused with `--transport stdio` (stdin carries the protocol).
 * Decision: `--spec-cache` has no environment variable, like every option the reference does not
 * read from the environment; XDG_CACHE_HOME moves the default directory.
 *
 * The reference's (`@ivotoby/openapi-mcp-server`) flags and variables beyond spec 000's are read
 * too, so that its users' command lines and client configs work as written: `--spec-inline`,
 * `--spec-from-stdin`, `--name`, `--server-version`, `--exclude-tag`, `--verbose`, and
 * TRANSPORT_TYPE, HTTP_PORT, HTTP_HOST, ENDPOINT_PATH, TOOLS_MODE, DISABLE_ABBREVIATION,
 * SERVER_NAME, SERVER_VERSION, OPENAPI_SPEC_INLINE, OPENAPI_SPEC_FROM_STDIN, VERBOSE (a
 * TOOLS_MODE=dynamic read by nobody served every operation). MCPVISOR_* win over them. As there,
 * a description given two ways (a path and inline content) is refused, not one of them picked.
 */
export function openapiProfile(): Profile {
  const api: Record<string, unknown> = {};
  const set = (key: string, transform: (value: unknown) => unknown = (v) => v) => (input: ConfigInput, value: unknown) => {
    api[key] = transform(value);
    input.apis = [api as ApiInput];
  };
  const add = (key: string, transform: (value: unknown) => unknown = (v) => v) => (input: ConfigInput, value: unknown) => {
    const list = (Array.isArray(value) ? value : [value]).map(transform);
    api[key] = [...((api[key] as unknown[] | undefined) ?? []), ...list];
    input.apis = [api as ApiInput];
  };
  // A description given here is read by its own form (URL, else file path), not by a config
  // file's `specInputMethod`, which was about the file's own `openApiSpec`; a
  // `--spec-input-method` (applied after this one) still says otherwise.
  // Who gave a description, by the way it is read: the reference refused two ways at once.
  const specGivers = new Map<string, string>();
  const spec = (by: string) => (input: ConfigInput, value: unknown) => {
    specGivers.set('path', by);
    set('openApiSpec')(input, value);
    api.specInputMethod ??= 'url';
  };
  const inline = (by: string) => (input: ConfigInput, value: unknown) => {
    // Else zod's "Too small: expected string to have >=1 characters" (a `--spec-inline "$SPEC"` with SPEC unset).
    if (String(value).trim() === '') throw new ConfigError(`${by}: the OpenAPI description given is empty`);
    specGivers.set('inline', by);
    set('openApiSpec')(input, value);
    api.specInputMethod = 'inline';
  };
  const fromStdin = (by: string) => (input: ConfigInput, value: unknown) => {
    if (value !== true) return;
    specGivers.set('stdin', by);
    set('specInputMethod')(input, 'stdin');
  };
  /** `--verbose false` / VERBOSE=false: warnings and errors only, unless a log level is given. */
  const verbose = (by: string) => (input: ConfigInput, value: unknown) => {
    if (!parseBool(String(value), by)) input.logLevel ??= 'warn';
  };
  const lower = (value: unknown) => String(value).trim().toLowerCase();
  /** An HTTP method in any case; `flag` names the flag it came with, for the message. */
  const method = (flag: string) => (value: unknown) => {
    const upper = String(value).trim().toUpperCase();
    if (!HTTP_METHOD.test(upper)) throw new ConfigError(`--${flag}: '${String(value)}' is not an HTTP method (GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS)`);
    return upper;
  };
  // `--headers` repeated adds up, as `--header` does: the last one alone was kept, and the
  // others (often the token) were silently never sent.
  const mergeHeaders = (input: ConfigInput, value: unknown) => {
    for (const headers of Array.isArray(value) ? value : [value]) {
      api.headers = { ...((api.headers as Record<string, string> | undefined) ?? {}), ...(headers as Record<string, string>) };
    }
    input.apis = [api as ApiInput];
  };
  const oneHeader = (input: ConfigInput, value: unknown) => {
    for (const item of Array.isArray(value) ? value : [value]) {
      const text = String(item);
      const at = text.indexOf('=');
      const name = at > 0 ? text.slice(0, at).trim() : '';
      if (!HEADER_NAME.test(name)) throw new ConfigError(`--header: expected Name=value; ${headerHint(text, '=')}`);
      mergeHeaders(input, { [name]: text.slice(at + 1).trim() });
    }
  };

  const flags: FlagSpec[] = [
    ...SERVER_FLAGS,
    { name: 'api-base-url', path: 'apis.0.apiBaseUrl', kind: 'string', arg: 'URL', apply: set('apiBaseUrl'), help: 'base URL of the upstream API (required; API_BASE_URL)' },
    { name: 'openapi-spec', path: 'apis.0.openApiSpec', kind: 'string', arg: 'PATH|URL', apply: spec('--openapi-spec'), help: 'OpenAPI description: file path or URL (OPENAPI_SPEC_PATH)' },
    { name: 'spec-input-method', path: 'apis.0.specInputMethod', kind: 'string', arg: 'METHOD', apply: set('specInputMethod'), help: 'url, file, stdin or inline: how --openapi-spec is read (default: URL if http(s), else file)' },
    { name: 'spec-inline', path: 'apis.0.openApiSpec', kind: 'string', arg: 'TEXT', apply: inline('--spec-inline'), help: 'the OpenAPI description itself, JSON or YAML (OPENAPI_SPEC_INLINE)' },
    { name: 'spec-from-stdin', path: 'apis.0.specInputMethod', kind: 'flag', apply: fromStdin('--spec-from-stdin'), help: 'read the description from standard input (needs --transport http; OPENAPI_SPEC_FROM_STDIN)' },
    { name: 'headers', path: 'apis.0.headers', kind: 'headers', multiple: true, arg: 'NAME:VALUE,...', apply: mergeHeaders, help: 'headers sent upstream, comma-separated (API_HEADERS)' },
    { name: 'header', path: 'apis.0.headers', kind: 'string', multiple: true, arg: 'NAME=VALUE', apply: oneHeader, help: 'one header sent upstream' },
    { name: 'not-credential', path: 'apis.0.notCredentials', kind: 'string', multiple: true, arg: 'NAME', apply: add('notCredentials'), help: 'a configured header or base URL query parameter that holds no credential: where the upstream says its value back, it is shown, not redacted' },
    { name: 'tools', path: 'apis.0.toolsMode', kind: 'string', arg: 'all|dynamic|explicit', apply: set('toolsMode', lower), help: 'tool loading mode (default all; TOOLS_MODE)' },
    { name: 'tool', path: 'apis.0.includeTools', kind: 'string', multiple: true, arg: 'ID|NAME', apply: add('includeTools'), help: 'include this tool (ID or name)' },
    { name: 'tag', path: 'apis.0.includeTags', kind: 'string', multiple: true, arg: 'TAG', apply: add('includeTags'), help: 'include operations with this tag (case-sensitive)' },
    { name: 'resource', path: 'apis.0.includeResources', kind: 'string', multiple: true, arg: 'RESOURCE', apply: add('includeResources'), help: 'include this resource (name such as users, or path prefix such as /users)' },
    { name: 'operation', path: 'apis.0.includeOperations', kind: 'string', multiple: true, arg: 'METHOD', apply: add('includeOperations', method('operation')), help: 'include this HTTP method' },
    { name: 'exclude-tag', path: 'apis.0.excludeTags', kind: 'string', multiple: true, arg: 'TAG', apply: add('excludeTags'), help: 'leave out operations with this tag (any case), in every mode and from the meta-tools' },
    { name: 'include-tags', path: 'apis.0.includeTags', kind: 'list', multiple: true, arg: 'A,B', apply: add('includeTags'), help: 'tags to include, comma-separated' },
    { name: 'include-operations', path: 'apis.0.includeOperations', kind: 'list', multiple: true, arg: 'GET,POST', apply: add('includeOperations', method('include-operations')), help: 'HTTP methods to include, comma-separated' },
    { name: 'disable-abbreviation', path: 'apis.0.disableAbbreviation', kind: 'flag', apply: set('disableAbbreviation'), help: 'keep tool names unshortened (fails on names over 64 characters; DISABLE_ABBREVIATION)' },
    { name: 'name', path: 'name', kind: 'string', arg: 'NAME', help: 'server name reported to clients (default openapi-mcp-server; SERVER_NAME)' },
    { name: 'server-version', path: 'version', kind: 'string', arg: 'VERSION', help: 'server version reported to clients (default 1.0.0; SERVER_VERSION)' },
    { name: 'verbose', path: 'logLevel', kind: 'string', arg: 'true|false', apply: verbose('--verbose'), help: 'false: log warnings and errors only (VERBOSE)' },
    { name: 'spec-cache', path: 'apis.0.specCache', kind: 'string', arg: 'DIR|off', apply: set('specCache', (v) => (SPEC_CACHE_OFF.test(String(v)) ? false : v)), help: 'cache of compiled descriptions (default $XDG_CACHE_HOME/mcpvisor/openapi or ~/.cache/mcpvisor/openapi); off (or false, none): none' },
  ];
  const envVars: EnvSpec[] = [
    { name: 'API_BASE_URL', path: 'apis.0.apiBaseUrl', kind: 'string', apply: set('apiBaseUrl') },
    { name: 'OPENAPI_SPEC_PATH', path: 'apis.0.openApiSpec', kind: 'string', apply: spec('OPENAPI_SPEC_PATH') },
    { name: 'API_HEADERS', path: 'apis.0.headers', kind: 'headers', apply: mergeHeaders },
    // The reference's; before SERVER_ENV, whose MCPVISOR_* set the same fields after them and win.
    { name: 'OPENAPI_SPEC_INLINE', path: 'apis.0.openApiSpec', kind: 'string', apply: inline('OPENAPI_SPEC_INLINE') },
    { name: 'OPENAPI_SPEC_FROM_STDIN', path: 'apis.0.specInputMethod', kind: 'bool', apply: fromStdin('OPENAPI_SPEC_FROM_STDIN') },
    { name: 'TOOLS_MODE', path: 'apis.0.toolsMode', kind: 'string', apply: set('toolsMode', lower) },
    { name: 'DISABLE_ABBREVIATION', path: 'apis.0.disableAbbreviation', kind: 'bool', apply: set('disableAbbreviation') },
    { name: 'SERVER_NAME', path: 'name', kind: 'string' },
    { name: 'SERVER_VERSION', path: 'version', kind: 'string' },
    { name: 'TRANSPORT_TYPE', path: 'transport', kind: 'string' },
    { name: 'HTTP_HOST', path: 'http.host', kind: 'string' },
    { name: 'HTTP_PORT', path: 'http.port', kind: 'int' },
    { name: 'ENDPOINT_PATH', path: 'http.endpointPath', kind: 'string' },
    { name: 'VERBOSE', path: 'logLevel', kind: 'string', apply: verbose('VERBOSE') },
  ];
  return {
    command: 'openapi-mcp-server',
    summary: 'serve the operations of an OpenAPI description as MCP tools',
    flags,
    // The server's own variables too (MCPVISOR_AUTH_TOKEN, MCPVISOR_PORT…), as every server
    // command reads them: the refusal to serve a network address names MCPVISOR_AUTH_TOKEN.
    envVars: [...envVars, ...SERVER_ENV],
    envPrefix: 'MCPVISOR_',
    defaults: { name: 'openapi-mcp-server', version: '1.0.0', shell: { enabled: false }, web: { enabled: false } },
    mergeByIndex: ['apis'],
    finalize(config: Config): Config {
      if (config.apis.length === 0) throw new ConfigError('apiBaseUrl is required: give --api-base-url <URL> or API_BASE_URL');
      if (specGivers.size > 1) {
        throw new ConfigError(`the OpenAPI description is given ${specGivers.size} ways (${[...specGivers.values()].join(', ')}): give one of --openapi-spec (OPENAPI_SPEC_PATH), --spec-inline (OPENAPI_SPEC_INLINE) or --spec-from-stdin (OPENAPI_SPEC_FROM_STDIN)`);
      }
      const first = config.apis[0];
      if (first.specInputMethod === 'stdin') {
        const by = specGivers.get('stdin') ?? '--spec-input-method stdin';
        if (config.transport === 'stdio') throw new ConfigError(`${by} needs --transport http: with stdio, standard input carries the MCP messages`);
        const text = readStdinSpec(MAX_SPEC_BYTES, by);
        return { ...config, apis: [{ ...first, specInputMethod: 'inline', openApiSpec: text, specSource: 'standard input' }, ...config.apis.slice(1)] };
      }
      if (first.openApiSpec === undefined) {
        throw new ConfigError('no OpenAPI description given: use --openapi-spec <path or URL> (or OPENAPI_SPEC_PATH), --spec-inline <content> (OPENAPI_SPEC_INLINE), or --spec-from-stdin with --transport http');
      }
      return config;
    },
    helpFooter: [
      'Tool IDs look like GET::users__---id (method, path segments joined by __, {param} as ---param).',
      'Filters combine: a tool must match every filter given, except that --tool names the tools served',
      'whatever --tag, --resource and --operation say; --exclude-tag applies in every mode. --tools dynamic',
      'lists only the meta-tools list-api-endpoints, get-api-endpoint-schema and invoke-api-endpoint.',
      '',
      // README names them ("Coming from @ivotoby/openapi-mcp-server"); --help did not.
      'One-letter flags, as @ivotoby/openapi-mcp-server has them:',
      `  ${Object.entries(REFERENCE_SHORT_FLAGS).map(([short, long]) => `${short} ${long}`).join(', ')}`,
      '',
      'Example:',
      '  openapi-mcp-server --api-base-url https://api.example.com --openapi-spec ./openapi.yaml \\',
      '    --headers "Authorization:Bearer $TOKEN" --tag users',
    ].join('\n'),
  };
}

/**
 * The description on standard input, read to its end but never past `maxBytes` (an endless
 * stream grew the process to 16 GB): the loader's cap for URLs and streams (load-spec.ts).
 * Synchronous because finalize is. Throws ConfigError (BAD_INPUT) past the cap, on a read
 * error, and for an empty input (naming `by`, the flag or variable that asked for it).
 */
function readStdinSpec(maxBytes: number, by: string): string {
  const chunks: Buffer[] = [];
  let size = 0;
  const chunk = Buffer.allocUnsafe(1024 * 1024);
  for (;;) {
    let read: number;
    try {
      read = readSync(0, chunk, 0, chunk.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EOF') break;
      throw new ConfigError(`cannot read the OpenAPI spec from standard input: ${(error as Error).message}`);
    }
    if (read === 0) break;
    size += read;
    if (size > maxBytes) throw new ConfigError(`the OpenAPI spec on standard input is larger than ${maxBytes} bytes`);
    chunks.push(Buffer.from(chunk.subarray(0, read)));
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new ConfigError(`standard input was empty: ${by} reads the OpenAPI description from it until it closes`);
  return text;
}

if (isCommand('openapi-mcp-server')) {
  const profile = openapiProfile();
  void runProfile(profile, referenceArgv(process.argv.slice(2), [...COMMON_FLAGS, ...profile.flags], ['verbose']));
}
