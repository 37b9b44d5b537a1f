import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startUpstream, type Upstream } from '../fixtures/openapi/upstream';

export interface FlakyApi {
  upstream: Upstream;
  /** URL of Petstore's description, answered 503 until `up()`. */
  spec: string;
  /** From now on the description is served: an optional API's next retry starts it. */
  up(): void;
  close(): Promise<void>;
}

/**
 * An API whose description host is down (503) until `up()`: configured with `affectsHealth:
 * false`, it is left out at the start and comes in at a later retry, with tools/list_changed.
 */
export async function flakyApi(): Promise<FlakyApi> {
  const upstream = await startUpstream();
  const petstore = readFileSync(path.join(__dirname, '..', 'fixtures', 'openapi', 'petstore-3.0.yaml'), 'utf8');
  let down = true;
  const host = createServer((_req, res) => (down ? res.writeHead(503).end('down') : res.writeHead(200, { 'content-type': 'application/yaml' }).end(petstore)));
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  return {
    upstream,
    spec: `http://127.0.0.1:${(host.address() as AddressInfo).port}/openapi.yaml`,
    up: () => {
      down = false;
    },
    close: async () => {
      await new Promise<void>((resolve) => host.close(() => resolve()));
      await upstream.close();
    },
  };
}
