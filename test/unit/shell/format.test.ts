import os from 'node:os';
import { fitProcesses, formatProcesses, formatSystemInfo } from '../../../workers/shell/format';
import { getSystemInfo, type ProcessRow } from '../../../workers/shell/system-info';

describe('formatSystemInfo', () => {
  test('shows a small disk in MiB, not as 0.0 GiB', async () => {
    const info = await getSystemInfo(os.tmpdir(), { enabled: false, state: { available: true } }, 30_000);
    const text = formatSystemInfo({ ...info, disk: { path: '/w', totalBytes: 20 * 1024 ** 2, freeBytes: 4 * 1024 ** 2, availableBytes: 3 * 1024 ** 2 + 1, usedPercent: 85 } });
    expect(text).toContain('disk (/w): 3 MiB available of 20 MiB (85% used)');
    expect(formatSystemInfo({ ...info, disk: { path: '/w', totalBytes: 64 * 1024 ** 3, freeBytes: 1536 * 1024, availableBytes: 1536 * 1024, usedPercent: 99 } })).toContain('disk (/w): 2 MiB available of 64.0 GiB');
  });
});

describe('fitProcesses', () => {
  const row = (pid: number, command: string): ProcessRow => ({ pid, name: 'x', command, cpuPercent: 0, memoryRssBytes: 0, memoryPercent: 0 });

  test('keeps a listing that fits as it is', () => {
    const listing = { processes: [row(1, 'init'), row(2, 'sh')], total: 2, truncated: false, argumentsHidden: false };
    expect(fitProcesses(listing, 64 * 1024)).toEqual({ listing, cutToFit: false });
  });

  test('cuts rows of control characters so that text and structuredContent fit the budget, and says why', () => {
    // 300 control characters, as any command can give itself: ~4 KB a row as text and entry.
    const processes = Array.from({ length: 2000 }, (_, i) => row(i + 1, '\u0001'.repeat(300)));
    const budget = 2 * 1024 * 1024;
    const { listing, cutToFit } = fitProcesses({ processes, total: 2000, truncated: false, argumentsHidden: false }, budget);
    expect(cutToFit).toBe(true);
    expect(listing.truncated).toBe(true);
    expect(listing.total).toBe(2000);
    expect(listing.processes.length).toBeGreaterThan(100);
    expect(listing.processes.length).toBeLessThan(2000);
    const text = formatProcesses(listing, cutToFit);
    const reply = JSON.stringify({ content: [{ type: 'text', text }], structuredContent: listing });
    expect(Buffer.byteLength(reply)).toBeLessThanOrEqual(budget);
    expect(text).toContain(`[first ${listing.processes.length} of 2000 shown: more would not fit in one reply (shell.maxResultBytes); give a filter]`);
  });
});
