import { execFileSync } from 'node:child_process';
import { closeSync, openSync, ftruncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { spawnBin, type Spawned } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

// What the operator hands the server at its start (flags, the config file), wrong or hostile:
// each is refused with exit code 2 and one line naming it, before any pool starts.

// config/load.ts's cap, written out so that this file also runs against code without it.
const MAX_CONFIG_BYTES = 200 * 1024 * 1024;
const running: Spawned[] = [];
afterEach(async () => {
  // A start that hung (the defect) is stopped, not left running into the next test.
  await Promise.all(running.splice(0).map((server) => server.stop(1000)));
});

function start(args: string[]): Spawned {
  const server = spawnBin('mcpvisor', args);
  running.push(server);
  return server;
}

async function refused(args: string[]): Promise<string> {
  const server = start(args);
  expect(await server.exited).toBe(2);
  expect(server.stderr()).not.toContain('"level"');
  return server.stderr();
}

describe('a config file that is not a regular file', () => {
  it('refuses a FIFO at once instead of waiting for a writer forever', async () => {
    const fifo = path.join(tempDir('mcpvisor-fifo-'), 'config.yaml');
    execFileSync('mkfifo', [fifo]);
    expect(await refused(['--config', fifo])).toBe(`mcpvisor: config file ${fifo} is a FIFO (named pipe), not a regular file\n`);
  });

  it('refuses a device (/dev/zero was read until the process held gigabytes)', async () => {
    // /dev/null, whose reading ends: the old reader took it as an empty file and started on the defaults.
    expect(await refused(['--config', '/dev/null'])).toBe('mcpvisor: config file /dev/null is a character device, not a regular file\n');
  });

  it('refuses one larger than the cap by its size, without reading it (a 2 GB sparse file took 2 GB)', async () => {
    const file = path.join(tempDir('mcpvisor-sparse-'), 'config.json');
    const fd = openSync(file, 'w');
    ftruncateSync(fd, MAX_CONFIG_BYTES + 1);
    closeSync(fd);
    expect(await refused(['--config', file])).toBe(`mcpvisor: config file ${file} is larger than ${MAX_CONFIG_BYTES} bytes (${MAX_CONFIG_BYTES + 1})\n`);
  });
});

describe('settings the server could not honour', () => {
  it('refuses an empty --config instead of starting on the defaults', async () => {
    expect(await refused(['--config', ''])).toBe('mcpvisor: --config: expected a file path, got an empty value\n');
    expect(await refused(['--config='])).toBe('mcpvisor: --config: expected a file path, got an empty value\n');
  });

  it('refuses a __proto__ section of a config file as an unknown key, as it does one inside a section', async () => {
    const dir = tempDir('mcpvisor-proto-');
    const json = path.join(dir, 'config.json');
    writeFileSync(json, '{"__proto__": {"transport": "http"}, "shell": {"enabled": false}, "web": {"enabled": false}}');
    expect(await refused(['--config', json])).toBe(`mcpvisor: Invalid configuration:\n  - __proto__ in ${json}: unknown key\n`);
    const yaml = path.join(dir, 'config.yaml');
    writeFileSync(yaml, '__proto__:\n  transport: http\n');
    expect(await refused(['--config', yaml])).toBe(`mcpvisor: Invalid configuration:\n  - __proto__ in ${yaml}: unknown key\n`);
  });

  it('refuses a duration past the longest timer Node keeps: such a call timeout timed every call out at once', async () => {
    const config = fixtureConfig({ thread: false, process: { callTimeoutMs: 3_000_000_000 }, root: { http: { shutdownGraceMs: 2 ** 31 } } });
    const file = writeConfig(config);
    const stderr = await refused(['--config', file]);
    expect(stderr).toContain(`  - http.shutdownGraceMs in ${file}: at most 2147483647 ms (about 24.8 days), the longest timer Node.js keeps (got 2147483648)\n`);
    expect(stderr).toContain(`  - customToolsets[0].callTimeoutMs in ${file}: at most 2147483647 ms (about 24.8 days), the longest timer Node.js keeps (got 3000000000)\n`);
  });

  it("names a custom toolset's module that is missing or a directory, instead of the worker's stack trace", async () => {
    const dir = tempDir('mcpvisor-module-');
    const missing = path.join(dir, 'nope.js');
    const config = (module: string, kind: string) => writeConfig({ shell: { enabled: false }, web: { enabled: false }, customToolsets: [{ name: 'mine', module, kind }] });
    const first = config(missing, 'process');
    expect(await refused(['--config', first])).toBe(`mcpvisor: customToolsets[0].module in ${first}: ${missing} cannot be read (ENOENT)\n`);
    const second = config(dir, 'thread');
    expect(await refused(['--config', second])).toBe(`mcpvisor: customToolsets[0].module in ${second}: ${dir} is not a file\n`);
  });

  it('refuses an endpoint path that would hide /health or another path of the server', async () => {
    for (const taken of ['/health', '/', '/sse/', '/message/x']) {
      const stderr = await refused(['--transport', 'http', '--port', '0', '--path', taken, '--config', writeConfig(fixtureConfig({ thread: false }))]);
      expect(stderr).toContain(`  - --path (http.endpointPath): endpointPath may not be one of the server's other paths (/, /sse, /message, /health, /metrics, /message/...) (got "${taken}")`);
    }
  });
});

describe('an address the server cannot listen on', () => {
  it('names the host and the port it was given (a mistyped host said only "getaddrinfo ENOTFOUND")', async () => {
    // A host other than loopback needs a token before anything else is tried.
    const server = spawnBin('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false })), '--transport', 'http', '--host', 'no-such-host.invalid', '--port', '0'], { MCPVISOR_AUTH_TOKEN: 'a-token-for-this-test-only-0123456789' });
    running.push(server);
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toMatch(/mcpvisor: failed to start: cannot listen on host "no-such-host\.invalid", port 0 \(http\.host, http\.port\): getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid\n/);
  });
});
