import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { ERROR_META_KEY } from '../../../protocol/results';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { tempCacheEnv } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

/** 64 MiB of zeros, gzipped to ~64 KB, sent as gzip of that (~300 bytes). */
const BOMB = gzipSync(gzipSync(Buffer.alloc(64 * 1024 * 1024)));

/** Answers besides a plain JSON body, by operationId (each a GET of `/<id>` unless it says POST). */
const ROUTES: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  events: (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: first\n\n');
    const timer = setInterval(() => res.write('data: tick\n\n'), 50);
    res.on('close', () => clearInterval(timer));
  },
  // Headers, five bytes of a chunked body, then the connection ends: the API has acted.
  create: (req, _res) => {
    req.socket.end('HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"id"\r\n');
  },
  dated: (_req, res) => {
    res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': new Date(Date.now() + 3_600_000).toUTCString() });
    res.end('slow down');
  },
  seconds: (_req, res) => {
    res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '120' });
    res.end('maintenance');
  },
  accepted: (_req, res) => {
    res.writeHead(202, { 'content-type': 'application/json', location: '/jobs/1', 'retry-after': new Date(Date.now() + 600_000).toUTCString() });
    res.end('{"queued":true}');
  },
  exhausted: (_req, res) => {
    res.writeHead(403, { 'content-type': 'text/plain', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 600) });
    res.end('API rate limit exceeded');
  },
  lines: (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.end('{"n":1}\n{"n":2}\n');
  },
  badLines: (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.end('{"n":1}\n{"n":\n');
  },
  jsonAsHtml: (_req, res) => {
    res.writeHead(400, { 'content-type': 'text/html; charset=utf-8' });
    res.end('{"error":"expected <name> & <email>"}');
  },
  bigHeaders: (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'x-padding': 'a'.repeat(70_000) });
    res.end('ok');
  },
  bomb: (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip, gzip' });
    res.end(BOMB);
  },
  // A zip archive under a text label: its headers hold NUL bytes.
  archive: (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(Buffer.from('504b0304140000000800', 'hex'));
  },
  htmlJson: (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('{"id":7,"tags":["<b>"]}');
  },
  plainNotJson: (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('[INFO] started\n[INFO] done');
  },
  utf16Json: (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(Buffer.from('{"city":"Zürich"}', 'utf16le'));
  },
  octetJson: (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.end('{"name":"report.csv","rows":3}');
  },
  octetBytes: (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.end(Buffer.from([0x89, 0xff, 0x00, 0x10]));
  },
  // Answered 201 (acted on), then a body that is no gzip.
  createdGarbled: (_req, res) => {
    res.writeHead(201, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    res.end('{"id":1}');
  },
  zstd: (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'zstd' });
    res.end(Buffer.from('28b52ffd0000', 'hex'));
  },
  plain: (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('plain words');
  },
};

const ENV = tempCacheEnv();
let upstream: Server;
let conn: StdioConnection;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const route = ROUTES[(req.url ?? '/').slice(1)];
    if (route) return route(req, res);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const dir = tempDir('openapi-answers-');
  const paths = Object.fromEntries(Object.keys(ROUTES).map((id) => [`/${id}`, { [id === 'create' || id === 'createdGarbled' ? 'post' : 'get']: { operationId: id, responses: { 200: { description: 'ok' } } } }]));
  const spec = path.join(dir, 'answers.json');
  writeFileSync(spec, JSON.stringify({ openapi: '3.0.3', info: { title: 'answers', version: '1' }, paths }));
  const config = path.join(dir, 'config.json');
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  writeFileSync(config, JSON.stringify({ apis: [{ apiBaseUrl: base, openApiSpec: spec, requestTimeoutMs: 1000, maxResponseBytes: 1024 * 1024, disableAbbreviation: true }] }));
  conn = await connectStdio('openapi-mcp-server', ['--config', config], ENV);
});
afterAll(async () => {
  await conn?.close();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean; _meta?: Record<string, unknown> };

async function call(id: string): Promise<Result> {
  const tools = (await conn.client.listTools()).tools;
  const tool = tools.find((one) => one.name.replace(/-/g, '').toLowerCase() === id.toLowerCase());
  if (!tool) throw new Error(`no tool for ${id} among ${tools.map((one) => one.name).join(', ')}`);
  return (await conn.client.callTool({ name: tool.name, arguments: {} })) as Result;
}

const errorOf = (result: Result) => result._meta?.[ERROR_META_KEY] as { code: string; data?: Record<string, unknown> };

describe('openapi-mcp-server, when an answer\'s body does not end or breaks off', () => {
  test('an event stream that never ends times out saying the API answered and its body had not ended, and the next call works', async () => {
    const result = await call('events');
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toEqual({ code: 'TIMEOUT', data: { status: 200 } });
    expect(textOf(result)).toMatch(
      /^TIMEOUT: the upstream request timed out after 1000 ms \(GET http:\/\/127\.0\.0\.1:\d+\/events\): the API answered HTTP 200 \(text\/event-stream\), but its body had not ended after \d+ bytes; a stream that does not end cannot be one tool result$/,
    );
    expect(textOf(await call('plain'))).toBe('plain words');
  });

  test('a POST whose body breaks off after its headers names the status it answered, so that the model knows the API acted', async () => {
    const result = await call('create');
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toEqual({ code: 'NETWORK_ERROR', data: { code: 'UND_ERR_SOCKET', status: 201 } });
    expect(textOf(result)).toMatch(/^NETWORK_ERROR: network error calling POST http:\/\/127\.0\.0\.1:\d+\/create: the API answered HTTP 201 \(application\/json\), then its body broke off after \d+ bytes: UND_ERR_SOCKET: /);
    expect(textOf(await call('plain'))).toBe('plain words');
  });

  test('response headers past 64 KiB are named as such', async () => {
    const result = await call('bigHeaders');
    expect(errorOf(result).code).toBe('NETWORK_ERROR');
    expect(textOf(result)).toMatch(/UND_ERR_HEADERS_OVERFLOW: .*\(the API's response headers passed 64 KiB, the most read\)$/);
  });
});

describe('openapi-mcp-server, given a body that does not decode', () => {
  test('names the status the API answered, beside the coding that failed or is not known', async () => {
    const garbled = await call('createdGarbled');
    expect(errorOf(garbled)).toEqual({ code: 'UPSTREAM_ERROR', data: { status: 201 } });
    expect(textOf(garbled)).toBe("UPSTREAM_ERROR: the API answered HTTP 201, but the response's gzip content could not be decoded: incorrect header check");
    expect(textOf(await call('zstd'))).toBe("UPSTREAM_ERROR: the API answered HTTP 200, but the response is encoded with 'zstd', which cannot be decoded (gzip, deflate and br can)");
  });
});

describe('openapi-mcp-server, given binary under a text label', () => {
  test('a decompression bomb of zeros stops at maxResponseBytes of decoded bytes and is summarised, not sent as \\u0000 escapes', async () => {
    const result = await call('bomb');
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'binary response: text/plain, 1048576 bytes (cut) (it holds NUL characters: not text, whatever its type says)' }]);
    expect(textOf(await call('plain'))).toBe('plain words');
  });

  test('an archive labelled text/plain is summarised as binary', async () => {
    expect(textOf(await call('archive'))).toBe('binary response: text/plain; charset=utf-8, 10 bytes (it holds NUL characters: not text, whatever its type says)');
  });
});

describe('openapi-mcp-server, given JSON under a text label', () => {
  test('a 2xx text/html body that is whole JSON comes as JSON, with structuredContent; text that only starts like it stays text', async () => {
    const json = (await call('htmlJson')) as Result & { structuredContent?: unknown };
    expect(json.structuredContent).toEqual({ id: 7, tags: ['<b>'] });
    const plain = (await call('plainNotJson')) as Result & { structuredContent?: unknown };
    expect(textOf(plain)).toBe('[INFO] started\n[INFO] done');
    expect(plain.structuredContent).toBeUndefined();
  });
});

describe('openapi-mcp-server, given UTF-16 JSON that says so nowhere', () => {
  test('tells UTF-16 by its first bytes (RFC 4627), without a byte order mark or charset', async () => {
    const json = (await call('utf16Json')) as Result & { structuredContent?: unknown };
    expect(json.structuredContent).toEqual({ city: 'Zürich' });
  });
});

describe('openapi-mcp-server, given text under a binary label', () => {
  test('JSON sent as application/octet-stream is read as JSON; bytes that are not text are still summarised', async () => {
    const json = (await call('octetJson')) as Result & { structuredContent?: unknown };
    expect(json.structuredContent).toEqual({ name: 'report.csv', rows: 3 });
    expect(textOf(json)).toBe('{\n  "name": "report.csv",\n  "rows": 3\n}');
    expect(textOf(await call('octetBytes'))).toBe('binary response: application/octet-stream, 4 bytes');
  });
});

describe('openapi-mcp-server says when to retry', () => {
  test('a Retry-After HTTP date comes with the seconds until it, in the text and as retryAfterSeconds', async () => {
    const result = await call('dated');
    expect(result.isError).toBe(true);
    const wait = Number(/\[retry-after: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT, in (\d+) s\]$/.exec(textOf(result))?.[1]);
    // The date has whole seconds, and the worker read it a moment after it was written.
    expect(wait).toBeGreaterThan(3_500);
    expect(wait).toBeLessThanOrEqual(3_600);
    expect(errorOf(result).data).toEqual({ status: 429, retryAfterSeconds: wait });
  });

  test('Retry-After in seconds is that number of seconds in the error data', async () => {
    const result = await call('seconds');
    expect(textOf(result)).toBe('UPSTREAM_ERROR: HTTP 503: maintenance [retry-after: 120]');
    expect(errorOf(result).data).toEqual({ status: 503, retryAfterSeconds: 120 });
  });

  test('a 202\'s Retry-After date is shown in its headers block with the seconds until it', async () => {
    const result = await call('accepted');
    expect(result.isError).toBeFalsy();
    const block = result.content[1]?.text ?? '';
    const wait = Number(/^response headers \(HTTP 202\):\nlocation: \/jobs\/1\nretry-after: \w{3}, [\w :]+ GMT, in (\d+) s$/.exec(block)?.[1]);
    expect(wait).toBeGreaterThan(500);
    expect(wait).toBeLessThanOrEqual(600);
  });

  test('an exhausted rate limit says in how many seconds it resets, beside the time', async () => {
    const text = textOf(await call('exhausted'));
    const wait = Number(/^UPSTREAM_ERROR: rate limited: HTTP 403: API rate limit exceeded \[rate limit exhausted, resets at \d{4}-\d\d-\d\dT[\d:.]+Z, in (\d+) s\]$/.exec(text)?.[1]);
    expect(wait).toBeGreaterThan(500);
    expect(wait).toBeLessThanOrEqual(600);
  });
});

describe('openapi-mcp-server reads JSON by what it is', () => {
  test('NDJSON comes as its lines, not as JSON that did not parse; a line that is not JSON is named', async () => {
    const lines = await call('lines');
    expect(lines.isError).toBeFalsy();
    expect(textOf(lines)).toBe('{"n":1}\n{"n":2}\n');
    expect(textOf(await call('badLines'))).toMatch(/^\{"n":1\}\n\{"n":\n\n\[line 2 is not valid JSON: .+\]$/);
  });

  test('a JSON error labelled text/html is quoted as it came, not stripped of its <…> as markup', async () => {
    expect(textOf(await call('jsonAsHtml'))).toBe('UPSTREAM_ERROR: HTTP 400: {"error":"expected <name> & <email>"}');
  });
});
