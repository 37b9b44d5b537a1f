/**
 * Inputs a client, an upstream or a description controls, at two sizes, n and 8n, through the
 * api worker's code in this process: the larger one's time over 8 times the smaller's. 1 means
 * linear; a cost that grows with the square of the input shows ~8. Shapes: arguments refused for
 * an array whose items each fit none of an `anyOf` (the error sorting the supervisor's check
 * shares, protocol/schema-errors.ts); HTML error pages an endpoint tool quotes as text
 * (html-text.ts): `<` without `>`, `<p` without `>`, `<title>` without a closing tag, an
 * ordinary page; starts with an includeTools or includeResources list as long as the
 * description's operations (tools-manager.ts), and with operations all named alike
 * (tool-name.ts); get-api-endpoint-schema's `at` of n names, through a schema whose property
 * names hold dots (`a` and `a.a`: schema-view.ts); invoke-api-endpoint's toolId of `/` and n `{`
 * (tool-id.ts). Each time is the best of `rounds`. Target: <= 2 for every shape. Found this way:
 * 8,000 refused items took 57 s (a list of one schema path per error, searched per error),
 * 256 KB of `<p` about a minute (a regexp read to the end of the page from each `<`), 8,000
 * includeTools entries over 8,000 operations 4 s more than no filter (each entry searched every
 * tool), 8,000 operations named alike 11.7 s (each tried every suffix its namesakes took), an
 * `at` of 28 names through `a` and `a.a` 9 s (every way to split the path was walked), a toolId
 * of `/` and 32,000 `{` 1.1 s a call (each `{` read to the end).
 *   npm run build && npx tsx bench/openapi/scaling.ts [rounds, default 3]
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

const DIST = path.join(__dirname, '..', '..', 'dist', 'workers', 'openapi');

const PAGES: Record<string, { n: number; page: (n: number) => string }> = {
  "HTML error page: '<' without '>'": { n: 4_000, page: (n) => `<html>${'<'.repeat(n)}` },
  "HTML error page: '<p' without '>'": { n: 4_000, page: (n) => `<html>${'<p'.repeat(n)}` },
  "HTML error page: '<title>' without '</title>'": { n: 2_000, page: (n) => `<html>${'<title>'.repeat(n)}` },
  'HTML error page: ordinary markup': { n: 500, page: (n) => `<html><head><title>Error</title></head><body>${'<div class="a">text &amp; more</div>\n'.repeat(n)}</body></html>` },
};
const REFUSED_ITEMS = 500;
const FILTERED_OPERATIONS = 2_000;
const AT_NAMES = 3;
const TOOL_ID_BRACES = 4_000;
const SPEC = { openapi: '3.0.0', info: { title: 'scaling', version: '1' }, paths: { '/page': { get: { operationId: 'getPage', parameters: [{ name: 'shape', in: 'query', schema: { type: 'string' } }, { name: 'n', in: 'query', schema: { type: 'string' } }], responses: { 200: { description: 'ok' } } } } } };

async function best(rounds: number, run: () => Promise<unknown> | unknown): Promise<number> {
  let fastest = Infinity;
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    await run();
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3);
  const names = Object.keys(PAGES);
  const server = http.createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    res.writeHead(500, { 'content-type': 'text/html' });
    res.end(PAGES[names[Number(query.get('shape'))]].page(Number(query.get('n'))));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dir = mkdtempSync(path.join(tmpdir(), 'scaling-'));
  const spec = path.join(dir, 'spec.json');
  writeFileSync(spec, JSON.stringify(SPEC));
  // The built worker code, so that its modules set V8's flags as an api worker's do.
  const { ApiToolService } = (await import(path.join(DIST, 'service.js'))) as typeof import('../../workers/openapi/service');
  const { ArgumentValidator } = (await import(path.join(DIST, 'validate-args.js'))) as typeof import('../../workers/openapi/validate-args');
  const service = await ApiToolService.create({ apiBaseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, openApiSpec: spec, specCache: false });
  const tool = service.tools.find((t) => t.name !== 'list-api-endpoints' && t.name !== 'get-api-endpoint-schema' && t.name !== 'invoke-api-endpoint')!.name;
  const shapes: Array<{ name: string; n: number; run: (n: number) => Promise<unknown> | unknown }> = names.map((name, index) => ({
    name,
    n: PAGES[name].n,
    run: async (n: number) => {
      const result = await service.handle(tool, { shape: String(index), n: String(n) });
      if (!result.isError) throw new Error(`${name}: not refused`);
    },
  }));
  // `sameName`: no operationIds, one summary for all, so every tool is named alike.
  const specOf = (n: number, sameName = false) => {
    const file = path.join(dir, `ops-${n}-${sameName}.json`);
    const operation = (i: number) => ({ ...(sameName ? { summary: 'Get a thing' } : { operationId: `op${i}` }), parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'ok' } } });
    const paths = Object.fromEntries(Array.from({ length: n }, (_, i) => [`/things${i}/{id}`, { get: operation(i) }]));
    writeFileSync(file, JSON.stringify({ openapi: '3.0.0', info: { title: 'ops', version: '1' }, paths }));
    return file;
  };
  const filters: Record<string, (n: number) => Record<string, string[]>> = {
    // Half of them match no operation (each is warned about).
    'start: includeTools as long as the operations': (n) => ({ includeTools: Array.from({ length: n }, (_, i) => (i % 2 ? `GET::things${i}__---id` : `nothing${i}`)) }),
    'start: includeResources as long as the operations': (n) => ({ includeResources: Array.from({ length: n }, (_, i) => `/things${i}`) }),
  };
  for (const [name, filter] of Object.entries(filters)) {
    shapes.push({
      name,
      n: FILTERED_OPERATIONS,
      run: async (n: number) => {
        const started = await ApiToolService.create({ apiBaseUrl: 'http://127.0.0.1:9', openApiSpec: specOf(n), specCache: false, ...filter(n) });
        await started.close();
      },
    });
  }
  shapes.push({
    name: 'start: operations all named alike',
    n: FILTERED_OPERATIONS,
    run: async (n: number) => {
      const started = await ApiToolService.create({ apiBaseUrl: 'http://127.0.0.1:9', openApiSpec: specOf(n, true), specCache: false });
      await started.close();
    },
  });
  shapes.push({
    name: "invoke-api-endpoint: a toolId of '/' and n '{'",
    n: TOOL_ID_BRACES,
    run: async (n: number) => {
      const result = await service.handle('invoke-api-endpoint', { toolId: `/${'{'.repeat(n)}` });
      if (!result.isError) throw new Error('not refused');
    },
  });
  const nodes = path.join(dir, 'nodes.json');
  const node = { $ref: '#/components/schemas/Node' };
  writeFileSync(nodes, JSON.stringify({ openapi: '3.0.0', info: { title: 'nodes', version: '1' }, paths: { '/nodes': { get: { operationId: 'getNode', responses: { 200: { description: 'ok', content: { 'application/json': { schema: node } } } } } } }, components: { schemas: { Node: { type: 'object', properties: { a: node, 'a.a': node } } } } }));
  const schemas = await ApiToolService.create({ apiBaseUrl: 'http://127.0.0.1:9', openApiSpec: nodes, specCache: false, toolsMode: 'dynamic' });
  shapes.push({
    name: "get-api-endpoint-schema: an 'at' of n names through 'a' and 'a.a'",
    n: AT_NAMES,
    run: async (n: number) => {
      // Refused (no `zz`) once every way to split the path has failed.
      await schemas.handle('get-api-endpoint-schema', { toolId: 'GET::nodes', response: '200', at: `${'a.'.repeat(n)}zz` }).then(
        () => Promise.reject(new Error('not refused')),
        () => undefined,
      );
    },
  });
  const schema = { type: 'object' as const, properties: { ids: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } } } };
  const validator = new ArgumentValidator();
  shapes.unshift({
    name: 'arguments refused: array items fitting no anyOf',
    n: REFUSED_ITEMS,
    run: (n: number) => {
      try {
        validator.check('ids', schema, { ids: Array(n).fill(true) });
      } catch {
        return;
      }
      throw new Error('not refused');
    },
  });
  let worst = 0;
  try {
    // Warm-up: the validator's compilation, the first connection to the upstream.
    for (const shape of shapes.slice(0, 2)) await shape.run(10);
    for (const shape of shapes) {
      const small = await best(rounds, () => shape.run(shape.n));
      const large = await best(rounds, () => shape.run(8 * shape.n));
      const ratio = large / (8 * small);
      worst = Math.max(worst, ratio);
      console.log(`${shape.name}: n=${shape.n} ${small.toFixed(1)} ms, 8n ${large.toFixed(1)} ms; 8n / (8 x n) = ${ratio.toFixed(2)}`);
    }
  } finally {
    await service.close();
    await schemas.close();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`worst shape: ${worst.toFixed(2)} (target <= 2)`);
}

void main();
