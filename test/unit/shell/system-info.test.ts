import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getSystemInfo, listProcesses } from '../../../workers/shell/system-info';

describe('getSystemInfo', () => {
  test('names each figure with its unit and reports the sandbox state', async () => {
    const info = await getSystemInfo(os.tmpdir(), { enabled: true, state: { available: false, reason: 'no bwrap' } }, 30_000);
    expect(info).toMatchObject({
      platform: process.platform,
      hostname: os.hostname(),
      cpuCores: os.cpus().length,
      memoryTotalBytes: os.totalmem(),
      sandbox: { enabled: true, available: false, tool: 'bubblewrap', reason: 'no bwrap' },
    });
    expect(info.memoryFreeBytes).toBeGreaterThan(0);
    expect(info.uptimeSeconds).toBeGreaterThan(0);
    expect(info.disk?.totalBytes).toBeGreaterThan(0);
    expect(info.disk?.availableBytes).toBeLessThanOrEqual(info.disk!.totalBytes);
  });
});

describe('listProcesses', () => {
  test('filters by name without regard to case and reports pid, command, CPU and memory', async () => {
    const child = spawn('sleep', ['31'], { stdio: 'ignore' });
    try {
      const { processes } = await listProcesses('SLEeP', 1000);
      const row = processes.find((entry) => entry.pid === child.pid);
      expect(row).toMatchObject({ name: 'sleep', command: 'sleep 31' });
      expect(row!.memoryRssBytes).toBeGreaterThan(0);
      expect(row!.cpuPercent).toBeGreaterThanOrEqual(0);
      expect(processes.every((entry) => entry.name.toLowerCase().includes('sleep'))).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
  });

  test('without arguments shows each command as its program alone, also where ps would join its argv', async () => {
    const child = spawn('/bin/sh', ['-c', 'sleep 32', 'tool', '--token', 'secret-32'], { stdio: 'ignore' });
    try {
      const listing = await listProcesses('sh', 1000, { withArguments: false });
      expect(listing.argumentsHidden).toBe(true);
      expect(listing.processes.find((entry) => entry.pid === child.pid)).toMatchObject({ name: 'sh', command: '/bin/sh' });
      expect(JSON.stringify(listing)).not.toContain('secret-32');
      expect((await listProcesses('sh', 1000)).argumentsHidden).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });

  test('finds a program whose name is longer than the 15 bytes the kernel keeps, by its whole name', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'long-name-'));
    const program = path.join(dir, 'a-program-with-a-long-name');
    copyFileSync('/bin/sleep', program);
    const child = spawn(program, ['33'], { stdio: 'ignore' });
    try {
      const { processes } = await listProcesses('program-with-a-LONG-name', 1000);
      expect(processes.find((entry) => entry.pid === child.pid)).toMatchObject({ name: 'a-program-with-a-long-name', command: `${program} 33` });
    } finally {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('returns at most limit rows, sorted by pid, and counts the rest', async () => {
    const listing = await listProcesses(undefined, 2);
    expect(listing.processes).toHaveLength(2);
    expect(listing.processes[0].pid).toBeLessThan(listing.processes[1].pid);
    expect(listing.total).toBeGreaterThan(2);
    expect(listing.truncated).toBe(true);
  });
});
