/**
 * Large messages over stdio: the time LineStdioTransport takes from the first 64 KiB piece of a
 * tools/call line (as a pipe delivers it) to the parsed message, for lines of 1 to 32 MB (a
 * writeFile of a big file, with `http.maxBodyBytes` raised), next to JSON.parse of the same text
 * in the same process (the least any reader does). A reader that rescans what it holds grows with
 * the square of the line: per MB, a 32 MB line then costs ~32x a 1 MB one (it did: 14.5 s for 40 MB
 * through shell-mcp-server). Target: the 32 MB line's cost per MB <= 2x the 1 MB line's.
 *   npx tsx bench/sessions/stdio-lines.ts [rounds, default 3]
 */
import { PassThrough } from 'node:stream';
import { LineStdioTransport } from '../../supervisor/stdio-transport';

const PIECE = 64 * 1024;
const MB = 1024 * 1024;

function lineOf(megabytes: number): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'writeFile', arguments: { path: 'big.txt', content: 'x'.repeat(megabytes * MB) } } });
}

/** ms from the first piece written to the message delivered. */
async function throughTransport(line: string): Promise<number> {
  const input = new PassThrough();
  const transport = new LineStdioTransport({ input, output: new PassThrough(), maxLineBytes: line.length + 1 });
  const delivered = new Promise<void>((resolve) => (transport.onmessage = () => resolve()));
  await transport.start();
  const started = performance.now();
  for (let at = 0; at < line.length; at += PIECE) input.write(line.slice(at, at + PIECE));
  input.write('\n');
  await delivered;
  const ms = performance.now() - started;
  await transport.close();
  return ms;
}

function parseOnly(line: string): number {
  const started = performance.now();
  JSON.parse(line);
  return performance.now() - started;
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3);
  const sizes = [1, 8, 32];
  const best = new Map<number, { transport: number; parse: number }>();
  for (let round = 0; round < rounds; round++) {
    for (const size of sizes) {
      const line = lineOf(size);
      const transport = await throughTransport(line);
      const parse = parseOnly(line);
      const before = best.get(size);
      best.set(size, { transport: Math.min(transport, before?.transport ?? Infinity), parse: Math.min(parse, before?.parse ?? Infinity) });
    }
  }
  for (const size of sizes) {
    const { transport, parse } = best.get(size)!;
    console.log(`${String(size).padStart(2)} MB line: ${transport.toFixed(1)} ms through the transport (${(transport / size).toFixed(1)} ms/MB), JSON.parse alone ${parse.toFixed(1)} ms; ${(transport / parse).toFixed(2)}x the parse`);
  }
  const perMb = (size: number) => best.get(size)!.transport / size;
  console.log(`cost per MB, 32 MB line / 1 MB line: ${(perMb(32) / perMb(1)).toFixed(2)} (target <= 2)`);
}

void main();
