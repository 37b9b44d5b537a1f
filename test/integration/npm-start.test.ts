import { spawn } from 'node:child_process';
import { fixtureConfig, writeConfig } from '../helpers/config';
import { eventually, ROOT } from '../helpers/processes';

/**
 * The README's first command runs the server through `npm start`. A process manager or a
 * container (`CMD ["npm", "start"]`, `kill <npm's pid>`) stops it by signalling npm, which passes
 * the signal to the script's process: that must be the server, not a shell in front of it. With
 * `"start": "node …"`, npm signalled `sh -c`, which died and left the server running, its port held.
 */
describe('npm start', () => {
  it('passes SIGTERM on to the server, which drains and stops', async () => {
    const config = writeConfig(fixtureConfig({ thread: false }));
    const npm = spawn('npm', ['start', '--silent', '--', '--config', config, '--transport', 'http', '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    npm.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const serverPid = () => Number(/"pid":(\d+)[^\n]*"msg":"listening"/.exec(stderr)?.[1]);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    try {
      expect(await eventually(() => serverPid() > 0, 30_000)).toBe(true);
      npm.kill('SIGTERM');
      const stopped = await eventually(() => /"msg":"stopped"/.test(stderr), 15_000);
      // What the server said last, when it did not say it stopped (seen once in CI, not reproduced).
      expect(stopped ? 'stopped' : stderr.slice(-2000)).toBe('stopped');
      expect(await eventually(() => !alive(serverPid()), 5_000)).toBe(true);
    } finally {
      if (serverPid() > 0 && alive(serverPid())) process.kill(serverPid(), 'SIGKILL');
      npm.kill('SIGKILL');
    }
  }, 60_000);
});
