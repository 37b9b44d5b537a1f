import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { missingPrograms } from '../../../workers/shell/hidden-programs';

describe('missingPrograms', () => {
  let root: string;
  let hostPath: string;
  const visible = (dir: string) => dir.startsWith(path.join(root, 'opt'));
  const onPath = (dir: string) => dir === path.join(root, 'usr-bin');

  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'missing-programs-'));
    const tools: Array<[string, string, number]> = [
      ['home-bin', 'node', 0o755],
      ['home-bin', 'notes.txt', 0o644],
      ['opt/tool/bin', 'optool', 0o755],
      ['usr-bin', 'git', 0o755],
      ['usr-bin', 'node', 0o755],
    ];
    for (const [dir, name, mode] of tools) {
      mkdirSync(path.join(root, dir), { recursive: true });
      writeFileSync(path.join(root, dir, name), '#!/bin/sh\n');
      chmodSync(path.join(root, dir, name), mode);
    }
    hostPath = ['relative/bin', path.join(root, 'home-bin'), path.join(root, 'opt/tool/bin'), path.join(root, 'usr-bin')].join(':');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test.each([
    { output: 'sh: 1: eval: node: not found', want: [{ name: 'node' }] },
    { output: 'bash: line 1: node: command not found\n', want: [{ name: 'node' }] },
    { output: '/usr/bin/env: ‘node’: No such file or directory', want: [{ name: 'node' }] },
    { output: "/usr/bin/env: 'node': No such file or directory", want: [{ name: 'node' }] },
    { output: '\n> test\n> node t.js\n\nsh: 1: node: not found\n', want: [{ name: 'node' }] },
    { output: 'sh: 1: optool: not found', want: [{ name: 'optool', offPathDir: 'OPT' }] },
    { output: 'sh: 1: git: not found', want: [] },
    { output: 'sh: 1: nosuch: not found', want: [] },
    { output: 'sh: 1: notes.txt: not found', want: [] },
    { output: 'error: file node not found in the index', want: [] },
    { output: 'everything fine', want: [] },
  ])('$output', ({ output, want }) => {
    const expected = want.map((item) => ('offPathDir' in item ? { ...item, offPathDir: path.join(root, 'opt/tool/bin') } : item));
    expect(missingPrograms(output, hostPath, visible, onPath)).toEqual(expected);
  });

  test('names each program once, and none without a PATH', () => {
    expect(missingPrograms('sh: 1: node: not found\nsh: 2: node: not found', hostPath, visible, onPath)).toEqual([{ name: 'node' }]);
    expect(missingPrograms('sh: 1: node: not found', undefined, visible, onPath)).toEqual([]);
  });
});
