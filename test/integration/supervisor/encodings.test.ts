import { spawn } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startHttp, type HttpServer } from '../../helpers/mcp';
import { bin, eventually } from '../../helpers/processes';

/**
 * JSON-RPC messages are UTF-8. Bytes that are not came into the arguments as U+FFFD (a writeFile
 * wrote them), a body declared Latin-1 was read as UTF-8, and a byte order mark before the first
 * stdio line made the client's initialize a parse error.
 */
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const write = (id: number, file: string, content: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'writeFile', arguments: { path: file, content } } });
/** `message` as bytes, with the one `\u0000` in its JSON text replaced by `bytes`. */
const withBytes = (message: unknown, bytes: number[]) => {
  const [head, tail] = JSON.stringify(message).split('\\u0000');
  return Buffer.concat([Buffer.from(head), Buffer.from(bytes), Buffer.from(tail)]);
};

let ws: string;
beforeAll(() => {
  ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'wire-bytes-')));
});
afterAll(() => rmSync(ws, { recursive: true, force: true }));

describe('over stdio', () => {
  test('a byte order mark before the first line is read past; a line that is not UTF-8 is a parse error saying so, and nothing is written', async () => {
    const child = spawn(process.execPath, [bin('shell-mcp-server')], { env: { ...process.env, SANDBOX_MODE: 'false', SHELL_WORKSPACE: ws }, stdio: ['pipe', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    const answers = () => stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { id: unknown; result?: unknown; error?: { code: number; message: string } });
    try {
      child.stdin.write(`\uFEFF${JSON.stringify(INIT)}\r\n`);
      child.stdin.write(Buffer.concat([withBytes(write(2, 'latin.txt', 'caf\u0000'), [0xe9]), Buffer.from('\n')]));
      child.stdin.write(`${JSON.stringify(write(3, 'after.txt', 'ok'))}\n`);
      expect(await eventually(() => answers().length >= 3)).toBe(true);
      // The parse error is answered at once, before initialize's answer: found by what they are.
      const init = answers().find((one) => one.id === 1);
      const bad = answers().find((one) => one.id === null);
      const after = answers().find((one) => one.id === 3);
      expect(init).toMatchObject({ id: 1, result: { serverInfo: expect.any(Object) } });
      expect(bad).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the line is not valid UTF-8 (JSON-RPC messages are UTF-8)' } });
      expect(after).toMatchObject({ id: 3, result: { structuredContent: { bytesWritten: 2 } } });
      expect(existsSync(path.join(ws, 'latin.txt'))).toBe(false);
    } finally {
      child.kill();
    }
  });
});

describe('over HTTP', () => {
  let server: HttpServer;
  let session: string;
  beforeAll(async () => {
    server = await startHttp('shell-mcp-server', [], { SANDBOX_MODE: 'false', SHELL_WORKSPACE: ws });
    const opened = await fetch(server.mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(INIT) });
    session = opened.headers.get('mcp-session-id')!;
  });
  afterAll(async () => {
    await server?.stop();
  });
  const post = (body: BodyInit, contentType = 'application/json') =>
    fetch(server.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': contentType, accept: 'application/json, text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26' },
      body,
    });

  test('a body that is not UTF-8 is answered 400 -32700 saying so, and nothing is written', async () => {
    const response = await post(new Uint8Array(withBytes(write(10, 'http-latin.txt', 'caf\u0000'), [0xe9])));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: -32700, message: 'Parse error: the body is not valid UTF-8 (JSON-RPC messages are UTF-8)' } });
    expect(existsSync(path.join(ws, 'http-latin.txt'))).toBe(false);
  });

  test('a charset other than UTF-8 is answered 415 naming it; utf-8 in any case is read', async () => {
    const latin = await post(new Uint8Array(Buffer.from(JSON.stringify(write(11, 'declared.txt', 'caf\u00e9')), 'latin1')), 'application/json; charset=ISO-8859-1');
    expect(latin.status).toBe(415);
    expect(await latin.json()).toMatchObject({ error: { code: -32600, message: 'Unsupported charset ISO-8859-1 in Content-Type: send the JSON as UTF-8' } });
    expect(existsSync(path.join(ws, 'declared.txt'))).toBe(false);
    const utf8 = await post(JSON.stringify(write(12, 'declared.txt', 'caf\u00e9')), 'application/json; charset=UTF-8');
    expect(utf8.status).toBe(200);
    expect(await utf8.text()).toContain('"bytesWritten":5');
  });

  test('a compressed body is answered 415 naming its coding, and nothing is written', async () => {
    const zipped = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', accept: 'application/json, text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26' },
      body: new Uint8Array(gzipSync(JSON.stringify(write(13, 'zipped.txt', 'x')))),
    });
    expect([zipped.status, (await zipped.json()).error]).toEqual([415, { code: -32600, message: 'Unsupported Content-Encoding: gzip (send the body uncompressed)' }]);
    expect(existsSync(path.join(ws, 'zipped.txt'))).toBe(false);
  });

  test('the legacy SSE endpoint reads bodies the same way: not UTF-8 400, another charset 415, a gzip body 415, nothing written', async () => {
    const controller = new AbortController();
    const stream = await fetch(`${server.baseUrl}/sse`, { signal: controller.signal });
    const reader = stream.body!.getReader();
    let text = '';
    while (!text.includes('\n\n')) text += Buffer.from((await reader.read()).value!).toString('utf8');
    const endpoint = new URL(/data: (.*)/.exec(text)![1], server.baseUrl).href;
    const postLegacy = (body: BodyInit, headers: Record<string, string> = {}) =>
      fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    try {
      expect((await postLegacy(new Uint8Array(Buffer.from(JSON.stringify(INIT))))).status).toBe(202);
      const invalid = await postLegacy(new Uint8Array(withBytes(write(20, 'sse-latin.txt', 'caf\u0000'), [0xe9])));
      expect([invalid.status, await invalid.json()]).toMatchObject([400, { error: { code: -32700, message: 'Parse error: the body is not valid UTF-8 (JSON-RPC messages are UTF-8)' } }]);
      const latin = await postLegacy(new Uint8Array(Buffer.from(JSON.stringify(write(21, 'sse-declared.txt', 'caf\u00e9')), 'latin1')), { 'content-type': 'application/json; charset=ISO-8859-1' });
      expect([latin.status, (await latin.json()).error.message]).toEqual([415, 'Unsupported charset ISO-8859-1 in Content-Type: send the JSON as UTF-8']);
      const zipped = await postLegacy(new Uint8Array(gzipSync(JSON.stringify(write(22, 'sse-gzip.txt', 'x')))), { 'content-encoding': 'gzip' });
      expect([zipped.status, (await zipped.json()).error.code]).toEqual([415, -32600]);
      for (const name of ['sse-latin.txt', 'sse-declared.txt', 'sse-gzip.txt']) expect(existsSync(path.join(ws, name))).toBe(false);
    } finally {
      controller.abort();
    }
  });
});
