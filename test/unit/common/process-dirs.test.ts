import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromiumEnv, freshProfileDir } from '../../../workers/web/browser';
import { fillPipePool, pipeDirectory } from '../../../workers/shell/output-pipes';

/** The pid of a process that has exited (a worker killed with -9 leaves its directories so). */
const gonePid = () => spawnSync(process.execPath, ['-e', '0']).pid;

describe('per-process temporary directories', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'profiles-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("browser profiles: removes those of workers that are gone, keeps live workers' and others' files, and holds Chromium's own temporary files", async () => {
    const dead = path.join(root, `mcpvisor-chromium-${gonePid()}-abc123`);
    const live = path.join(root, `mcpvisor-chromium-${process.pid}-def456`);
    const unrelated = path.join(root, 'mcpvisor-chromium-ABC123');
    for (const dir of [dead, live, unrelated]) mkdirSync(path.join(dir, 'Default'), { recursive: true });
    const profile = freshProfileDir(root);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live) && existsSync(unrelated)).toBe(true);
    expect(path.basename(profile.dir)).toMatch(new RegExp(`^mcpvisor-chromium-${process.pid}-`));
    // Chromium makes its singleton directories (org.chromium.Chromium.*) in TMPDIR: inside the profile.
    expect(chromiumEnv(profile.dir).TMPDIR).toBe(path.join(profile.dir, 'tmp'));
    expect(existsSync(path.join(profile.dir, 'tmp'))).toBe(true);
    await profile.remove();
    expect(readdirSync(root).sort()).toEqual([path.basename(live), path.basename(unrelated)].sort());
  });

  it("shell output pipes: a worker's FIFO directory is named with its pid, and those of workers that are gone are removed", async () => {
    // In the real temporary directory: the module finds it with os.tmpdir() (jest's process.env is not the one node:os reads).
    const dead = path.join(tmpdir(), `mcpvisor-pipes-${gonePid()}-abc123`);
    mkdirSync(dead);
    try {
      await fillPipePool(true);
      expect(existsSync(dead)).toBe(false);
      const dir = pipeDirectory()!;
      expect(path.dirname(dir)).toBe(tmpdir());
      expect(path.basename(dir)).toMatch(new RegExp(`^mcpvisor-pipes-${process.pid}-`));
      expect(readdirSync(dir).length).toBeGreaterThan(0);
    } finally {
      rmSync(dead, { recursive: true, force: true });
    }
  });
});
