import pino from 'pino';
import { ConfigError, validateConfig } from '../../../config/validate';
import { openapiToolsets } from '../../../supervisor/toolsets/openapi';

const api = (namespace?: string) => ({ apiBaseUrl: 'http://127.0.0.1:9', openApiSpec: '/nowhere/api.yaml', ...(namespace ? { namespace } : {}) });
const plan = (...apis: Array<ReturnType<typeof api>>) => openapiToolsets(validateConfig({ apis }), pino({ level: 'silent' }));

describe('openapi toolsets', () => {
  test('name each pool after its namespace, else its index', () => {
    expect(plan(api('pets'), api(), api('notes')).map((toolset) => toolset.pools[0].name)).toEqual(['api-pets', 'api-1', 'api-notes']);
  });

  test('refuse, before any worker starts, two APIs that would share a pool name', () => {
    expect(() => plan(api('pets'), api('pets'))).toThrow(new ConfigError("apis[0] (namespace 'pets') and apis[1] (namespace 'pets') would share the pool name api-pets: give them different namespaces"));
    expect(() => plan(api('2'), api(), api())).toThrow(new ConfigError("apis[0] (namespace '2') and apis[2] (no namespace) would share the pool name api-2: give them different namespaces"));
  });
});
