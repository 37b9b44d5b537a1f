import { spawn } from 'node:child_process';
import path from 'node:path';

/** The bare SDK server (baseline-server.ts) running: its base URL, pid and stop. */
export interface BaselineServer {
  baseUrl: string;
  pid: number;
  stop(): Promise<unknown>;
}

/** Starts baseline-server.ts, the same-run baseline of the session benches, on a free port. */
export async function startBaselineServer(): Promise<BaselineServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'baseline-server.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.once('exit', () => reject(new Error('baseline server exited')));
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}
