/**
 * A command runs as under a plain `sh -c`: its errors read `sh: 1: node: not found`, not
 * `sh: 1: eval: node: not found` (the launcher's eval), and it sees none of the launcher's
 * variables (`$cmd` held the command's own text, `$c` the launcher's script).
 */
import { realpathSync } from 'node:fs';
import { connectStdio, type StdioConnection } from '../../helpers/mcp';
import { tempDir } from '../../helpers/temp';
import { call } from './helpers';

describe.each([
  ['true', 'sh'],
  ['false', '/bin/sh'],
])('SANDBOX_MODE=%s', (SANDBOX_MODE, name) => {
  let server: StdioConnection;
  beforeAll(async () => {
    server = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE, SHELL_WORKSPACE: realpathSync(tempDir('shell-launcher-')) });
  });
  afterAll(async () => {
    await server?.close();
  });

  test('errors read as a plain sh -c prints them, line numbers included, and no variable of the launcher shows', async () => {
    const command = 'nosuch-program-1; echo "[$c][$cmd][$#]"\necho two\nnosuch-program-3\nif then';
    // At once, so that some run in a process started ahead and some in one started for them.
    const results = await Promise.all(Array.from({ length: 4 }, () => call(server, 'exec', { command })));
    for (const result of results) {
      expect(result.structuredContent).toMatchObject({
        stdout: '[][][0]\ntwo\n',
        stderr: `${name}: 1: nosuch-program-1: not found\n${name}: 3: nosuch-program-3: not found\n${name}: 4: Syntax error: "then" unexpected\n`,
        exitCode: 2,
      });
    }
  });
});
