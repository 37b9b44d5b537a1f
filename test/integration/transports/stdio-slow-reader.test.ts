import { spawn } from 'node:child_process';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { bin, eventually, logEntries } from '../../helpers/processes';

// A stdio client that reads slower than its calls are answered: the answers wait in the server
// until it reads, and then all arrive.

const CALLS = 40;

describe('stdio with a client that stops reading', () => {
  it('keeps every answer for it, with one wait for the output to drain rather than one per answer', async () => {
    const child = spawn(process.execPath, [bin('mcpvisor'), '--debug', '--config', writeConfig(fixtureConfig({ thread: false, root: { http: { maxConcurrentCallsPerSession: 64 } } }))], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const read = (chunk: Buffer) => (stdout += chunk.toString('utf8'));
    child.stdout.on('data', read);
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
    try {
      send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'slow', version: '1' } } });
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      expect(await eventually(() => stdout.includes('"id":0'))).toBe(true);
      child.stdout.off('data', read);
      child.stdout.pause();
      // 200 KB answers: the pipe and the stream's buffer fill after the first few.
      for (let id = 1; id <= CALLS; id++) send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'sleep', arguments: { ms: 0, pad: 200_000 } } });
      // Each call's debug line is written as its answer is: once all are logged, all were written.
      const answered = () => logEntries(stderr).filter((entry) => entry.msg === 'tool call').length;
      expect(await eventually(() => answered() === CALLS, 20_000)).toBe(true);
      child.stdout.on('data', read);
      child.stdout.resume();
      // Whole lines only: the last may still be arriving.
      const ids = () => stdout.slice(0, stdout.lastIndexOf('\n')).split('\n').filter((line) => line.startsWith('{')).map((line) => (JSON.parse(line) as { id: number }).id);
      expect(await eventually(() => ids().length === CALLS + 1, 20_000)).toBe(true);
      expect(ids().sort((a, b) => a - b)).toEqual(Array.from({ length: CALLS + 1 }, (_, id) => id));
      // Before: a 'drain' listener per answer waiting, and Node's warning past 10, outside the JSON log.
      expect(stderr).not.toContain('MaxListenersExceededWarning');
      expect(stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('{'))).toEqual([]);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
