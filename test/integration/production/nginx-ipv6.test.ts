/**
 * The scale-out recipe of docs/production.md over IPv6: two mcpvisor instances on ::1 behind
 * nginx on ::1, its file rendered by deploy/render-nginx-conf.js with `upstreamHost: '::1'`.
 */
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectSse, textOf } from '../../helpers/mcp';
import { ROOT, spawnBin, type Spawned } from '../../helpers/processes';
import { freePort, startNginx, type Nginx } from './cluster';

/** Whether `port` can be bound on ::1 now. */
function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '::1', () => server.close(() => resolve(true)));
  });
}

/** A port P on ::1 with P + 1 free too (the renderer's layout: consecutive ports). */
async function twoFreePorts(): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const port = await freePort('::1');
    if (port < 65_535 && (await free(port + 1))) return port;
  }
  throw new Error('no two consecutive free ports on ::1 in 20 tries');
}

let basePort: number;
let instances: Spawned[] = [];
let nginx: Nginx;

beforeAll(async () => {
  basePort = await twoFreePorts();
  const config = writeConfig(fixtureConfig({ thread: false }));
  instances = [0, 1].map((i) => spawnBin('mcpvisor', ['--transport', 'http', '--host', '::1', '--port', String(basePort + i), '--config', config]));
  await Promise.all(instances.map((instance) => instance.waitForLog((line) => line.msg === 'listening')));
  nginx = await startNginx({ upstreamHost: '::1', instances: 2, basePort }, '::1');
}, 60_000);

afterAll(async () => {
  await nginx?.stop();
  await Promise.all(instances.map((instance) => instance.stop()));
});

describe('mcpvisor on ::1 behind nginx on ::1', () => {
  it('spreads sessions over both instances and keeps each session on its own', async () => {
    const tags = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const transport = new StreamableHTTPClientTransport(new URL(nginx.mcpUrl));
      const client = new Client({ name: 'ipv6-scale-out', version: '1' });
      await client.connect(transport);
      for (let call = 0; call < 3; call++) expect(textOf(await client.callTool({ name: 'echo', arguments: { text: `${i}.${call}` } }))).toBe(`${i}.${call}`);
      tags.add(transport.sessionId!.split('.', 1)[0]);
      await client.close();
    }
    expect([...tags].sort()).toEqual(['i1', 'i2']);
    // nginx writes an IPv6 upstream as [::1]:port: the tag maps were rendered to match it.
    expect(nginx.accessLog()).toContain(`upstream=[::1]:${basePort} `);
    expect(nginx.accessLog()).toContain(`upstream=[::1]:${basePort + 1} `);
  });

  it('routes a legacy SSE session by the tag in its endpoint event', async () => {
    const { client, transport } = await connectSse(nginx.origin);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'legacy' } }))).toBe('legacy');
    expect((transport as unknown as { _endpoint?: URL })._endpoint?.href).toMatch(/^http:\/\/\[::1\]:\d+\/message\?sessionId=i[12]\./);
    await client.close();
  });

  it('refuses to render an IPv6 upstream written without brackets, which nginx reads as a bad port', () => {
    const run = spawnSync(process.execPath, [path.join(ROOT, 'deploy', 'render-nginx-conf.js')], { env: { ...process.env, NGINX_UPSTREAMS: '::1:3000' }, encoding: 'utf8' });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('render-nginx-conf: upstream ::1:3000: write an IPv6 address in brackets, as in [::1]:3000');
  });
});
