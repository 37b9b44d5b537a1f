import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { bin, eventually, logEntries } from '../../helpers/processes';

// Backpressure on stdio (supervisor/stdio-transport.ts): while more than http.maxStreamBufferBytes
// of answers wait for a client that does not read stdout, the server reads no more of stdin, so
// what the client writes meanwhile waits in the pipe and is taken once the client reads.

const MIB = 1024 * 1024;
/** The server's debug line as it stops reading. */
const PAUSED = 'stdio: the client is not reading its answers; stdin is not read until it does';
/** Calls whose answers (500 KB each) fill the 1 MiB bound several times over. */
const FILLERS = 8;

interface RawClient {
  child: ChildProcessWithoutNullStreams;
  send(message: unknown): void;
  /** The ids of the whole answer lines read so far, in the order they came. */
  ids(): Array<number | string>;
  answer(id: number | string): { result?: { content: Array<{ text: string }> }; error?: unknown } | undefined;
  calls(): number;
  stderr(): string;
  stopReading(): void;
  startReading(): void;
  exited: Promise<number | null>;
}

function start(root: Record<string, unknown>): RawClient {
  const config = writeConfig(fixtureConfig({ thread: false, root: { http: { maxStreamBufferBytes: MIB, ...root } } }));
  const child = spawn(process.execPath, [bin('mcpvisor'), '--debug', '--config', config], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const read = (chunk: Buffer) => (stdout += chunk.toString('utf8'));
  child.stdout.on('data', read);
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  // Whole lines only: the last may still be arriving.
  const lines = () =>
    stdout
      .slice(0, stdout.lastIndexOf('\n') + 1)
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { id: number | string; result?: { content: Array<{ text: string }> }; error?: unknown });
  return {
    child,
    send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    ids: () => lines().map((line) => line.id),
    answer: (id) => lines().find((line) => line.id === id),
    calls: () => logEntries(stderr).filter((entry) => entry.msg === 'tool call').length,
    stderr: () => stderr,
    stopReading: () => {
      child.stdout.off('data', read);
      child.stdout.pause();
    },
    startReading: () => {
      child.stdout.on('data', read);
      child.stdout.resume();
    },
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
  };
}

async function initialize(client: RawClient): Promise<void> {
  client.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'backpressure', version: '1' } } });
  client.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  expect(await eventually(() => client.ids().includes(0))).toBe(true);
}

/** Reads one chunk of stdout (or none within 50 ms), then stops reading again. */
async function readOneChunk(client: RawClient): Promise<void> {
  client.startReading();
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, 50);
    function done() {
      clearTimeout(timer);
      client.child.stdout.off('data', done);
      resolve();
    }
    client.child.stdout.once('data', done);
  });
  client.stopReading();
  await new Promise((resolve) => setTimeout(resolve, 20));
}

const call = (id: number | string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'sleep', arguments: args } });

describe('stdio backpressure', () => {
  it('reads no request written while answers wait past the bound until the client reads them, then takes it, and ends after it when stdin closed meanwhile', async () => {
    const client = start({ maxConcurrentCallsPerSession: 32 });
    try {
      await initialize(client);
      client.stopReading();
      // `slow` runs on while the fillers' answers fill the output; it is answered after the client
      // has stopped writing and before it reads again.
      client.send(call('slow', { ms: 2500 }));
      for (let id = 1; id <= FILLERS; id++) client.send(call(id, { ms: 0, pad: 500_000 }));
      expect(await eventually(() => client.calls() === FILLERS, 20_000)).toBe(true);
      // Written while 4 MB wait for the client: before, it was read and answered at once, long
      // before `slow`; now it waits in stdin's pipe, behind the answers, as does stdin's end.
      client.send(call('late', { ms: 0 }));
      client.child.stdin.end();
      expect(await eventually(() => logEntries(client.stderr()).some((entry) => entry.msg === 'tool call' && entry.requestId === 'slow'), 20_000)).toBe(true);
      expect(logEntries(client.stderr()).find((entry) => entry.msg === 'tool call' && entry.requestId === 'late')).toBeUndefined();
      client.startReading();
      // Seen once in CI (not reproduced): the ids and the server's last lines say where it stopped.
      const allAnswered = await eventually(() => client.ids().length === FILLERS + 3, 20_000);
      if (!allAnswered) throw new Error(`answers: ${JSON.stringify(client.ids())}; server's last lines:\n${client.stderr().split('\n').slice(-30).join('\n')}`);
      const ids = client.ids();
      expect(ids.indexOf('late')).toBeGreaterThan(ids.indexOf('slow'));
      expect(ids.filter((id) => typeof id === 'number').sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: FILLERS + 1 }, (_, id) => id));
      // Nothing lost or cut: every answer whole; stdin's end, seen after `late`, stopped the server.
      for (let id = 1; id <= FILLERS; id++) expect(client.answer(id)?.result?.content[0].text.length).toBe('slept 0 ms'.length + 500_000);
      expect(client.answer('late')?.result?.content[0].text).toBe('slept 0 ms');
      expect(await client.exited).toBe(0);
      expect(logEntries(client.stderr()).some((entry) => entry.msg === PAUSED)).toBe(true);
    } finally {
      client.child.kill('SIGKILL');
    }
  }, 60_000);

  it('answers every call of a client that writes calls faster than it reads, each whole and none twice, past maxConcurrentCallsPerSession BUSY', async () => {
    const client = start({ maxConcurrentCallsPerSession: 4 });
    try {
      await initialize(client);
      client.stopReading();
      const GROUPS = 10;
      const GROUP = 6;
      // A group of 6 calls in one write (one read), against a limit of 4; 200 KB answers, read one
      // chunk of stdout a turn: the answers outgrow the 1 MiB bound within a few groups.
      const paused = () => logEntries(client.stderr()).some((entry) => entry.msg === PAUSED);
      for (let group = 0; group < GROUPS; group++) {
        client.child.stdin.write(Array.from({ length: GROUP }, (_, i) => `${JSON.stringify(call(group * GROUP + i + 1, { ms: 0, pad: 200_000 }))}\n`).join(''));
        // Until the group's 4 calls have run (the 2 refused log no call line), or the server
        // stopped reading: the groups written after that wait in the pipe.
        expect(await eventually(() => client.calls() >= 4 * (group + 1) || paused(), 20_000)).toBe(true);
        await readOneChunk(client);
      }
      for (let turn = 0; turn < 1000 && client.ids().length < GROUPS * GROUP + 1; turn++) await readOneChunk(client);
      client.startReading();
      expect(await eventually(() => client.ids().length === GROUPS * GROUP + 1, 20_000)).toBe(true);
      const ids = client.ids().filter((id) => id !== 0);
      expect([...ids].sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: GROUPS * GROUP }, (_, i) => i + 1));
      let busy = 0;
      for (const id of ids) {
        const text = client.answer(id)?.result?.content[0].text ?? '';
        if (text.startsWith('BUSY')) busy++;
        else expect(text.length).toBe('slept 0 ms'.length + 200_000);
      }
      // Each group read at once met the limit of 4 (a group held over a pause is taken whole too).
      expect(busy).toBeGreaterThanOrEqual(2 * GROUPS);
      // The answers of the 4 that ran in each group outgrew the bound: the server stopped reading.
      expect(paused()).toBe(true);
    } finally {
      client.child.kill('SIGKILL');
    }
  }, 60_000);

  it('writes every answer before it exits at the end of stdin, however slowly the client reads', async () => {
    // 500 KB waits for the client (under the 1 MiB bound: stdin is still read, its end too); the
    // server exited at once and the answer was cut at what the pipe held (64 KB).
    const client = start({});
    try {
      await initialize(client);
      client.stopReading();
      client.send(call(1, { ms: 0, pad: 500_000 }));
      client.child.stdin.end();
      expect(await eventually(() => logEntries(client.stderr()).some((entry) => entry.msg === 'stop requested'), 20_000)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 500));
      client.startReading();
      expect(await client.exited).toBe(0);
      expect(client.answer(1)?.result?.content[0].text.length).toBe('slept 0 ms'.length + 500_000);
    } finally {
      client.child.kill('SIGKILL');
    }
  });
});
