/**
 * Large JSON responses: an endpoint tool called in this process (ApiToolService, as an api worker
 * runs it) against a local upstream answering 8 MB bodies of several shapes, next to the least
 * any server does with such a body in the same process (JSON.parse, then JSON.stringify indented:
 * the text and structuredContent a result carries). Prints each shape's time and its ratio to
 * that floor; target <= 8 for every shape. Found this way: the worker's processes run V8 with
 * `--enable-experimental-regexp-engine-on-excessive-backtracks` (untrusted `pattern`s), which also
 * moved an ordinary `/\d{16}/` scan of the body to the slow linear engine: 8 MB of numbers took
 * 3.4 s, 45x the floor.
 *   npm run build && npx tsx bench/openapi/large-response.ts [rounds, default 3]
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

const MB = 1024 * 1024;
const SIZE = 8 * MB;
const ITEM = JSON.stringify({ id: 123456, name: 'some name here', tags: ['a', 'b'], nested: { x: 1.5, y: null } });

const SHAPES: Record<string, string> = {
  'objects (records with ids)': `[${Array(Math.floor(SIZE / (ITEM.length + 1))).fill(ITEM).join(',')}]`,
  'numbers (7 digits each)': `[${Array(Math.floor(SIZE / 8)).fill('1234567').join(',')}]`,
  'digit runs of 15 in a string': JSON.stringify({ s: '123456789012345 '.repeat(SIZE / 16) }),
  'one long string': JSON.stringify({ s: 'x'.repeat(SIZE) }),
};

const SPEC = { openapi: '3.0.0', info: { title: 'large', version: '1' }, paths: { '/body': { get: { operationId: 'getBody', parameters: [{ name: 'shape', in: 'query', schema: { type: 'string' } }], responses: { 200: { description: 'ok' } } } } } };

function floor(body: string): number {
  const started = performance.now();
  JSON.stringify(JSON.parse(body), null, 2);
  return performance.now() - started;
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3);
  const names = Object.keys(SHAPES);
  const server = http.createServer((req, res) => {
    const shape = names[Number(new URL(req.url ?? '/', 'http://x').searchParams.get('shape'))];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(SHAPES[shape]);
  });
  // The client and this server share one event loop: a long call must not outlast the server's idle timeout.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dir = mkdtempSync(path.join(tmpdir(), 'large-response-'));
  const spec = path.join(dir, 'spec.json');
  writeFileSync(spec, JSON.stringify(SPEC));
  // The built worker code, so that its module sets V8's flags as an api worker does.
  const { ApiToolService } = (await import(path.join(__dirname, '..', '..', 'dist', 'workers', 'openapi', 'service.js'))) as typeof import('../../workers/openapi/service');
  const noop = () => undefined;
  const service = await ApiToolService.create({ apiBaseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, openApiSpec: spec, specCache: false }, { debug: noop, info: noop, warn: noop, error: noop });
  const tool = service.tools.find((t) => !['list-api-endpoints', 'get-api-endpoint-schema', 'invoke-api-endpoint'].includes(t.name))!.name;
  let worst = 0;
  try {
    for (const [index, name] of names.entries()) {
      let call = Infinity;
      let least = Infinity;
      for (let round = 0; round < rounds; round++) {
        const started = performance.now();
        const result = await service.handle(tool, { shape: String(index) });
        call = Math.min(call, performance.now() - started);
        if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content).slice(0, 300)}`);
        least = Math.min(least, floor(SHAPES[name]));
      }
      worst = Math.max(worst, call / least);
      console.log(`${name}: ${(SHAPES[name].length / MB).toFixed(1)} MB, the call ${call.toFixed(0)} ms, parse + indent alone ${least.toFixed(0)} ms: ${(call / least).toFixed(2)}x`);
    }
  } finally {
    await service.close();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`worst shape: ${worst.toFixed(2)}x the floor (target <= 8)`);
}

void main();
