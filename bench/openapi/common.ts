import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { descendants } from '../../test/helpers/processes';

export const ROOT = path.resolve(__dirname, '..', '..');
const GENERATED = path.join(ROOT, 'node_modules', '@octokit', 'openapi', 'generated');
export const GITHUB = path.join(GENERATED, 'api.github.com.json');
/** The same description with every `$ref` written out in place (73 MB). */
export const GITHUB_DEREF = path.join(GENERATED, 'api.github.com.deref.json');
export const OURS = path.join(ROOT, 'dist', 'supervisor', 'cli', 'openapi-mcp-server.js');
export const REFERENCE = path.join(ROOT, 'node_modules', '@ivotoby', 'openapi-mcp-server', 'bin', 'mcp-server.js');

/** Every pid of the tree under `pid`, itself included (from /proc). */
export function tree(pid: number): number[] {
  return [pid, ...descendants(pid)];
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
}

/** A spec cache for this benchmark run, not the user's (removed at exit). */
const cacheHome = mkdtempSync(path.join(tmpdir(), 'mcpvisor-bench-xdg-'));
process.on('exit', () => rmSync(cacheHome, { recursive: true, force: true }));

/** The environment for a server this benchmark starts: ours, with the run's own spec cache. */
export const serverEnv = (): NodeJS.ProcessEnv => ({ ...process.env, XDG_CACHE_HOME: cacheHome });

/**
 * Starts a server in HTTP mode and resolves with its MCP URL once it accepts connections; `script`
 * overrides which entry point runs (another build of ours).
 */
export async function startHttpServer(which: 'ours' | 'reference', args: string[], port: number, script = which === 'ours' ? OURS : REFERENCE): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [script, '--transport', 'http', '--port', String(port), '--host', '127.0.0.1', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: serverEnv(),
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = `http://127.0.0.1:${port}/mcp`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`${which} exited: ${stderr.slice(-2000)}`);
    try {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
      await res.arrayBuffer();
      return { child, url };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`${which} did not start: ${stderr.slice(-2000)}`);
}

/**
 * JSON-RPC over a spawned server's stdio, one message per line: `send` writes one, `answer(id)`
 * resolves with the answer of that id. The reader appends each chunk and scans from the start of
 * what it holds, as it always has: startup.ts's ratios are against this same client.
 */
export function stdioRpc(child: ChildProcess): { send(message: object): void; answer(id: number): Promise<Record<string, any>> } {
  let buffer = '';
  return {
    send: (message) => void child.stdin!.write(`${JSON.stringify(message)}\n`),
    answer: (id) =>
      new Promise((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          buffer += chunk.toString('utf8');
          let at: number;
          while ((at = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, at);
            buffer = buffer.slice(at + 1);
            try {
              const message = JSON.parse(line);
              if (message.id === id) {
                child.stdout!.off('data', onData);
                resolve(message);
                return;
              }
            } catch {
              // not JSON
            }
          }
        };
        child.stdout!.on('data', onData);
        child.once('exit', () => reject(new Error('exited')));
      }),
  };
}
