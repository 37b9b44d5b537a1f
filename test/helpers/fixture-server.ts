import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

export interface FixtureServer {
  /** `http://127.0.0.1:<port>`: `<url>/split/openapi.yaml` is test/fixtures/openapi/split/openapi.yaml. */
  url: string;
  /** Paths asked for, in order. */
  requested: string[];
  close(): Promise<void>;
}

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'openapi');

/**
 * Serves test/fixtures/openapi over HTTP on 127.0.0.1 (a free port), so a description split over
 * several files can be loaded from URLs as well as from files. 404 for anything outside it.
 */
export async function serveFixtures(): Promise<FixtureServer> {
  const requested: string[] = [];
  const server = createServer((req, res) => {
    const asked = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    requested.push(asked);
    const file = path.join(FIXTURES, asked);
    if (!file.startsWith(`${FIXTURES}${path.sep}`)) {
      res.statusCode = 404;
      return res.end('no');
    }
    readFile(file).then(
      (data) => {
        res.setHeader('content-type', file.endsWith('.json') ? 'application/json' : 'application/yaml');
        res.end(data);
      },
      () => {
        res.statusCode = 404;
        res.end('no');
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requested,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
