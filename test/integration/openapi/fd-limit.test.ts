import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { connectStdioProcess, textOf } from '../../helpers/mcp';
import { bin } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean };

describe('openapi-mcp-server at its file descriptor limit', () => {
  let upstream: http.Server;
  let baseUrl: string;
  beforeAll(async () => {
    // Each answer waits a little, so that the calls' connections are open at once.
    upstream = http.createServer((_req, res) => setTimeout(() => res.end('{"ok":true}'), 300));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())));

  it('names the limit in the calls it has no connection for, and calls again once connections are free', async () => {
    const spec = path.join(tempDir('mcpvisor-fd-limit-'), 'spec.json');
    writeFileSync(spec, JSON.stringify({ openapi: '3.0.0', info: { title: 't', version: '1' }, paths: { '/x': { get: { operationId: 'getX', responses: { 200: { description: 'ok' } } } } } }));
    // prlimit on the server alone: 30 descriptors leave the api worker room for a few connections.
    const connection = await connectStdioProcess(
      'prlimit',
      ['--nofile=30:30', process.execPath, bin('openapi-mcp-server'), '--api-base-url', baseUrl, '--openapi-spec', spec, '--spec-cache', 'off'],
      process.env as Record<string, string>,
    );
    try {
      const call = () => connection.client.callTool({ name: 'get-x', arguments: {} }) as Promise<Result>;
      const results = await Promise.all(Array.from({ length: 30 }, call));
      const failed = results.filter((result) => result.isError);
      expect(failed.length).toBeGreaterThan(0);
      for (const result of failed) {
        expect(textOf(result)).toMatch(/^NETWORK_ERROR: network error calling GET .*: too many open files \(EMFILE\): process \d+ reached its limit of 30 open file descriptors \(RLIMIT_NOFILE/);
      }
      expect(textOf(await call())).toContain('"ok": true');
    } finally {
      await connection.close();
    }
  }, 60_000);
});
