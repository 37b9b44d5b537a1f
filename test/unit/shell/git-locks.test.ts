import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gitLockNote, gitLocksLeft } from '../../../workers/shell/git-locks';

let ws: string;
beforeEach(() => {
  ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'git-locks-unit-')));
});
afterEach(() => rmSync(ws, { recursive: true, force: true }));

describe('gitLocksLeft', () => {
  test('finds lock files made since the start in the workspace and one directory down, not older ones', () => {
    const start = Date.now();
    mkdirSync(path.join(ws, '.git'));
    mkdirSync(path.join(ws, 'app', '.git'), { recursive: true });
    writeFileSync(path.join(ws, '.git', 'index.lock'), '');
    writeFileSync(path.join(ws, 'app', '.git', 'HEAD.lock'), '');
    writeFileSync(path.join(ws, 'app', '.git', 'config.lock'), '');
    const old = new Date(start - 60_000);
    utimesSync(path.join(ws, 'app', '.git', 'config.lock'), old, old);
    expect(gitLocksLeft(ws, start).sort()).toEqual([path.join(ws, '.git', 'index.lock'), path.join(ws, 'app', '.git', 'HEAD.lock')].sort());
  });

  test('follows no symlink: a .git or a directory that links elsewhere is not looked into', () => {
    const start = Date.now();
    const elsewhere = path.join(ws, 'elsewhere');
    mkdirSync(path.join(elsewhere, '.git'), { recursive: true });
    writeFileSync(path.join(elsewhere, '.git', 'index.lock'), '');
    // ws/.git links to elsewhere/.git: its lock is named once, by its own path.
    symlinkSync(path.join(elsewhere, '.git'), path.join(ws, '.git'));
    mkdirSync(path.join(ws, 'real', '.git'), { recursive: true });
    writeFileSync(path.join(ws, 'real', '.git', 'index.lock'), '');
    const outside = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'git-locks-outside-')));
    try {
      mkdirSync(path.join(outside, '.git'));
      writeFileSync(path.join(outside, '.git', 'index.lock'), '');
      symlinkSync(outside, path.join(ws, 'linked'));
      expect(gitLocksLeft(ws, start).sort()).toEqual([path.join(ws, 'elsewhere', '.git', 'index.lock'), path.join(ws, 'real', '.git', 'index.lock')].sort());
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  test('names one file or several', () => {
    expect(gitLockNote(['/w/.git/index.lock'])).toContain('held a lock file: /w/.git/index.lock was made while the command ran and is still there');
    expect(gitLockNote(['/w/.git/index.lock', '/w/.git/HEAD.lock'])).toContain('remove them (rm /w/.git/index.lock /w/.git/HEAD.lock)');
  });
});
