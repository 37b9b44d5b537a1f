import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freshProfileDir } from '../../../workers/web/browser';

describe('browser profile directories', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'profiles-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("removes those of workers that are gone, and keeps live workers' and others' files", () => {
    // The pid of a process that has exited (a worker killed with -9 leaves its directory so).
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    const dead = path.join(root, `mcpvisor-chromium-${gone}-abc123`);
    const live = path.join(root, `mcpvisor-chromium-${process.pid}-def456`);
    const unrelated = path.join(root, 'mcpvisor-chromium-ABC123');
    for (const dir of [dead, live, unrelated]) mkdirSync(path.join(dir, 'Default'), { recursive: true });
    const profile = freshProfileDir(root);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live) && existsSync(unrelated)).toBe(true);
    expect(path.basename(profile.dir)).toMatch(new RegExp(`^mcpvisor-chromium-${process.pid}-`));
    profile.remove();
    expect(readdirSync(root).sort()).toEqual([path.basename(live), path.basename(unrelated)].sort());
  });
});
