/**
 * A git killed at the timeout leaves its lock file, and every later git command in that
 * repository failed with "File exists" and no word of why: the TIMEOUT answer names it.
 */
import { existsSync, realpathSync } from 'node:fs';
import { errorCodeOf } from '../../../protocol/results';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { tempDir } from '../../helpers/temp';
import { call } from './helpers';

describe.each(['true', 'false'])('SANDBOX_MODE=%s: a command stopped while git holds its lock', (SANDBOX_MODE) => {
  let ws: string;
  let server: StdioConnection;
  beforeAll(async () => {
    ws = realpathSync(tempDir('shell-git-locks-'));
    server = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE, SHELL_WORKSPACE: ws, COMMAND_TIMEOUT: '2500' });
  });
  afterAll(async () => {
    await server?.close();
  });

  test('the TIMEOUT answer names the lock file it left and what to do; the file is left in place', async () => {
    // A clean filter that takes long: `git add` holds .git/index.lock while it runs.
    const result = await call(server, 'exec', {
      command: "mkdir app && cd app && git init -q && git config filter.slow.clean 'sleep 30; cat' && echo '* filter=slow' > .gitattributes && echo x > a && git add a",
    });
    expect(errorCodeOf(result)).toBe('TIMEOUT');
    const lock = `${ws}/app/.git/index.lock`;
    expect(textOf(result)).toContain(`git was stopped while it held a lock file: ${lock} was made while the command ran and is still there, so the next git command in that repository fails with "File exists"; if no other git runs there, remove it (rm ${lock})`);
    expect(existsSync(lock)).toBe(true);
  });

  test('a lock file older than the stopped command is not put on it', async () => {
    const result = await call(server, 'exec', { command: 'sleep 30' });
    expect(errorCodeOf(result)).toBe('TIMEOUT');
    expect(existsSync(`${ws}/app/.git/index.lock`)).toBe(true);
    expect(textOf(result)).not.toContain('lock file');
  });
});
