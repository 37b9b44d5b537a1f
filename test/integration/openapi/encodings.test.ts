import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { tempCacheEnv } from '../../helpers/processes';

/** Upstream answers in encodings other than UTF-8, with and without a charset saying so: [Content-Type, body]. */
const BODIES: Record<string, [string, Buffer]> = {
  cp1252: ['text/plain; charset=windows-1252', Buffer.from([0x93, 0x68, 0x69, 0x94, 0x20, 0x80])],
  latin1Json: ['application/json; charset=ISO-8859-1', Buffer.from([...Buffer.from('{"a":"'), 0x93, 0x63, 0x61, 0x66, 0xe9, 0x94, ...Buffer.from('"}')])],
  utf16Text: ['text/plain', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('héllo wörld', 'utf16le')])],
  utf16Json: ['application/json', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('{"a":"é"}', 'utf16le').swap16()])],
  badUtf8Json: ['application/json', Buffer.concat([Buffer.from('{"a":"x'), Buffer.from([0xe9]), Buffer.from('y"}')])],
  unknownCharset: ['text/plain; charset=x-klingon', Buffer.from('caf\xe9', 'latin1')],
  utf8Plain: ['text/plain', Buffer.from('café €')],
};

const ENV = tempCacheEnv();
let upstream: Server;
let dir: string;
let conn: StdioConnection;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    // Header values written as UTF-8 bytes, as many frameworks send them (writeHead takes a string as Latin-1).
    const utf8 = (text: string) => Buffer.from(text).toString('latin1');
    if (req.url === '/moved') return void res.writeHead(302, { location: utf8('/caf\u00e9') }).end();
    if (req.url === '/caf%C3%A9') return void res.writeHead(201, { 'content-type': 'text/plain', location: utf8('/caf\u00e9/1'), 'x-owner': utf8('Zoë') }).end('made');
    const [type, body] = BODIES[(req.url ?? '/').slice(1)] ?? ['text/plain', Buffer.from('no such body')];
    res.writeHead(200, { 'content-type': type });
    res.end(body);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  dir = mkdtempSync(path.join(tmpdir(), 'openapi-encodings-'));
  const paths: Record<string, unknown> = Object.fromEntries(Object.keys(BODIES).map((name) => [`/${name}`, { get: { operationId: name, responses: { 200: { description: 'ok' } } } }]));
  paths['/moved'] = { get: { operationId: 'moved', responses: { 201: { description: 'made', headers: { 'X-Owner': { schema: { type: 'string' } } } } } } };
  const spec = path.join(dir, 'encodings.json');
  writeFileSync(spec, JSON.stringify({ openapi: '3.0.3', info: { title: 'encodings', version: '1' }, paths }));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  conn = await connectStdio('openapi-mcp-server', ['--api-base-url', base, '--openapi-spec', spec, '--disable-abbreviation'], ENV);
});
afterAll(async () => {
  await conn?.close();
  await new Promise((resolve) => upstream?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

async function get(name: string) {
  const tools = (await conn.client.listTools()).tools;
  const tool = tools.find((one) => one.name.replace(/-/g, '').toLowerCase() === name.toLowerCase());
  if (!tool) throw new Error(`no tool for ${name} among ${tools.map((one) => one.name).join(', ')}`);
  return (await conn.client.callTool({ name: tool.name, arguments: {} })) as { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean };
}

describe('openapi-mcp-server decodes upstream text in the encoding it is in', () => {
  test('windows-1252 curly quotes and the euro sign, labelled windows-1252 or ISO-8859-1, are those characters, not C1 controls', async () => {
    // Node 20's TextDecoder gave U+0093 U+0094 U+0080 for these bytes: invisible, the characters lost.
    expect(textOf(await get('cp1252'))).toBe('“hi” €');
    const json = await get('latin1Json');
    expect(json.structuredContent).toEqual({ a: '“café”' });
  });

  test('a UTF-16 body with a byte order mark and no charset is read as UTF-16, text and JSON', async () => {
    expect(textOf(await get('utf16Text'))).toBe('héllo wörld');
    const json = await get('utf16Json');
    expect(json.isError).toBeFalsy();
    expect(json.structuredContent).toEqual({ a: 'é' });
  });

  test('a body that is not valid UTF-8 says so, and which charset it named, beside the text shown with U+FFFD', async () => {
    const json = await get('badUtf8Json');
    expect(json.structuredContent).toEqual({ a: 'x\uFFFDy' });
    expect(textOf(json)).toContain('[the response names no charset and is not valid UTF-8: its invalid bytes are shown as U+FFFD]');
    expect(textOf(await get('unknownCharset'))).toBe('caf\uFFFD\n[the response names charset x-klingon, which no decoder here knows, and is not valid UTF-8: its invalid bytes are shown as U+FFFD]');
  });

  test('UTF-8 without a charset comes as it is, with no note', async () => {
    expect(textOf(await get('utf8Plain'))).toBe('café €');
  });
});

describe('openapi-mcp-server reads response headers sent as UTF-8 bytes as UTF-8', () => {
  test('a redirect to a Location in UTF-8 is followed to that path, and headers shown read as sent (undici reads them as Latin-1: /caf%C3%83%C2%A9, ZoÃ«)', async () => {
    const result = await get('moved');
    expect(result.isError).toBeFalsy();
    expect(result.content.map((block) => block.text)).toEqual(['made', 'response headers (HTTP 201):\nlocation: /café/1\nx-owner: Zoë']);
  });
});
