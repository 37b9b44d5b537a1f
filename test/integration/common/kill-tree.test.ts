import { spawn } from 'node:child_process';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { descendants, eventually, isAlive, ROOT } from '../../helpers/processes';
import { tempDir } from '../../helpers/temp';

const KILL_TREE = path.join(ROOT, 'dist', 'workers', 'common', 'kill-tree.js');

/**
 * killTree of the built module, in a Node process of its own: jest gives a test a copy of
 * process.env, which the spawns of a module (tree-kill's) do not see.
 */
function killTreeFrom(cwd: string, env: NodeJS.ProcessEnv, pid: number): Promise<number | null> {
  const child = spawn(process.execPath, ['-e', `require(${JSON.stringify(KILL_TREE)}).killTree(${pid})`], { cwd, env, stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', resolve));
}

describe('killTree', () => {
  test('kills a tree, a child that left the group included, without running a ps planted in the current directory', async () => {
    // A PATH entry that is empty (":/usr/bin") is the current directory, which for a shell server
    // may be its workspace: a sandboxed command can write a ps there.
    const dir = tempDir('kill-tree-');
    const marker = path.join(dir, 'planted-ps-ran');
    writeFileSync(path.join(dir, 'ps'), `#!/bin/sh\necho ran >> ${marker}\nexec /usr/bin/ps "$@"\n`);
    chmodSync(path.join(dir, 'ps'), 0o755);
    const tree = spawn('/bin/sh', ['-c', 'setsid sleep 4601 & sleep 4602 & wait'], { detached: true, stdio: 'ignore' });
    const exited = new Promise((resolve) => tree.once('exit', resolve));
    expect(await eventually(() => descendants(tree.pid!).length === 2, 5000)).toBe(true);
    const pids = [tree.pid!, ...descendants(tree.pid!)];
    expect(await killTreeFrom(dir, { ...process.env, PATH: `:${process.env.PATH}` }, tree.pid!)).toBe(0);
    await exited;
    expect(await eventually(() => pids.every((pid) => !isAlive(pid)), 5000)).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });
});
