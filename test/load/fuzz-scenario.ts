/**
 * Malformed, truncated, oversized and fuzzed JSON-RPC messages (fast-check) sent to one mcpvisor
 * over Streamable HTTP and over stdio, while valid sessions keep calling beside them.
 *
 * What counts as answered (decisions where the issue is silent):
 * - HTTP: a 4xx with a JSON-RPC error body; or 200 whose every JSON-RPC message is an error or an
 *   `isError` tool result; or 202 when nothing in the body was a request (a message with both
 *   `method` and `id`): notifications and stray responses have nothing to answer. Never a 5xx,
 *   never a dropped connection.
 * - stdio: every line that is a well-formed JSON-RPC request by the SDK's schema (we give it an
 *   id of our own so it can be matched) gets an error response with that id. Lines that are not
 *   JSON, not JSON-RPC or a batch are answered -32700/-32600 (supervisor/stdio-transport.ts,
 *   asserted in test/integration/supervisor/transports.test.ts); valid notifications rightly get
 *   no answer, so here those lines are counted and printed, not asserted.
 */
import { spawn } from 'node:child_process';
import { isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import type { HttpServer } from '../helpers/mcp';
import { bin, eventually } from '../helpers/processes';
import { closeClient, openClient, pooled } from './harness';

/** http.maxBodyBytes of the server under fuzz: small, so oversized bodies stay cheap to send. */
export const FUZZ_MAX_BODY = 64 * 1024;

export interface Fuzzed {
  kind: string;
  body: string;
  /** Whether some message in the body has both `method` and `id` (it must be answered). */
  request: boolean;
}

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } };
const CALL = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } };

const isRequest = (value: unknown): boolean => typeof value === 'object' && value !== null && 'method' in value && 'id' in value;
const requestIn = (value: unknown): boolean => (Array.isArray(value) ? value.some(isRequest) : isRequest(value));

function fuzzed(kind: string, body: string): Fuzzed {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  return { kind, body, request: requestIn(parsed) };
}

const anyJson = fc.jsonValue({ maxDepth: 3 });
/** Methods no server has: `x-` and a random tail (never `ping`, `tools/list`, ...). */
const method = fc.oneof(fc.string({ maxLength: 30 }).map((s) => `x-${s}`), anyJson);
const id = fc.oneof(fc.integer(), fc.string({ maxLength: 20 }), fc.constant(null), anyJson);
const envelope = fc.record(
  { jsonrpc: fc.oneof(fc.constant('2.0'), fc.constant('1.0'), anyJson), id, method, params: anyJson, result: anyJson, error: anyJson },
  { requiredKeys: [] },
);
const badCall = fc.oneof(
  fc.record({ name: fc.string({ maxLength: 40 }).map((s) => `no-such-tool-${s}`), arguments: anyJson }),
  fc.record({ name: fc.constant('echo'), arguments: fc.oneof(fc.record({ text: fc.oneof(fc.integer(), fc.constant(null), fc.array(fc.string())) }), fc.constant({}), fc.string()) }),
  fc.record({ name: anyJson, arguments: anyJson }, { requiredKeys: [] }),
).map((params) => ({ jsonrpc: '2.0', id: 9, method: 'tools/call', params }));

/** Every kind of bad message, weighted so oversized bodies stay a small share. */
export const badMessage: fc.Arbitrary<Fuzzed> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 200, unit: 'binary' }).map((s) => fuzzed('garbage', s)) },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom(INIT, CALL), fc.nat()).map(([m, n]) => { const text = JSON.stringify(m); return fuzzed('truncated', text.slice(0, n % text.length)); }) },
  { weight: 4, arbitrary: envelope.map((m) => fuzzed('envelope', JSON.stringify(m))) },
  { weight: 2, arbitrary: anyJson.map((m) => fuzzed('json', JSON.stringify(m) ?? 'null')) },
  { weight: 3, arbitrary: badCall.map((m) => fuzzed('bad-call', JSON.stringify(m))) },
  { weight: 2, arbitrary: fc.array(fc.oneof(envelope, badCall), { minLength: 0, maxLength: 5 }).map((m) => fuzzed('batch', JSON.stringify(m))) },
  { weight: 1, arbitrary: fc.nat({ max: 4096 }).map((n) => fuzzed('oversized', JSON.stringify({ ...CALL, params: { name: 'echo', arguments: { text: 'x'.repeat(FUZZ_MAX_BODY + n) } } }))) },
);

/** JSON-RPC messages in a JSON or SSE response body. */
function messagesIn(contentType: string, text: string): unknown[] {
  if (contentType.includes('text/event-stream')) {
    return text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)) as unknown);
  }
  const parsed = JSON.parse(text) as unknown;
  return Array.isArray(parsed) ? parsed : [parsed];
}

const isErrorAnswer = (message: unknown): boolean => {
  const m = message as { error?: unknown; result?: { isError?: boolean } };
  return m.error !== undefined || m.result?.isError === true;
};

/** Why an HTTP answer does not count as answered; undefined when it does. */
export async function judgeHttp(message: Fuzzed, response: Response): Promise<string | undefined> {
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  if (response.status >= 400 && response.status < 500) {
    try {
      return messagesIn(type, text).every(isErrorAnswer) ? undefined : `4xx without a JSON-RPC error: ${text.slice(0, 100)}`;
    } catch {
      return `4xx with a body that is not JSON: ${text.slice(0, 100)}`;
    }
  }
  if (response.status === 202) return message.request ? 'a request was accepted with 202 and never answered' : undefined;
  if (response.status === 200) {
    const messages = messagesIn(type, text);
    if (messages.length === 0) return '200 with no message';
    return messages.every(isErrorAnswer) ? undefined : `200 with a success answer: ${text.slice(0, 150)}`;
  }
  return `status ${response.status}: ${text.slice(0, 100)}`;
}

export interface FuzzHttpOutcome {
  sent: number;
  failures: string[];
  byStatus: Record<string, number>;
  validCalls: number;
  validFailures: string[];
}

/**
 * Sends `count` bad messages (seeded; at most 32 in flight) at the server, each with a live
 * session id, a made-up one or none, while `validSessions` clients call echo in a loop beside.
 */
export async function fuzzHttp(server: HttpServer, count: number, seed = 6, validSessions = 4): Promise<FuzzHttpOutcome> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const target = await openClient(server.mcpUrl, 'fuzz-target');
  const sessionId = (target.transport as unknown as { sessionId: string }).sessionId;
  const valid = await Promise.all(Array.from({ length: validSessions }, (_, i) => openClient(server.mcpUrl, `beside-${i}`)));
  let fuzzing = true;
  let validCalls = 0;
  const validFailures: string[] = [];
  const beside = valid.map(async (client, i) => {
    for (let n = 0; fuzzing && n < 100_000; n++) {
      try {
        const result = await client.callTool({ name: 'echo', arguments: { text: `${i}/${n}` } });
        if (result.isError || (result.structuredContent as { text?: string }).text !== `${i}/${n}`) validFailures.push(JSON.stringify(result).slice(0, 200));
        validCalls++;
      } catch (error) {
        validFailures.push(String(error).slice(0, 200));
      }
    }
  });
  const messages = fc.sample(fc.tuple(badMessage, fc.constantFrom('live', 'made-up', 'none')), { numRuns: count, seed });
  const failures: string[] = [];
  const byStatus: Record<string, number> = {};
  await pooled(messages.length, 32, async (i) => {
    const [message, session] = messages[i];
    const extra: Record<string, string> = session === 'live' ? { 'mcp-session-id': sessionId } : session === 'made-up' ? { 'mcp-session-id': `made-up-${i}` } : {};
    try {
      const response = await fetch(server.mcpUrl, { method: 'POST', headers: { ...headers, ...extra }, body: message.body });
      byStatus[response.status] = (byStatus[response.status] ?? 0) + 1;
      const why = await judgeHttp(message, response);
      if (why) failures.push(`#${i} ${message.kind} (${session} session): ${why}; sent ${message.body.slice(0, 120)}`);
    } catch (error) {
      failures.push(`#${i} ${message.kind}: ${String(error)}`);
    }
  });
  fuzzing = false;
  await Promise.all(beside);
  // The session that took the fuzz still works.
  const after = await target.callTool({ name: 'echo', arguments: { text: 'still here' } });
  if ((after.structuredContent as { text?: string } | undefined)?.text !== 'still here') validFailures.push(`fuzzed session: ${JSON.stringify(after).slice(0, 200)}`);
  await Promise.all([target, ...valid].map(closeClient));
  return { sent: messages.length, failures, byStatus, validCalls, validFailures };
}

export interface FuzzStdioOutcome {
  sent: number;
  requests: number;
  /** Request-shaped lines with no error answer, or with a success answer. */
  failures: string[];
  /** Oversized echo calls (valid over stdio, not judged). */
  oversizedCalls: number;
  /** Lines that were not well-formed requests and got no id-null answer (valid notifications among them). */
  unanswered: number;
  exitCode: number | string | null;
  /** stdout lines that are not JSON-RPC. */
  foreignStdout: string[];
}

/** Writes `count` bad lines to `mcpvisor` over stdio after a proper initialise. */
export async function fuzzStdio(configPath: string, count: number, seed = 6): Promise<FuzzStdioOutcome> {
  const child = spawn(process.execPath, [bin('mcpvisor'), '--config', configPath], { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr.resume();
  let buffer = '';
  const answers = new Map<string, unknown>();
  const foreignStdout: string[] = [];
  let nullAnswers = 0;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) {
      try {
        const message = JSON.parse(line) as { jsonrpc?: string; id?: unknown };
        if (message.jsonrpc !== '2.0') foreignStdout.push(line.slice(0, 200));
        if (message.id === null || message.id === undefined) nullAnswers++;
        else answers.set(String(message.id), message);
      } catch {
        foreignStdout.push(line.slice(0, 200));
      }
    }
  });
  const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  const send = (line: string) => child.stdin.write(`${line}\n`);
  send(JSON.stringify({ ...INIT, id: 'init' }));
  await eventually(() => answers.has('init'), 20_000);
  send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  const messages = fc.sample(badMessage, { numRuns: count, seed });
  const expected: string[] = [];
  let notRequests = 0;
  let oversized = 0;
  const waitFor: string[] = [];
  messages.forEach((message, i) => {
    let line = message.body.replace(/[\r\n]/g, ' ');
    if (message.request) {
      // Our own id on the request (the fuzzed one may be a duplicate or an object).
      const parsed = JSON.parse(line) as Record<string, unknown> | Array<Record<string, unknown>>;
      if (!Array.isArray(parsed)) parsed.id = `fz-${i}`;
      if (message.kind === 'oversized') {
        // stdio has no size limit (http.maxBodyBytes is for HTTP): a long echo is a valid call,
        // answered (or refused with BUSY when the queue is full) but not judged.
        const call = JSON.parse(line) as Record<string, unknown>;
        call.id = `ov-${i}`;
        line = JSON.stringify(call);
        waitFor.push(`ov-${i}`);
        oversized++;
      } else if (!Array.isArray(parsed) && isJSONRPCRequest(parsed)) {
        line = JSON.stringify(parsed);
        expected.push(`fz-${i}`);
      } else {
        notRequests++;
      }
    } else {
      notRequests++;
    }
    send(line);
  });
  // The valid call goes after every answer is in: the oversized calls may fill the pool's queue.
  await eventually(() => [...expected, ...waitFor].every((key) => answers.has(key)), 60_000);
  send(JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'tools/call', params: { name: 'echo', arguments: { text: 'after the fuzz' } } }));
  await eventually(() => answers.has('after'), 20_000);
  const failures: string[] = [];
  for (const key of expected) {
    const answer = answers.get(key);
    if (answer === undefined) failures.push(`${key}: no answer (${messages[Number(key.slice(3))].body.slice(0, 120)})`);
    else if (!isErrorAnswer(answer)) failures.push(`${key}: success answer ${JSON.stringify(answer).slice(0, 150)}`);
  }
  const after = answers.get('after') as { result?: { structuredContent?: { text?: string } } } | undefined;
  if (after?.result?.structuredContent?.text !== 'after the fuzz') failures.push(`valid call after the fuzz: ${JSON.stringify(after)?.slice(0, 200)}`);
  child.stdin.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  const exitCode = await exited;
  clearTimeout(timer);
  return { sent: messages.length, requests: expected.length, oversizedCalls: oversized, failures, unanswered: Math.max(0, notRequests - nullAnswers), exitCode, foreignStdout };
}
