import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, type LoadOptions } from '../../../config/load';
import { ConfigError, DEFAULT_CONFIG, validateConfig } from '../../../config/validate';
import { SERVER_ENV, SERVER_FLAGS, COMMON_FLAGS } from '../../../supervisor/profile';
import { writeConfig } from '../../helpers/config';

const base = (over: Partial<LoadOptions> = {}): LoadOptions => ({
  argv: [],
  env: {},
  flags: [...COMMON_FLAGS, ...SERVER_FLAGS],
  envVars: SERVER_ENV,
  envPrefix: 'MCPVISOR_',
  ...over,
});

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration sources', () => {
  it('applies the defaults when nothing is given', () => {
    const { config } = loadConfig(base());
    expect(config).toEqual(DEFAULT_CONFIG);
    expect(config.http).toMatchObject({ host: '127.0.0.1', port: 3000, endpointPath: '/mcp' });
    expect(config.transport).toBe('stdio');
  });

  it('lets the file override defaults, the environment override the file, and flags override both', () => {
    const file = writeConfig({ transport: 'http', http: { port: 4000, host: '127.0.0.2', endpointPath: '/from-file' } });
    const fileOnly = loadConfig(base({ argv: ['--config', file] })).config;
    expect(fileOnly.http).toMatchObject({ port: 4000, host: '127.0.0.2', endpointPath: '/from-file' });
    expect(fileOnly.transport).toBe('http');

    const withEnv = loadConfig(base({ argv: ['--config', file], env: { MCPVISOR_PORT: '5000' } })).config;
    expect(withEnv.http).toMatchObject({ port: 5000, host: '127.0.0.2', endpointPath: '/from-file' });

    const withFlags = loadConfig(base({ argv: ['--config', file, '--port', '6000', '--path', '/flag'], env: { MCPVISOR_PORT: '5000' } })).config;
    expect(withFlags.http).toMatchObject({ port: 6000, host: '127.0.0.2', endpointPath: '/flag' });
  });

  it('takes the config file from MCPVISOR_CONFIG when --config is not given', () => {
    const file = writeConfig({ http: { port: 4100 } });
    expect(loadConfig(base({ env: { MCPVISOR_CONFIG: file }, configEnv: 'MCPVISOR_CONFIG' })).config.http.port).toBe(4100);
    const other = writeConfig({ http: { port: 4200 } });
    expect(loadConfig(base({ argv: ['--config', other], env: { MCPVISOR_CONFIG: file }, configEnv: 'MCPVISOR_CONFIG' })).config.http.port).toBe(4200);
  });

  it('keeps profile defaults below the config file', () => {
    const file = writeConfig({ shell: { workers: 3 } });
    const { config } = loadConfig(base({ argv: ['--config', file], defaults: { shell: { workers: 1, sandbox: false } } }));
    expect(config.shell).toMatchObject({ workers: 3, sandbox: false });
  });

  it('reads YAML config files', () => {
    const file = writeConfig({}, 'config.yaml');
    writeFileSync(file, 'transport: http\nhttp:\n  port: 7000\nshell:\n  enabled: false\n');
    const { config } = loadConfig(base({ argv: ['--config', file] }));
    expect(config.transport).toBe('http');
    expect(config.http.port).toBe(7000);
    expect(config.shell.enabled).toBe(false);
  });

  it('resolves custom toolset modules relative to the config file', () => {
    const file = writeConfig({ customToolsets: [{ name: 'mine', module: './worker.js' }] });
    const { config } = loadConfig(base({ argv: ['--config', file] }));
    expect(config.customToolsets[0].module).toBe(path.join(path.dirname(file), 'worker.js'));
  });

  it("resolves an API's description file and cache directory relative to the config file, and reads off, false and none as no cache", () => {
    const api = { apiBaseUrl: 'http://127.0.0.1:9' };
    const file = writeConfig({
      apis: [
        { ...api, namespace: 'a', openApiSpec: './api.yaml', specCache: 'cache' },
        { ...api, namespace: 'b', openApiSpec: 'https://example.test/api.yaml', specCache: 'off' },
        { ...api, namespace: 'c', openApiSpec: 'openapi: 3.0.3', specInputMethod: 'inline', specCache: 'None' },
        { ...api, namespace: 'd', openApiSpec: '/abs/api.yaml', specCache: 'false' },
      ],
    });
    const dir = path.dirname(file);
    const { config } = loadConfig(base({ argv: ['--config', file] }));
    expect(config.apis.map((a) => [a.openApiSpec, a.specCache])).toEqual([
      [path.join(dir, 'api.yaml'), path.join(dir, 'cache')],
      ['https://example.test/api.yaml', false],
      ['openapi: 3.0.3', false],
      ['/abs/api.yaml', false],
    ]);
  });

  it('turns --debug and MCPVISOR_DEBUG into debug logging', () => {
    expect(loadConfig(base({ argv: ['--debug'] })).config.debug).toBe(true);
    expect(loadConfig(base({ env: { MCPVISOR_DEBUG: 'true' } })).config.debug).toBe(true);
  });

  it('reports --help and --version without validating the rest', () => {
    expect(loadConfig(base({ argv: ['--help', '--port', '99999'] })).help).toBe(true);
    expect(loadConfig(base({ argv: ['--version'] })).version).toBe(true);
  });
});

describe('configuration errors', () => {
  it('names an unknown flag and suggests the closest one', () => {
    expect(errorOf(() => loadConfig(base({ argv: ['--prot', '1'] })))).toBe("unknown option --prot (did you mean '--port'?); see --help");
  });

  it("names a flag given without its value, or a switch given one, in this server's words (they were node's parser's: \"Option '--port <value>' argument missing\")", () => {
    expect(errorOf(() => loadConfig(base({ argv: ['--log-level'] })))).toBe('--log-level: expected a value (LEVEL), got none; see --help');
    expect(errorOf(() => loadConfig(base({ argv: ['--port', '--debug'] })))).toBe("--port: expected a value (PORT), got an option; a value that starts with '-' is given as --port=VALUE");
    expect(errorOf(() => loadConfig(base({ argv: ['--debug=yes'] })))).toBe('--debug takes no value: give it alone; see --help');
  });

  it('names an unknown MCPVISOR_ variable and suggests the closest one', () => {
    expect(errorOf(() => loadConfig(base({ env: { MCPVISOR_PROT: '1' } })))).toBe("unknown environment variable MCPVISOR_PROT (did you mean 'MCPVISOR_PORT'?)");
  });

  it('names an unknown config key at its path with a suggestion', () => {
    const file = writeConfig({ http: { prot: 1 } });
    expect(errorOf(() => loadConfig(base({ argv: ['--config', file] })))).toMatch(/http\.prot in \/\S+: unknown key \(did you mean 'port'\?\)/);
  });

  it('names a value of the wrong type with its source', () => {
    expect(errorOf(() => loadConfig(base({ argv: ['--port', 'abc'] })))).toBe("--port: expected an integer, got 'abc'");
    expect(errorOf(() => loadConfig(base({ env: { MCPVISOR_DEBUG: 'maybe' } })))).toBe("MCPVISOR_DEBUG: expected true or false, got 'maybe'");
  });

  it('names the field, the rule and the value for out-of-range values', () => {
    expect(errorOf(() => loadConfig(base({ argv: ['--port', '70000'] })))).toContain('--port (http.port): Too big: expected number to be <=65535 (got 70000)');
    expect(errorOf(() => loadConfig(base({ argv: ['--transport', 'tcp'] })))).toContain('--transport (transport): transport must be stdio or http (got "tcp")');
    expect(errorOf(() => loadConfig(base({ argv: ['--path', 'mcp'] })))).toContain('--path (http.endpointPath): endpointPath must start with /');
  });

  it('explains a missing or unreadable config file and invalid JSON', () => {
    expect(errorOf(() => loadConfig(base({ argv: ['--config', '/nonexistent/mcpvisor.json'] })))).toBe('cannot read config file /nonexistent/mcpvisor.json: ENOENT');
    const file = writeConfig({});
    writeFileSync(file, '{ "transport": ');
    expect(errorOf(() => loadConfig(base({ argv: ['--config', file] })))).toMatch(/^config file .* is not valid JSON/);
    writeFileSync(file, '[1, 2]');
    expect(errorOf(() => loadConfig(base({ argv: ['--config', file] })))).toMatch(/must hold an object at the top level/);
  });

  it('never echoes a secret value in an error', () => {
    const message = errorOf(() => validateConfig({ http: { authToken: 'short-secret' } }));
    expect(message).toContain('http.authToken: authToken must be at least 16 characters');
    expect(message).not.toContain('short-secret');
    // Credentials in a URL whose scheme is mistyped (no URL at all) are masked too.
    for (const apiBaseUrl of ['https//user:SECRETpw@api.example.com/v1', 'https:/user:SECRETpw@api.example.com#x']) {
      const typo = errorOf(() => validateConfig({ apis: [{ apiBaseUrl }] }));
      expect(typo).toContain('apis[0].apiBaseUrl');
      expect(typo).not.toContain('SECRETpw');
      expect(typo).toContain('***@api.example.com');
    }
  });

  it('lists every problem of one input', () => {
    const message = errorOf(() => validateConfig({ transport: 'x', http: { port: -1 }, shel: {} }));
    expect(message.split('\n').filter((line) => line.startsWith('  - '))).toHaveLength(3);
    expect(message).toContain("shel: unknown key (did you mean 'shell'?)");
  });

  it('takes durations up to the longest timer Node keeps, everywhere, and refuses one past it', () => {
    const longest = 2 ** 31 - 1;
    const durations = {
      http: { sessionIdleTimeoutMs: longest, connectedSessionIdleTimeoutMs: longest, heartbeatIntervalMs: longest, shutdownGraceMs: longest, headersTimeoutMs: longest, requestTimeoutMs: longest },
      pools: { callTimeoutMs: longest, progressIntervalMs: longest, cancelGraceMs: longest, startTimeoutMs: longest, livenessIntervalMs: longest, livenessTimeoutMs: longest, restart: { windowMs: longest, backoffBaseMs: longest, backoffMaxMs: longest } },
      web: { search: { rateLimitIntervalMs: longest, timeoutMs: longest, launchTimeoutMs: longest }, fetch: { rateLimitIntervalMs: longest, timeoutMs: longest } },
      apis: [{ apiBaseUrl: 'http://127.0.0.1:9', requestTimeoutMs: longest }],
      customToolsets: [{ name: 'mine', module: '/x.js', callTimeoutMs: longest }],
    };
    expect(validateConfig(durations).pools.callTimeoutMs).toBe(longest);
    const over = JSON.parse(JSON.stringify(durations).replaceAll(String(longest), String(longest + 1))) as unknown;
    const lines = errorOf(() => validateConfig(over)).split('\n').slice(1);
    expect(lines).toHaveLength(22);
    for (const line of lines) expect(line).toMatch(/^ {2}- [\w.[\]]+Ms: at most 2147483647 ms \(about 24\.8 days\), the longest timer Node\.js keeps \(got 2147483648\)$/);
  });

  it("refuses an endpoint path that is one of the server's other paths, with or without a trailing slash", () => {
    for (const taken of ['/', '//', '/sse', '/health/', '/metrics', '/message', '/message/abc']) {
      expect(errorOf(() => validateConfig({ http: { endpointPath: taken } }))).toContain("http.endpointPath: endpointPath may not be one of the server's other paths");
    }
    for (const free of ['/mcp', '/healthz', '/messages', '/sse2', '/api/health']) expect(validateConfig({ http: { endpointPath: free } }).http.endpointPath).toBe(free);
  });

  it('refuses an empty --config, and takes an empty MCPVISOR_CONFIG as unset like every empty variable', () => {
    expect(errorOf(() => loadConfig(base({ argv: ['--config', ' '] })))).toBe('--config: expected a file path, got an empty value');
    expect(loadConfig(base({ env: { MCPVISOR_CONFIG: '' }, configEnv: 'MCPVISOR_CONFIG' })).config).toEqual(DEFAULT_CONFIG);
  });

  it('refuses a __proto__ or constructor key of a config file as unknown and changes no prototype', () => {
    const file = writeConfig({});
    writeFileSync(file, '{"__proto__": {"transport": "http", "polluted": 1}, "http": {"__proto__": {"port": 1}}}');
    const message = errorOf(() => loadConfig(base({ argv: ['--config', file] })));
    expect(message).toContain(`  - __proto__ in ${file}: unknown key`);
    expect(message).toContain(`  - http.__proto__ in ${file}: unknown key`);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).transport).toBeUndefined();
  });

  it('refuses a JSON config that gives a key twice, naming its path, as a YAML one is refused (the last one won silently)', () => {
    const file = writeConfig({});
    writeFileSync(file, '{"http": {"port": 4000, "host": "127.0.0.1"}, "note": "\\"http\\": {}", "http": {"authToken": "a-token-of-enough-length-0123456789"}}');
    expect(errorOf(() => loadConfig(base({ argv: ['--config', file] })))).toBe(`config file ${file} gives http twice; give each setting once`);
    writeFileSync(file, '{"apis": [{"name": "a", "openApiSpec": "x.yaml", "name": "b"}]}');
    expect(errorOf(() => loadConfig(base({ argv: ['--config', file] })))).toBe(`config file ${file} gives apis[].name twice; give each setting once`);
    // The same key in two objects is no duplicate; an escaped quote in a string is no key.
    writeFileSync(file, '{"http": {"port": 4000}, "shell": {"enabled": false}, "web": {"enabled": false, "search": {"timeoutMs": 1000}, "fetch": {"timeoutMs": 1000}}}');
    expect(loadConfig(base({ argv: ['--config', file] })).config.http.port).toBe(4000);
    const yamlFile = writeConfig({}, 'config.yaml');
    writeFileSync(yamlFile, 'http:\n  port: 1\nhttp:\n  port: 2\n');
    expect(errorOf(() => loadConfig(base({ argv: ['--config', yamlFile] })))).toContain('Map keys must be unique');
  });

  it('freezes DEFAULT_CONFIG', () => {
    expect(Object.isFrozen(DEFAULT_CONFIG)).toBe(true);
    expect(Object.isFrozen(DEFAULT_CONFIG.http)).toBe(true);
  });
});
