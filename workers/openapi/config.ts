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
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const where = issue.path.join('.');
    return where === '' || issue.message.startsWith(where) ? issue.message : `${where}: ${issue.message}`;
  });
  throw new McpvisorError('BAD_INPUT', `invalid configuration: ${problems.join('; ')}`);
}

/** The defaults of every optional field (apiBaseUrl has none), frozen. */
export const DEFAULT_CONFIG: Readonly<Omit<OpenApiConfig, 'apiBaseUrl'>> = Object.freeze(
  (({ apiBaseUrl: _ignored, ...rest }) => rest)(validateConfig({ apiBaseUrl: 'http://localhost' })),
);
