import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { WorkerLogger } from '../../../protocol/worker-runtime';
import { ApiToolService, type ApiServiceOptions } from '../../../workers/openapi/service';
import { fileKey, MAX_ARTIFACTS, specCacheDir } from '../../../workers/openapi/spec-cache';
import { startUpstream, type Recorded, type Upstream } from '../../fixtures/openapi/upstream';
import { rejection } from '../../helpers/rejection';

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'openapi');

let upstream: Upstream;
let tmp: string;
let n = 0;
beforeAll(async () => {
  upstream = await startUpstream();
  tmp = mkdtempSync(path.join(tmpdir(), 'mcpvisor-spec-cache-'));
});
afterAll(async () => {
  await upstream.close();
  rmSync(tmp, { recursive: true, force: true });
});

interface Entry {
  level: string;
  msg: string;
  fields?: Record<string, unknown>;
}

/** A copy of a fixture in its own folder, with a cache directory next to it. */
function fresh(fixture: string): { file: string; cache: string; text: string } {
  const dir = path.join(tmp, `case-${++n}`);
  mkdirSync(dir);
  const file = path.join(dir, path.basename(fixture));
  cpSync(path.join(FIXTURES, fixture), file);
  return { file, cache: path.join(dir, 'cache'), text: readFileSync(file, 'utf8') };
}

async function start(options: Partial<ApiServiceOptions>) {
  const entries: Entry[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void entries.push({ level, msg, fields });
  const log: WorkerLogger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  const s = await ApiToolService.create({ apiBaseUrl: `${upstream.url}/v1`, specInputMethod: 'file', ...options }, log);
  return {
    s,
    entries,
    /** hit, miss, off or uncached, from the `api tools ready` line. */
    cache: () => entries.find((e) => e.msg === 'api tools ready')?.fields?.specCache,
    warnings: () => entries.filter((e) => e.level === 'warn').map((e) => e.msg),
    logged: (msg: string | RegExp) => entries.filter((e) => (typeof msg === 'string' ? e.msg === msg : msg.test(e.msg))).length,
  };
}

function artifacts(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.endsWith('.json'));
}

/** What the upstream saw, with a multipart boundary (random per request) made constant. */
function normalised(r: Recorded): Recorded {
  const boundary = /boundary=([^;\s]+)/.exec(String(r.headers['content-type'] ?? ''))?.[1];
  const fix = (text: string) => (boundary ? text.split(boundary).join('BOUNDARY') : text);
  return { method: r.method, url: r.url, headers: Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, fix(String(v))])), body: fix(r.body) };
}

async function requests(s: ApiToolService, calls: Array<[string, Record<string, unknown>]>): Promise<Recorded[]> {
  const before = upstream.requests.length;
  for (const [name, args] of calls) await s.handle(name, args);
  return upstream.requests.slice(before).map(normalised);
}

const CALLS: Record<string, Array<[string, Record<string, unknown>]>> = {
  'collisions.yaml': [
    ['upd-item', { id: 'a/b', query_id: 'q', header_id: 'h', filter_name_: 'f', body_id: 3, label: 'L' }],
    ['replace-items', { body: ['x', 'y'] }],
    ['set-count', { body: 12 }],
    ['send-form', { a: 'x&y', b: 2 }],
    ['send-file', { name: 'n1', file: Buffer.from('file body').toString('base64') }],
  ],
  'petstore-3.0.yaml': [
    ['lst-pets', { limit: 2 }],
    ['show-pet-by-id', { petId: 'a b' }],
    ['invoke-api-endpoint', { toolId: 'GET::store__inventory', parameters: {} }],
  ],
};

describe('spec cache', () => {
  test.each(Object.keys(CALLS))('a second start on unchanged %s is a hit with the same tools, stats, warnings and requests', async (fixture) => {
    const { file, cache } = fresh(fixture);
    const cold = await start({ openApiSpec: file, specCache: cache });
    expect(cold.cache()).toBe('miss');
    expect(cold.logged('spec loaded')).toBe(1);
    const coldSent = await requests(cold.s, CALLS[fixture]);
    await cold.s.close();
    expect(artifacts(cache)).toHaveLength(1);
    expect(readdirSync(cache).sort()).toEqual([artifacts(cache)[0], artifacts(cache)[0].replace(/json$/, 'data')].sort());
    expect(statSync(cache).mode & 0o777).toBe(0o700);
    for (const name of readdirSync(cache)) expect(statSync(path.join(cache, name)).mode & 0o777).toBe(0o600);
    // The data is ASCII: V8 holds it at one byte a character.
    expect(/[^\x00-\x7f]/.test(readFileSync(path.join(cache, artifacts(cache)[0].replace(/json$/, 'data')), 'latin1'))).toBe(false);

    const hit = await start({ openApiSpec: file, specCache: cache });
    expect(hit.cache()).toBe('hit');
    expect(hit.logged('spec cache hit')).toBe(1);
    expect(hit.logged('spec loaded')).toBe(0);
    expect(hit.s.tools).toEqual(cold.s.tools);
    // The worker's announcement: the same descriptors, as text.
    expect(hit.s.toolTexts()).toEqual(cold.s.toolTexts());
    expect(JSON.parse(`[${hit.s.toolTexts().text}]`)).toEqual(cold.s.tools);
    expect(hit.s.getStats()).toEqual(cold.s.getStats());
    expect(hit.warnings()).toEqual(cold.warnings());
    expect(await requests(hit.s, CALLS[fixture])).toEqual(coldSent);
    expect(coldSent.length).toBe(CALLS[fixture].length);
    await hit.s.close();
  });

  test('filters and modes apply to cached tools as to parsed ones', async () => {
    const { file, cache } = fresh('petstore-3.0.yaml');
    await (await start({ openApiSpec: file, specCache: cache })).s.close();
    const filter = { includeTags: ['pets', 'Nope'], includeOperations: ['GET' as const] };
    const hit = await start({ openApiSpec: file, specCache: cache, ...filter });
    const parsed = await start({ openApiSpec: file, specCache: false, ...filter });
    expect(hit.cache()).toBe('hit');
    expect(parsed.cache()).toBe('off');
    expect(hit.s.tools).toEqual(parsed.s.tools);
    expect(hit.s.toolTexts()).toEqual(parsed.s.toolTexts());
    expect(hit.s.getStats()).toEqual(parsed.s.getStats());
    expect(hit.warnings()).toEqual(parsed.warnings());
    expect(hit.warnings()).toContain("no operations for tag 'Nope'");
    await Promise.all([hit.s.close(), parsed.s.close()]);
  });

  test('a touched file, disableAbbreviation or a namespace is a miss with its own artifact', async () => {
    const { file, cache } = fresh('petstore-3.0.yaml');
    await (await start({ openApiSpec: file, specCache: cache })).s.close();
    const later = new Date(Date.now() + 60_000);
    utimesSync(file, later, later);
    for (const options of [{}, { disableAbbreviation: true }, { namespace: 'ns' }]) {
      const again = await start({ openApiSpec: file, specCache: cache, ...options });
      expect(again.cache()).toBe('miss');
      await again.s.close();
    }
    expect(artifacts(cache)).toHaveLength(4);
    const hit = await start({ openApiSpec: file, specCache: cache, namespace: 'ns' });
    expect(hit.cache()).toBe('hit');
    await hit.s.close();
  });

  test('a corrupt, truncated, edited, foreign or other-version artifact is ignored and rewritten', async () => {
    const { file, cache } = fresh('collisions.yaml');
    await (await start({ openApiSpec: file, specCache: cache })).s.close();
    const artifact = path.join(cache, artifacts(cache)[0]);
    const dataFile = artifact.replace(/json$/, 'data');
    const good = readFileSync(artifact, 'utf8');
    const goodData = readFileSync(dataFile, 'latin1');
    // The index's first line is `<sha256 of the rest and of the data> <data length>`.
    const indexOf = (text: string) => JSON.parse(text.slice(text.indexOf('\n') + 1));
    const sealed = (body: string) => `${createHash('sha256').update(body).update(goodData, 'latin1').digest('hex')} ${goodData.length}\n${body}`;
    const stored = indexOf(good);
    const body = good.slice(good.indexOf('\n') + 1);
    // Each build has its own token; the rest is the same.
    const withoutToken = (index: { api: Record<string, unknown> }) => ({ ...index, api: { ...index.api, token: undefined } });
    const damages: Record<string, string> = {
      'not JSON': 'garbage{',
      truncated: good.slice(0, good.length >> 1),
      'one byte changed': good.replace('"toolId":"', '"toolId":"X'),
      'another document': sealed('{"hello":"world"}'),
      'another format': sealed(JSON.stringify({ ...stored, api: { ...stored.api, format: 99 } })),
      'another package version': sealed(JSON.stringify({ ...stored, api: { ...stored.api, packageVersion: '0.0.0-other' } })),
      'another key': sealed(JSON.stringify({ ...stored, key: 'f'.repeat(64) })),
      'tools of another shape': sealed(JSON.stringify({ ...stored, api: { ...stored.api, tools: [{ name: 'x' }] } })),
      'offsets past the data': sealed(JSON.stringify({ ...stored, api: { ...stored.api, tools: stored.api.tools.map((t: { call: number[] }) => ({ ...t, call: [t.call[0], goodData.length + 1] })) } })),
    };
    expect(sealed(body)).toBe(good);
    const dataDamages: Record<string, string> = {
      'data of another build': `${'0'.repeat(16)}${goodData.slice(16)}`,
      'truncated data': goodData.slice(0, goodData.length >> 1),
      'data grown': `${goodData}${' '.repeat(1000)}`,
      // Same length, other paths: calls would have gone to /uzers.
      'a same-length edit of the data': goodData.replace(/\/users/g, '/uzers'),
    };
    const cases = [
      ...Object.entries(damages).map(([damage, text]) => [damage, artifact, text]),
      ...Object.entries(dataDamages).map(([damage, text]) => [damage, dataFile, text]),
    ];
    for (const [damage, target, text] of cases) {
      writeFileSync(target, text, 'latin1');
      const rebuilt = await start({ openApiSpec: file, specCache: cache });
      expect([damage, rebuilt.cache()]).toEqual([damage, 'miss']);
      expect(rebuilt.logged(/^spec cache: artifact .*rebuilding$/)).toBe(1);
      await rebuilt.s.close();
      const rewritten = indexOf(readFileSync(artifact, 'utf8'));
      expect(withoutToken(rewritten)).toEqual(withoutToken(stored));
      expect(readFileSync(dataFile, 'latin1').startsWith(`${rewritten.api.token}\n`)).toBe(true);
    }
    rmSync(dataFile);
    const missing = await start({ openApiSpec: file, specCache: cache });
    expect(missing.cache()).toBe('miss');
    expect(missing.logged('spec cache miss')).toBe(1);
    await missing.s.close();
    const hit = await start({ openApiSpec: file, specCache: cache });
    expect(hit.cache()).toBe('hit');
    await hit.s.close();
  });

  test('specCache false reads and writes nothing; the default is under XDG_CACHE_HOME', async () => {
    const { file } = fresh('petstore-3.0.yaml');
    const xdg = path.join(tmp, `xdg-${++n}`);
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = xdg;
    try {
      const off = await start({ openApiSpec: file, specCache: false });
      await off.s.close();
      expect(off.cache()).toBe('off');
      expect(off.logged(/spec cache/)).toBe(0);
      expect(() => readdirSync(xdg)).toThrow(/ENOENT/);
      const byDefault = await start({ openApiSpec: file });
      await byDefault.s.close();
      expect(byDefault.cache()).toBe('miss');
      expect(artifacts(path.join(xdg, 'mcpvisor', 'openapi'))).toHaveLength(1);
    } finally {
      if (saved === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = saved;
    }
  });

  test('specCacheDir: a path as given, none for false, else XDG_CACHE_HOME (absolute only) or ~/.cache', () => {
    expect(specCacheDir('rel/dir', {})).toBe(path.resolve('rel/dir'));
    expect(specCacheDir(false, { XDG_CACHE_HOME: '/x' })).toBeUndefined();
    expect(specCacheDir(undefined, { XDG_CACHE_HOME: '/x' })).toBe('/x/mcpvisor/openapi');
    expect(specCacheDir(undefined, { XDG_CACHE_HOME: 'relative' })).toBe(path.join(homedir(), '.cache', 'mcpvisor', 'openapi'));
    expect(specCacheDir(undefined, {})).toBe(path.join(homedir(), '.cache', 'mcpvisor', 'openapi'));
  });

  const SOURCES: Record<string, (text: string, file: string) => Partial<ApiServiceOptions>> = {
    file: (_text, file) => ({ openApiSpec: file }),
    inline: (text) => ({ specInputMethod: 'inline', openApiSpec: text }),
    stdin: (text) => ({ specInputMethod: 'stdin', stdin: Readable.from([Buffer.from(text)]) }),
  };
  test.each(Object.keys(SOURCES))('get-api-endpoint-schema works on a hit (%s source), loading the description once', async (kind) => {
    const { file, cache, text } = fresh('petstore-3.0.yaml');
    const ask = { toolId: 'GET::pets__---petId' };
    const cold = await start({ ...SOURCES[kind](text, file), specCache: cache });
    const expected = (await cold.s.handle('get-api-endpoint-schema', ask)).structuredContent as Record<string, any>;
    await cold.s.close();
    const hit = await start({ ...SOURCES[kind](text, file), specCache: cache });
    expect(hit.cache()).toBe('hit');
    expect(hit.logged('description loaded for get-api-endpoint-schema')).toBe(0);
    const first = await hit.s.handle('get-api-endpoint-schema', ask);
    expect(first.structuredContent).toEqual(expected);
    expect(expected.responses['200'].schema.properties.name).toEqual({ type: 'string' });
    expect((await hit.s.handle('get-api-endpoint-schema', { toolId: 'del-pet' })).isError).toBeUndefined();
    expect(hit.logged('description loaded for get-api-endpoint-schema')).toBe(1);
    await hit.s.close();
  });

  test('a cache directory that cannot be created still starts, with a warning', async () => {
    const { file } = fresh('petstore-3.0.yaml');
    const blocker = path.join(tmp, `blocker-${++n}`);
    writeFileSync(blocker, 'a regular file');
    const started = await start({ openApiSpec: file, specCache: path.join(blocker, 'cache') });
    expect(started.s.tools.length).toBe(8);
    await started.s.close();
    expect(started.warnings()).toEqual(expect.arrayContaining([expect.stringMatching(/^spec cache not written to .*blocker-\d+\/cache: ENOTDIR; the next start parses the description again \(give the server's user a cache directory it can write: specCache in the config, --spec-cache <dir> or XDG_CACHE_HOME; or turn the cache off: --spec-cache off\)$/)]));
  });

  test('leaves no data file behind when its index cannot be written (a full disk held that space)', async () => {
    const { file, cache } = fresh('petstore-3.0.yaml');
    const key = (await fileKey(file, { disableAbbreviation: false, maxNameLength: 64 }))!;
    // A directory where the index goes: its rename fails after the data's has succeeded.
    mkdirSync(path.join(cache, `${key}.json`), { recursive: true, mode: 0o700 });
    const started = await start({ openApiSpec: file, specCache: cache });
    await started.s.close();
    expect(started.warnings()).toEqual(expect.arrayContaining([expect.stringMatching(/^spec cache not written to /)]));
    expect(readdirSync(cache).sort()).toEqual([`${key}.json`]);
  });

  test(`keeps the ${MAX_ARTIFACTS} most recently used artifacts`, async () => {
    const { file, cache } = fresh('petstore-3.0.yaml');
    mkdirSync(cache, { mode: 0o700 });
    const old = Array.from({ length: MAX_ARTIFACTS + 5 }, (_, i) => {
      const name = `${i.toString(16).padStart(64, '0')}.json`;
      const when = new Date(Date.now() - (i + 1) * 60_000);
      for (const part of [name, name.replace(/json$/, 'data')]) {
        writeFileSync(path.join(cache, part), '{}');
        utimesSync(path.join(cache, part), when, when);
      }
      return name;
    });
    // Data without an index: a fresh one may be a writer between its two renames; a stale one is a crash's.
    const orphan = (name: string, ageMs: number) => {
      writeFileSync(path.join(cache, name), 'x');
      utimesSync(path.join(cache, name), new Date(Date.now() - ageMs), new Date(Date.now() - ageMs));
    };
    orphan(`${'e'.repeat(64)}.data`, 60_000);
    orphan(`${'f'.repeat(64)}.data`, 2 * 60 * 60_000);
    await (await start({ openApiSpec: file, specCache: cache })).s.close();
    const left = artifacts(cache);
    expect(left).toHaveLength(MAX_ARTIFACTS);
    expect(left).toEqual(expect.arrayContaining(old.slice(0, MAX_ARTIFACTS - 1)));
    expect(left.filter((name) => !old.includes(name))).toHaveLength(1);
    const data = readdirSync(cache).filter((name) => name.endsWith('.data'));
    expect(data.sort()).toEqual([...left.map((name) => name.replace(/json$/, 'data')), `${'e'.repeat(64)}.data`].sort());
  });

  test('a file deleted after a cached start fails as without a cache', async () => {
    const { file, cache } = fresh('petstore-3.0.yaml');
    await (await start({ openApiSpec: file, specCache: cache })).s.close();
    rmSync(file);
    const error = await rejection(start({ openApiSpec: file, specCache: cache }));
    expect(error).toMatchObject({ code: 'NOT_FOUND', message: `OpenAPI spec file not found: ${file}` });
  });

  test('a description with external $refs is not cached', async () => {
    const dir = path.join(tmp, `external-${++n}`);
    cpSync(path.join(FIXTURES, 'external'), dir, { recursive: true });
    const cache = path.join(dir, 'cache');
    const first = await start({ openApiSpec: path.join(dir, 'main.yaml'), specCache: cache });
    await first.s.close();
    expect(first.cache()).toBe('uncached');
    expect(existsSync(cache)).toBe(false);
  });

  test('nor one whose external documents could not be loaded: there next time, they give the tools they were missing', async () => {
    const dir = path.join(tmp, `external-${++n}`);
    cpSync(path.join(FIXTURES, 'external'), dir, { recursive: true });
    const cache = path.join(dir, 'cache');
    // The only external document, so none is loaded: the file key alone would call it unchanged.
    const main = path.join(dir, 'main.json');
    writeFileSync(main, JSON.stringify({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths: { '/x': { post: { requestBody: { content: { 'application/json': { schema: { $ref: './later.json#/X' } } } }, responses: { 200: { description: 'ok' } } } } } }));
    const first = await start({ openApiSpec: main, specCache: cache, toolsMode: 'all' });
    await first.s.close();
    expect(first.cache()).toBe('uncached');
    expect(first.s.getStats().tools.endpointTools).toBe(0);
    expect(existsSync(cache)).toBe(false);
    writeFileSync(path.join(dir, 'later.json'), JSON.stringify({ X: { type: 'object', properties: { a: { type: 'string' } } } }));
    const second = await start({ openApiSpec: main, specCache: cache, toolsMode: 'all' });
    await second.s.close();
    expect(second.s.getStats().tools.endpointTools).toBe(1);
  });
});
