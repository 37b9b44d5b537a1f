import { z } from 'zod';
import { apiSchema } from '../../config/openapi';
import { McpvisorError } from '../../protocol/errors';
import { isAuthProvider, type IAuthProvider } from './auth';

/**
 * spec 000's configuration object for library users: one API plus the transport fields, which
 * `mcpvisor` keeps at the top of its own config (`transport`, `http.*`).
 */
export const openApiConfigSchema = apiSchema.extend({
  authProvider: z.custom<IAuthProvider>((value) => isAuthProvider(value), 'authProvider must implement getAuthHeaders() and handleAuthError()').optional(),
  transportType: z.enum(['stdio', 'http'], { error: 'transportType must be stdio or http' }).default('stdio'),
  httpPort: z.number().int().min(0).max(65_535).default(3000),
  httpHost: z.string().min(1).default('127.0.0.1'),
  endpointPath: z.string().startsWith('/', 'endpointPath must start with /').default('/mcp'),
  debug: z.boolean().default(false),
  /** The reference's place for inline content (with `specInputMethod: 'inline'`); ours is `openApiSpec`. */
  inlineSpecContent: z.string().min(1, 'inlineSpecContent may not be empty').optional(),
  /** The reference's switch for its operational logs; accepted, and no effect: the library logs only to `options.log`. */
  verbose: z.boolean().optional(),
});

/** Keys of the reference's config that have no equivalent here, and what to do instead. */
const UNSUPPORTED: Readonly<Record<string, string>> = Object.freeze({
  clientCertPath: 'mutual TLS is not supported (a private CA: NODE_EXTRA_CA_CERTS)',
  clientKeyPath: 'mutual TLS is not supported (a private CA: NODE_EXTRA_CA_CERTS)',
  clientKeyPassphrase: 'mutual TLS is not supported (a private CA: NODE_EXTRA_CA_CERTS)',
  caCertPath: 'not supported: trust a private CA with NODE_EXTRA_CA_CERTS',
  rejectUnauthorized: 'not supported: certificates are always checked (a private CA: NODE_EXTRA_CA_CERTS)',
  prompts: 'MCP prompts are not served (tools only)',
  promptsPath: 'MCP prompts are not served (tools only)',
  promptsInline: 'MCP prompts are not served (tools only)',
  resources: 'MCP resources are not served (tools only)',
  resourcesPath: 'MCP resources are not served (tools only)',
  resourcesInline: 'MCP resources are not served (tools only)',
  extraTools: 'not supported: serve hand-written tools as an mcpvisor customToolsets module',
});

export type OpenApiConfig = z.infer<typeof openApiConfigSchema>;
export type OpenApiConfigInput = z.input<typeof openApiConfigSchema>;

/**
 * Returns the configuration with defaults applied; throws McpvisorError BAD_INPUT whose message
 * names each problem (`apiBaseUrl is required`, `transportType must be stdio or http`, …).
 * Header values are never echoed.
 */
export function validateConfig(config: unknown): OpenApiConfig {
  const parsed = openApiConfigSchema.safeParse(config ?? {});
  if (parsed.success) return withInlineContent(parsed.data);
  const problems = parsed.error.issues.flatMap((issue) => {
    // A key of the reference's config is named with what to do instead, not just "Unrecognized".
    if (issue.code === 'unrecognized_keys' && issue.keys.some((key) => key in UNSUPPORTED)) {
      const other = issue.keys.filter((key) => !(key in UNSUPPORTED));
      return [...issue.keys.filter((key) => key in UNSUPPORTED).map((key) => `${key}: ${UNSUPPORTED[key]}`), ...(other.length > 0 ? [`unrecognized key(s): ${other.join(', ')}`] : [])];
    }
    const where = issue.path.join('.');
    return [where === '' || issue.message.startsWith(where) ? issue.message : `${where}: ${issue.message}`];
  });
  throw new McpvisorError('BAD_INPUT', `invalid configuration: ${problems.join('; ')}`);
}

/**
 * `inlineSpecContent` (the reference's) as our `openApiSpec`: read with `specInputMethod: 'inline'`
 * only, as there, where `openApiSpec` held a placeholder; with another method it is refused
 * rather than one of the two silently ignored.
 */
function withInlineContent(config: OpenApiConfig): OpenApiConfig {
  if (config.inlineSpecContent === undefined) return config;
  if (config.specInputMethod !== 'inline') {
    throw new McpvisorError('BAD_INPUT', `invalid configuration: inlineSpecContent is read with specInputMethod 'inline', not '${config.specInputMethod}'`);
  }
  const { inlineSpecContent, ...rest } = config;
  return { ...rest, openApiSpec: inlineSpecContent };
}

/** The defaults of every optional field (apiBaseUrl has none), frozen. */
export const DEFAULT_CONFIG: Readonly<Omit<OpenApiConfig, 'apiBaseUrl'>> = Object.freeze(
  (({ apiBaseUrl: _ignored, ...rest }) => rest)(validateConfig({ apiBaseUrl: 'http://localhost' })),
);
